"""The function view compiles on the inputs' own mesh (issue 10, items 6 and 7): a mesh in a
shuffled device order and sub-meshes of some devices, outputs where jax.jit(f) puts them."""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView

AUTO2 = (AxisType.Auto, AxisType.Auto)


def index_map(a: Any) -> Any:
    return a.sharding.devices_indices_map(tuple(a.shape))


def check_like_jit(v: Any, f: Any, *args: Any) -> None:
    """v's outputs: the values and device placement of jax.jit(f)(*args); its collectives: the
    kinds in JAX's own compiled HLO."""
    assert v.error == "" and v.trace is not None and v.trace.ran
    wants = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    gots = v.outputs or []
    assert len(gots) == len(wants)
    for got, want in zip(gots, wants, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        assert index_map(got) == index_map(want)
    text = jax.jit(f).lower(*args).compile().as_text()
    for c in v.trace.collectives:
        assert c.kind in text


@pytest.mark.parametrize("seed", [0, 1])
def test_shuffled_device_order_is_kept(seed: int) -> None:
    devices = np.random.RandomState(seed).permutation(np.array(jax.devices()))
    mesh = jax.make_mesh((4, 2), ("x", "y"), devices=list(devices), axis_types=AUTO2)
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x", "y")))

    def f(a: Any) -> Any:
        return (a * 2).sum(1), a @ a.T

    v = ShardView(f, x)
    check_like_jit(v, f, x)
    assert list(v.trace.in_shardings[0].mesh.devices.flat) == list(devices)  # type: ignore[union-attr]
    assert [c.kind for c in v.trace.collectives]  # the sum over y and the matmul communicate
    # collectives are named by the mesh axes in the shuffled order too
    w = ShardView(lambda a: (a * 2).sum(1), x)
    assert w.trace is not None
    assert [(c.kind, c.axes, c.group_size) for c in w.trace.collectives] == [
        ("all-reduce", ("y",), 2)
    ]
    groups = {frozenset(g) for g in w.trace.collectives[0].groups}
    assert groups == {frozenset(int(d.id) for d in row) for row in mesh.devices}
    # A changed mesh shape is the user's own: jax.make_mesh's order; back to 4x2: the own again.
    v.set_layout(mesh_shape=[2, 4])
    default = jax.make_mesh((2, 4), ("x", "y"), axis_types=AUTO2)
    assert v.trace is not None
    assert v.trace.in_shardings[0].mesh.devices.tolist() == default.devices.tolist()
    v.set_layout(mesh_shape=[4, 2])
    assert list(v.trace.in_shardings[0].mesh.devices.flat) == list(devices)
    check_like_jit(v, f, x)


def test_shuffled_order_shard_map_matches_jax() -> None:
    devices = list(np.random.RandomState(3).permutation(np.array(jax.devices())))
    mesh = jax.make_mesh((8,), ("i",), devices=devices, axis_types=(AxisType.Auto,))
    x = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("i")))

    def body(a: Any) -> Any:
        return jax.lax.ppermute(a, "i", [(j, (j + 1) % 8) for j in range(8)])

    v = ShardView(body, x, mode="shard_map", out_specs=[P("i")])
    want = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i")))(x)
    (got,) = v.outputs or []
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert index_map(got) == index_map(want)
    assert [c.kind for c in v.trace.collectives] == ["collective-permute"]  # type: ignore[union-attr]


@pytest.mark.parametrize("ids", [[0, 1], [5, 2]])
def test_inputs_on_two_of_eight_devices(ids: list[int]) -> None:
    devs = [jax.devices()[i] for i in ids]
    mesh = jax.make_mesh((2,), ("x",), devices=devs, axis_types=(AxisType.Auto,))
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x")))

    def f(a: Any) -> Any:
        return jnp.sin(a).sum(0), a * 3

    v = ShardView(f, x)
    assert v.mesh_shape == [2] and v.in_specs == [["x", None]]
    check_like_jit(v, f, x)
    assert {d.id for o in v.outputs or [] for d in o.sharding.device_set} == set(ids)
    assert [c.kind for c in v.trace.collectives] == ["all-reduce"]  # type: ignore[union-attr]
    # the controls offer the two devices' meshes as well as all eight
    assert [2] in v._trace_options["factorizations"]["1"]
    assert [8] in v._trace_options["factorizations"]["1"]
    v.set_layout(mesh_shape=[8], in_specs=[["x", None]])  # every device: a mesh of the view's
    assert v.error == "" and v.trace is not None
    assert {d.id for d in v.trace.in_shardings[0].device_set} == set(range(8))
    v.set_layout(mesh_shape=[1, 2], axis_names=["a", "b"], in_specs=[[None, "b"]])
    assert {d.id for d in v.trace.in_shardings[0].device_set} == set(ids)
    with pytest.raises(ValueError, match="own mesh of 2 devices"):
        v.set_layout(mesh_shape=[3], axis_names=["x"])
    y = jax.device_put(jnp.ones((4, 7)), NamedSharding(mesh, P("x")))
    w = ShardView(lambda a: a * 2, y)
    with pytest.raises(ValueError, match=r"pad a to 4×8 first"):  # padding for the sub-mesh
        w.set_layout(in_specs=[[None, "x"]])


def test_constraint_on_a_sub_mesh() -> None:
    sub = jax.make_mesh((2,), ("x",), devices=jax.devices()[3:5], axis_types=(AxisType.Auto,))

    def g(a: Any) -> Any:
        return jax.lax.with_sharding_constraint(a * 2, NamedSharding(sub, P("x"))) + 1

    a = np.ones((8, 8), np.float32)
    v = ShardView(g, a)
    assert v.mesh_shape == [2]
    check_like_jit(v, g, a)
    assert v.trace is not None and [c.kind for c in v.trace.constraints] == [
        "with_sharding_constraint"
    ]
    # every device: JAX refuses the constraint's devices, and the view says so in JAX's words
    with pytest.raises(ValueError, match="incompatible devices"):
        v.set_layout(mesh_shape=[8])
    assert v.mesh_shape == [2] and v.trace.ran  # the last good view stays


def test_constraint_mesh_in_another_order_and_axis_names() -> None:
    devices = list(np.random.RandomState(7).permutation(np.array(jax.devices())))
    mesh = jax.make_mesh((2, 4), ("data", "model"), devices=devices, axis_types=AUTO2)

    def g(a: Any, w: Any) -> Any:
        h = lax.with_sharding_constraint(a @ w, NamedSharding(mesh, P("data", "model")))
        return jnp.tanh(h).sum(1)

    a, w = np.ones((8, 16), np.float32), np.full((16, 8), 0.1, np.float32)
    v = ShardView(g, a, w)
    assert v.mesh_shape == [2, 4] and v.axis_names == ["data", "model"]
    check_like_jit(v, g, a, w)
    # the view's in_specs are laid out on that mesh too: the same as jax.jit with them
    v.set_layout(in_specs=[P("data"), P(None, "model")])
    shardings = (NamedSharding(mesh, P("data")), NamedSharding(mesh, P(None, "model")))
    want = jax.jit(g, in_shardings=shardings)(a, w)
    (got,) = v.outputs or []
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert index_map(got) == index_map(want)


def the_code_runs_the_same(v: Any, f: Any, args: tuple[Any, ...]) -> None:
    """view.code, run as written, lays out and computes what the view shows."""
    ns: dict[str, Any] = {f.__name__: f}
    exec(v.code, ns)
    mesh = ns["mesh"]
    assert mesh.devices.tolist() == v.trace.in_shardings[0].mesh.devices.tolist()
    with jax.set_mesh(mesh):
        outs = jax.tree_util.tree_leaves(ns[f"{f.__name__}_sharded"](*args))
    for got, want in zip(outs, v.outputs or [], strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        assert index_map(got) == index_map(want)


def scaled(a: Any) -> Any:
    return jnp.cos(a) * 3, a.sum(0)


@pytest.mark.parametrize("where", ["shuffled", "sub-mesh"])
def test_copy_as_code_keeps_the_mesh(where: str) -> None:
    if where == "shuffled":
        devs = list(np.random.RandomState(5).permutation(np.array(jax.devices())))
        mesh = jax.make_mesh((2, 4), ("x", "y"), devices=devs, axis_types=AUTO2)
        spec = P("x", "y")
    else:
        devs = [jax.devices()[6], jax.devices()[1]]
        mesh = jax.make_mesh((2,), ("x",), devices=devs, axis_types=(AxisType.Auto,))
        spec = P(None, "x")
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, spec))
    v = ShardView(scaled, x)
    check_like_jit(v, scaled, x)
    the_code_runs_the_same(v, scaled, (x,))


def test_inputs_on_a_five_axis_mesh_keep_it() -> None:
    mesh = jax.make_mesh(
        (2, 2, 2, 1, 1), ("a", "b", "c", "d", "e"), axis_types=(AxisType.Explicit,) * 5
    )
    x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P(("a", "b"), "c")))

    def f(a: Any) -> Any:
        return a.sum(0)

    v = ShardView(f, x)
    assert v.mesh_shape == [2, 2, 2, 1, 1] and v.in_specs == [[["a", "b"], "c"]]
    check_like_jit(v, f, x)
    v.set_layout(in_specs=[["a", None]])
    shard = NamedSharding(mesh, P("a", None))
    want = jax.jit(f)(jax.device_put(x, shard))
    (got,) = v.outputs or []
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert index_map(got) == index_map(want)
    assert v.trace is not None and [c.axes for c in v.trace.collectives] == [("a",)]
    with pytest.raises(ValueError, match="axis name 'a' is used twice"):
        v.set_layout(axis_names=["a", "a", "c", "d", "e"])


def test_an_array_committed_to_one_device_runs_there() -> None:
    c = jax.device_put(np.arange(8.0, dtype=np.float32), jax.devices()[3])
    u = jnp.ones(8)  # uncommitted: jax.jit follows the committed one

    def f(a: Any, b: Any) -> Any:
        return a * b + 1

    v = ShardView(f, c, u)
    assert v.mesh_shape == [1]
    check_like_jit(v, f, c, u)
    assert {d.id for o in v.outputs or [] for d in o.sharding.device_set} == {3}
    v.set_layout(mesh_shape=[8], in_specs=[P("x"), P()])  # every device: the user's choice
    assert v.error == "" and v.trace is not None
    assert len(v.trace.out_shardings[0].device_set) == 8
    plain = ShardView(f, u, u)  # nothing committed: the view's mesh of every device
    assert plain.mesh_shape == [8]


@pytest.mark.parametrize("where", ["make_mesh", "shuffled", "sub-mesh"])
def test_a_function_calling_shard_map_on_its_own_mesh(where: str) -> None:
    """jax.jit(shard_map(..., mesh=m)) of numpy inputs: JAX runs it on m; so does the view."""
    if where == "sub-mesh":
        m = jax.make_mesh((2,), ("y",), devices=jax.devices()[4:6], axis_types=(AxisType.Auto,))
        spec = P(None, "y")
    else:
        devs = jax.devices()
        if where == "shuffled":
            devs = list(np.random.RandomState(11).permutation(np.array(devs)))
        m = jax.make_mesh((4, 2), ("x", "y"), devices=devs, axis_types=AUTO2)
        spec = P("x", "y")

    @jax.jit
    @partial(jax.shard_map, mesh=m, in_specs=spec, out_specs=spec)
    def fwd(a: Any) -> Any:
        return lax.psum(a, "y") + lax.axis_index("y")

    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    v = ShardView(fwd, a)
    assert v.mesh_shape == list(m.devices.shape)
    check_like_jit(v, fwd, a)
    assert [(c.kind, c.axes) for c in v.trace.collectives] == [("all-reduce", ("y",))]  # type: ignore[union-attr]


def test_shape_dtype_structs_on_a_shuffled_sub_mesh_compile_there() -> None:
    devs = [jax.devices()[7], jax.devices()[1], jax.devices()[4], jax.devices()[0]]
    m = jax.make_mesh((2, 2), ("x", "y"), devices=devs, axis_types=AUTO2)
    s = jax.ShapeDtypeStruct((8, 8), jnp.float32, sharding=NamedSharding(m, P("x", "y")))

    def f(a: Any) -> Any:
        return a.sum(1)

    v = ShardView(f, s)
    assert v.trace is not None and not v.trace.ran and v.mesh_shape == [2, 2]
    c = jax.jit(f).lower(s).compile()
    for got, want, shape in (
        (v.trace.in_shardings[0], c.input_shardings[0][0], (8, 8)),
        (v.trace.out_shardings[0], c.output_shardings, (8,)),
    ):
        assert got.devices_indices_map(shape) == want.devices_indices_map(shape)
    assert [c_.kind for c_ in v.trace.collectives] == ["all-reduce"]
    assert "all-reduce" in c.as_text()
