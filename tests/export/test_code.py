"""view.code: the snippet, run, reproduces the layout shown (checked against JAX itself)."""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model.spec import normalize

AUTO, EXPLICIT = AxisType.Auto, AxisType.Explicit


def _index_map(sharding: Any, shape: tuple[int, ...]) -> dict[int, Any]:
    """device id -> the (start, stop) ranges it holds: comparable across sharding classes."""
    return {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(idx, shape, strict=True))
        for d, idx in sharding.devices_indices_map(shape).items()
    }


def _run_array_code(code: str, x: Any) -> Any:
    ns: dict[str, Any] = {"x": x}
    exec(code, ns)
    return ns["x"]


def _same_layout(got: Any, want: Any) -> None:
    shape = tuple(want.shape)
    assert _index_map(got.sharding, shape) == _index_map(want.sharding, shape)
    assert got.sharding.memory_kind == want.sharding.memory_kind
    if isinstance(want.sharding, NamedSharding):
        gm, wm = got.sharding.mesh, want.sharding.mesh
        assert gm.axis_names == wm.axis_names
        assert tuple(gm.axis_types) == tuple(wm.axis_types)
        assert [d.id for d in gm.devices.flat] == [d.id for d in wm.devices.flat]
        n = len(shape)
        assert normalize(got.sharding.spec, n) == normalize(want.sharding.spec, n)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _devices(order: str) -> list[Any]:
    devs = jax.devices()
    if order == "reversed":
        return devs[::-1]
    if order == "shuffled":
        return [devs[i] for i in (3, 0, 6, 1, 7, 2, 5, 4)]
    return list(devs)


LAYOUTS = [
    # (mesh shape, names, types, device order, spec, memory kind)
    ((2, 4), ("x", "y"), (AUTO, AUTO), "default", P("x", "y"), "device"),
    ((2, 4), ("x", "y"), (EXPLICIT, EXPLICIT), "default", P("y", None), "device"),
    ((2, 4), ("x", "y"), (EXPLICIT, AUTO), "reversed", P(None, ("x", "y")), "device"),
    ((8,), ("data",), (AUTO,), "shuffled", P("data"), "device"),
    ((2, 2, 2), ("a", "b", "c"), (AUTO, EXPLICIT, AUTO), "reversed", P(("c", "a"), "b"), "device"),
    ((4, 2), ("x", "y"), (AUTO, AUTO), "default", P("x"), "pinned_host"),
    ((1, 8), ("p", "q"), (EXPLICIT, EXPLICIT), "default", P(None, None), "pinned_host"),
    ((2, 4), ("model parallel", "d-p"), (AUTO, AUTO), "shuffled", P("d-p", None), "device"),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda t: f"{t[0]}-{t[3]}-{t[4]}-{t[5]}")
def test_array_code_reproduces_the_layout(layout: Any) -> None:
    shape, names, types, order, spec, kind = layout
    mesh = Mesh(np.array(_devices(order)).reshape(shape), names, axis_types=types)
    host = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    want = jax.device_put(host, NamedSharding(mesh, spec, memory_kind=kind))
    view = ShardView(want)
    _same_layout(_run_array_code(view.code, jnp.asarray(host)), want)
    # make_mesh is written only where it gives this very device order
    assert ("jax.make_mesh" in view.code) == (order == "default")


def test_array_code_of_a_sub_mesh() -> None:
    mesh = Mesh(np.array(jax.devices()[5:1:-1]).reshape(2, 2), ("x", "y"))
    want = jax.device_put(np.ones((4, 6), np.int32), NamedSharding(mesh, P("y", "x")))
    view = ShardView(want)
    got = _run_array_code(view.code, np.ones((4, 6), np.int32))
    _same_layout(got, want)
    assert "[5, 4, 3, 2]" in view.code


def test_array_code_follows_the_controls(arr: Any) -> None:
    view = ShardView(arr)
    for changes in (
        {"spec": ["y", "x"]},
        {"mesh_shape": [8], "axis_names": ["d"], "axis_types": ["explicit"], "spec": [None, "d"]},
        {"memory_kind": "pinned_host"},
        {"mesh_shape": [2, 2, 2], "axis_names": ["x", "y", "z"], "spec": [["x", "z"], None]},
    ):
        view.set_layout(**changes)
        _same_layout(_run_array_code(view.code, np.asarray(arr)), view.array)


def test_array_code_of_a_single_device_array() -> None:
    want = jax.device_put(np.arange(6.0), SingleDeviceSharding(jax.devices()[3]))
    view = ShardView(want)
    _same_layout(_run_array_code(view.code, np.arange(6.0)), want)


def test_array_code_of_a_scalar() -> None:
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)
    want = jax.device_put(np.float32(2.5), NamedSharding(mesh, P()))
    view = ShardView(want)
    _same_layout(_run_array_code(view.code, np.float32(2.5)), want)


def _compiled(code: str, f: Any, args: tuple[Any, ...]) -> Any:
    ns: dict[str, Any] = {f.__name__: f}
    exec(code, ns)
    with jax.set_mesh(ns["mesh"]):
        fs = ns[f"{f.__name__}_sharded"]
        return fs.lower(*args).compile(), fs(*args)


def _same_shardings(got: list[Any], want: list[Any], shapes: list[tuple[int, ...]]) -> None:
    assert len(got) == len(want)
    for g, w, s in zip(got, want, shapes, strict=True):
        assert _index_map(g, s) == _index_map(w, s)


def _check_function_code(view: Any, f: Any, args: tuple[Any, ...]) -> None:
    assert not view.error, view.error
    compiled, outs = _compiled(view.code, f, args)
    res = view.trace
    _same_shardings(
        jax.tree_util.tree_leaves(compiled.input_shardings[0]), res.in_shardings, res.in_shapes
    )
    _same_shardings(
        jax.tree_util.tree_leaves(compiled.output_shardings), res.out_shardings, res.out_shapes
    )
    for g, w in zip(jax.tree_util.tree_leaves(outs), view.outputs, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def layer(a: Any, n: int, params: Any) -> Any:
    h = a @ params["w"] + params["b"]
    return {"h": h * n, "stats": (h.sum(), h.max(axis=0))}


def test_jit_code_with_pytrees_static_args_and_out_shardings() -> None:
    a = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    params = {"w": np.eye(8, dtype=np.float32), "b": np.ones(8, np.float32)}
    view = ShardView(layer, a, 3, params, mesh_shape=[4, 2], axis_names=["x", "y"])
    view.set_layout(in_specs=[["x", None], ["y"], [None, "y"]])  # a, b, w
    _check_function_code(view, layer, (a, 3, params))
    assert "out_shardings" not in view.code  # XLA chose every output
    view.set_layout(out_specs=[["y", "x"], None, ["x"]])
    assert "static_argnums=(1,)" in view.code
    _check_function_code(view, layer, (a, 3, params))


def double(a: Any, b: Any) -> Any:
    return a * 2 + b, jax.lax.psum(a.sum(), ("x", "y"))


def test_shard_map_code() -> None:
    a = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    view = ShardView(
        double,
        a,
        a,
        mode="shard_map",
        mesh_shape=[2, 4],
        axis_names=["x", "y"],
        in_specs=[["x", "y"], ["x", "y"]],
        out_specs=[["x", "y"], []],
    )
    assert "jax.shard_map(double, mesh=mesh" in view.code
    _check_function_code(view, double, (a, a))


def test_function_code_over_explicit_axes(arr: Any) -> None:
    def scale(x: Any) -> Any:
        return x * 2

    view = ShardView(scale, arr, axis_types=["explicit", "explicit"])
    view.set_layout(in_specs=[["y", "x"]], out_specs=[["x", None]])
    assert "AxisType.Explicit, AxisType.Explicit" in view.code
    _check_function_code(view, scale, (np.asarray(arr),))


def test_function_code_is_empty_before_a_compile(arr: Any) -> None:
    def bad(x: Any) -> Any:
        raise RuntimeError("no")

    assert ShardView(bad, arr).code == ""


def test_the_payload_carries_the_code_for_the_copy_button(arr: Any) -> None:
    view = ShardView(arr)
    assert view._layout["code"] == view.code != ""
    view.spec = ["y", None]
    assert view._layout["code"] == view.code
    assert "P('y', None)" in view._layout["code"]
    assert view.variant(view.propose({"spec": [None, "x"]}), key=99)["layout"]["code"].endswith(
        "NamedSharding(mesh, P(None, 'x'), memory_kind='device'))"
    )

    def scale(x: Any) -> Any:
        return x * 2

    fv = ShardView(scale, arr)
    assert fv._trace["code"] == fv.code != ""
    fv.set_layout(in_specs=[["y", "x"]])
    assert fv._trace["code"] == fv.code
    assert "P('y', 'x')" in fv.code
    assert all(leaf["layout"]["code"] == "" for leaf in fv._trace["inputs"])


def mix(a: Any, *, b: Any, scale: float) -> Any:
    return {"y": a * scale + b}


def test_function_code_with_array_keyword_arguments() -> None:
    a, b = np.arange(32.0, dtype=np.float32).reshape(4, 8), np.ones((4, 8), np.float32)
    view = ShardView(mix, a, b=b, scale=2.0, mesh_shape=[2, 4], axis_names=["x", "y"])
    view.set_layout(in_specs=[["x", None], [None, "y"]], out_specs=[["y", "x"]])
    assert "def mix_flat(args, kwargs):" in view.code
    ns: dict[str, Any] = {"mix": lambda a, *, b, scale: mix(a, b=b, scale=2.0)}
    exec(view.code, ns)
    with jax.set_mesh(ns["mesh"]):
        fs = ns["mix_sharded"]
        compiled = fs.lower((a,), {"b": b, "scale": 2.0}).compile()
        out = fs((a,), {"b": b, "scale": 2.0})
    res = view.trace
    got_in = jax.tree_util.tree_leaves(compiled.input_shardings[0])
    # scale is traced in the snippet (a leaf of its own): compare the array leaves
    _same_shardings([got_in[0], got_in[1]], res.in_shardings, res.in_shapes)
    _same_shardings(
        jax.tree_util.tree_leaves(compiled.output_shardings), res.out_shardings, res.out_shapes
    )
    np.testing.assert_allclose(np.asarray(out["y"]), np.asarray(view.outputs[0]))
