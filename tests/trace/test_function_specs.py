"""Specs as JAX reads them in the function view (issue 10, items 4 and 5): a single spec, a
pytree prefix, short specs, and in_specs / a mesh without out_specs. Each case is run through
jax.shard_map / jax.jit with the same arguments and compared."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView


@pytest.fixture(scope="module")
def mesh() -> Any:
    return jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))


X = np.arange(64, dtype=np.float32).reshape(8, 8)
Y = np.arange(8, dtype=np.float32)


def index_map(a: Any) -> Any:
    return a.sharding.devices_indices_map(tuple(a.shape))


def same_outputs(v: Any, wants: Any) -> None:
    assert v.error == "", v.error
    wants = jax.tree_util.tree_leaves(wants)
    gots = v.outputs or []
    assert len(gots) == len(wants)
    for got, want in zip(gots, wants, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        assert index_map(got) == index_map(want)


def pair(a: Any, b: Any) -> Any:
    return a * 2, b + 1


def with_dict(d: Any, b: Any) -> Any:
    return d["a"] * 2, d["b"] + b


SHARD_MAP_CASES = [
    # (f, args, in_specs, out_specs): exactly what jax.shard_map is given
    (lambda a: a * 2, (X,), P("x", None), P("x")),  # a single spec for a one-input function
    (lambda a: a * 2, (X,), P("x"), P("x", None)),  # short and long: the same layout
    (pair, (X, Y), P("x"), P("x")),  # a single spec for every input and every output
    (pair, (X, Y), (P("x"), P()), (P("x"), P())),  # one per argument
    (with_dict, ({"a": X, "b": Y}, Y), (P("x"), P("x")), P("x")),  # a prefix over a dict
    (with_dict, ({"a": X, "b": Y}, Y), ({"a": P(None, "x"), "b": P()}, P()), (P(None, "x"), P())),
    (lambda a: jax.lax.psum(a.sum(0), "x"), (X,), P("x"), P()),  # P() for a 1-d output
]


@pytest.mark.parametrize("case", range(len(SHARD_MAP_CASES)))
def test_shard_map_specs_as_jax_reads_them(mesh: Any, case: int) -> None:
    f, args, in_specs, out_specs = SHARD_MAP_CASES[case]
    want = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs))(*args)
    v = ShardView(
        f, *args, mode="shard_map", mesh_shape=[8], in_specs=in_specs, out_specs=out_specs
    )
    same_outputs(v, want)
    assert len(v.in_specs) == len(jax.tree_util.tree_leaves(args))
    assert len(v.out_specs) == len(jax.tree_util.tree_leaves(want))


JIT_CASES = [
    (lambda a: a * 2, (X,), P("x", None), None),
    (pair, (X, Y), P("x"), P()),  # one sharding for every input / output
    (pair, (X, Y), (P(None, "x"), P("x")), (P("x"), None)),  # one per argument; None: XLA's
    (with_dict, ({"a": X, "b": Y}, Y), (P("x"), None), P("x")),
    (lambda a: a.sum(0), (X,), P("x"), P()),  # P() for a 1-d output: padded with None
]


@pytest.mark.parametrize("case", range(len(JIT_CASES)))
def test_jit_specs_as_jax_reads_them(mesh: Any, case: int) -> None:
    f, args, in_specs, out_specs = JIT_CASES[case]
    kw = {} if out_specs is None else {"out_shardings": out_specs}
    with jax.set_mesh(mesh):  # jax.jit takes PartitionSpecs under a context mesh
        want = jax.jit(f, in_shardings=in_specs, **kw)(*args)
    extra = {} if out_specs is None else {"out_specs": out_specs}
    v = ShardView(f, *args, mesh_shape=[8], in_specs=in_specs, **extra)
    same_outputs(v, want)


def test_a_list_of_one_spec_per_leaf_is_the_views_own_form(mesh: Any) -> None:
    v = ShardView(with_dict, {"a": X, "b": Y}, Y, in_specs=[["x", None], None, ["x"]])
    assert v.in_specs == [["x", None], [None], ["x"]]
    v.set_layout(in_specs=P("x"))  # a single spec from Python: every input
    assert v.in_specs == [["x", None], ["x"], ["x"]]
    v.set_layout(out_specs=P())  # and every output
    assert v.out_specs == [[None, None], [None]]
    v.in_specs = P()  # the trait takes one too (it goes through set_layout)
    assert v.in_specs == [[None, None], [None], [None]]
    v.in_specs = (P(), None)  # another spelling of what is shown: shown normalized
    assert v.in_specs == [[None, None], [None], [None]] and v.error == ""
    with pytest.raises(ValueError, match="axis 'y' is not in the mesh"):
        v.in_specs = P(("x", "y"))  # wrong for this mesh: refused, nothing changed
    assert v.in_specs == [[None, None], [None], [None]]


def test_a_spec_tree_jax_refuses_is_refused_in_jax_words(mesh: Any) -> None:
    with pytest.raises(ValueError, match="pytree prefix of the arguments"):
        ShardView(pair, X, Y, in_specs=(P("x"),))
    with pytest.raises(ValueError, match="pytree structure error"):  # what JAX says too
        jax.shard_map(pair, mesh=mesh, in_specs=(P("x"),), out_specs=P())(X, Y)


# ------------------------------------------------------------------ item 4
def test_jit_in_specs_without_out_specs_is_xlas_choice(mesh: Any) -> None:
    def f(a: Any, b: Any) -> Any:
        return a @ a.T, (a * b).sum(1)

    v = ShardView(f, X, Y, in_specs=[P("x"), P()])
    assert v.out_specs == [None, None]
    c = (
        jax.jit(f, in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())))
        .lower(X, Y)
        .compile()
    )
    got = [
        s.devices_indices_map((8, 8) if i == 0 else (8,))
        for i, s in enumerate(v.trace.out_shardings)
    ]  # type: ignore[union-attr]
    want = [
        s.devices_indices_map((8, 8) if i == 0 else (8,))
        for i, s in enumerate(jax.tree_util.tree_leaves(c.output_shardings))
    ]
    assert got == want


@pytest.mark.parametrize(
    "kw",
    [
        {"mesh_shape": [4, 2], "axis_names": ["a", "b"]},
        {"axis_names": ["data"]},
        {"mesh_shape": [2, 4]},
    ],
)
def test_jit_mesh_without_specs(kw: dict[str, Any]) -> None:
    def f(a: Any) -> Any:
        return jnp.tanh(a) @ a

    v = ShardView(f, X, **kw)
    assert v.error == "" and v.out_specs == [None]
    names = kw.get("axis_names") or (["x", "y"] if len(kw.get("mesh_shape", [8])) == 2 else ["x"])
    assert v.axis_names == names
    mesh = jax.make_mesh(
        tuple(v.mesh_shape), tuple(names), axis_types=(AxisType.Auto,) * len(names)
    )
    with jax.set_mesh(mesh):
        want = jax.jit(f, in_shardings=NamedSharding(mesh, P()))(X)
    same_outputs(v, want)


def test_shard_map_in_specs_without_out_specs(mesh: Any) -> None:
    def f(a: Any) -> Any:
        return a * 2

    v = ShardView(f, X, mode="shard_map", in_specs=[P("x")])  # the elementwise default
    assert v.out_specs == [["x", None]]
    same_outputs(v, jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(X))


def test_shard_map_default_out_specs_that_jax_refuses_show_jaxs_message(mesh: Any) -> None:
    def f(a: Any) -> Any:
        return a.sum(0)  # varies over x: a replicated out_spec is refused

    v = ShardView(f, X, mode="shard_map", in_specs=[P("x")])
    with pytest.raises(ValueError, match="out_specs") as e:  # what jax.shard_map says
        jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P())(X)
    first = str(e.value).splitlines()[0]  # JAX names its own wrapper of f there
    assert first.split(" was given ")[1][:60] in v.error
    assert "out_specs not given: tried [P(None)]; jax.shard_map requires out_specs" in v.error
    with pytest.raises(TypeError, match="out_specs"):  # jax.shard_map without them
        jax.shard_map(f, mesh=mesh, in_specs=P("x"))  # type: ignore[call-arg]
    v.set_layout(out_specs=[P("x")])  # what fixes it there fixes it here
    want = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(X)
    same_outputs(v, want)


def test_none_specs_are_jits_unspecified(mesh: Any) -> None:
    """in_specs=None: each input's own sharding (jax.jit's default); out_specs=None: XLA's."""
    xs = jax.device_put(X, NamedSharding(mesh, P(None, "x")))

    def f(a: Any, b: Any) -> Any:
        return a @ a, b * 2

    v = ShardView(f, xs, Y, in_specs=None, out_specs=None)
    assert v.in_specs == [[None, "x"], [None]] and v.out_specs == [None, None]
    same_outputs(v, jax.jit(f)(xs, Y))
    v.set_layout(in_specs=[P("x"), P("x")], out_specs=[P("x"), P()])
    v.set_layout(in_specs=None, out_specs=None)  # back to the inputs' own, XLA's outputs
    assert v.in_specs == [[None, "x"], [None]] and v.out_specs == [None, None]
    same_outputs(v, jax.jit(f)(xs, Y))


@pytest.mark.parametrize(
    "kw",
    [{"mesh_shape": [2, 4], "axis_names": ["x", "y"]}, {"axis_names": ["i"]}, {"mesh_shape": [8]}],
)
def test_shard_map_mesh_without_specs_runs_as_jax_shard_map(mesh: Any, kw: dict[str, Any]) -> None:
    """The view's choice of in/out specs, given to jax.shard_map itself, computes the same."""
    xs = jax.device_put(X, NamedSharding(mesh, P("x")))

    def f(a: Any) -> Any:
        return jnp.exp(a) - 1

    v = ShardView(f, xs, mode="shard_map", **kw)
    assert v.error == "" and v.trace is not None
    names = tuple(v.axis_names)
    m = jax.make_mesh(tuple(v.mesh_shape), names, axis_types=(AxisType.Auto,) * len(names))
    ins = P(*[tuple(e) if isinstance(e, list) else e for e in v.in_specs[0]])
    outs = P(*[tuple(e) if isinstance(e, list) else e for e in v.out_specs[0]])
    want = jax.jit(jax.shard_map(f, mesh=m, in_specs=ins, out_specs=outs))(xs)
    same_outputs(v, want)
    if kw.get("axis_names") == ["i"]:  # the input's own spec names 'x', not on this mesh
        assert v.in_specs == [[None, None]]


@pytest.mark.parametrize("mode", ["shard_map", "jit"])
@pytest.mark.parametrize("short", [P(), P(None), [], [None]])
def test_short_out_specs_are_padded_as_jax_pads_them(mode, short):
    """out_specs=[P()] for a 1-d output means replicated, as in JAX (it was refused: "the spec
    has 0 entries; the output is 1-d"); the view then shows JAX's own result."""

    def body(x):
        return jax.lax.psum(jax.lax.psum(x, "i"), "i") if mode == "shard_map" else x * 2

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("i",))  # a 4-device kernel's
    put = jax.device_put(jnp.arange(4.0), NamedSharding(mesh, P("i")))
    v = ShardView(
        body, put, mode=mode, mesh_shape=[4], axis_names=["i"], in_specs=[P("i")], out_specs=[short]
    )
    assert v.error == "" and v.out_specs == [[None]]
    if mode == "shard_map":
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("i"),), out_specs=P()))
    else:
        f = jax.jit(body, out_shardings=NamedSharding(mesh, P()))
    want = f(put)
    (got,) = v.outputs
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert got.sharding.is_equivalent_to(want.sharding, 1)


@pytest.mark.parametrize("short", [P(), P("x"), ["x"], [], [("x", "y")]])
def test_short_specs_everywhere_mean_what_jax_means(short: Any) -> None:
    """A spec shorter than the rank is padded with None everywhere, as JAX pads it: in_specs
    (shard_map and jit), set_layout, and the array view's spec control; the layouts equal
    JAX's own for the same short PartitionSpec (issue 23, defect 4)."""
    m = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(64.0).reshape(8, 8)
    pspec = P(*short)
    want = NamedSharding(m, pspec)

    def body(a: Any) -> Any:
        return a * 2

    sm = jax.jit(jax.shard_map(body, mesh=m, in_specs=(pspec,), out_specs=pspec))
    kw: dict[str, Any] = {"mesh_shape": [2, 4], "axis_names": ["x", "y"]}
    v = ShardView(body, x, mode="shard_map", in_specs=[short], out_specs=[short], **kw)
    assert v.error == "", v.error
    same_outputs(v, [sm(jax.device_put(x, want))])
    (lf,) = v.trace.input_leaves
    assert lf.sharding.devices_indices_map((8, 8)) == want.devices_indices_map((8, 8))
    j = ShardView(body, x, in_specs=[short], out_specs=[short], **kw)
    assert j.error == "", j.error
    same_outputs(j, [jax.jit(body, out_shardings=want)(jax.device_put(x, want))])
    j.set_layout(in_specs=[[]], out_specs=[None])
    j.set_layout(in_specs=[list(short)], out_specs=[list(short)])
    assert j.error == "" and j.in_specs == j.out_specs
    same_outputs(j, [jax.jit(body, out_shardings=want)(jax.device_put(x, want))])
    a = ShardView(jax.device_put(x, NamedSharding(m, P(None, "y"))))
    a.spec = list(short)
    assert a.error == "", a.error
    got = a.layout
    put = jax.device_put(x, want)
    assert {d: got.blocks[b].index for d, b in got.device_block.items()} == {
        d.id: tuple(s.indices(n)[:2] for s, n in zip(i, (8, 8), strict=True))
        for d, i in put.sharding.devices_indices_map((8, 8)).items()
    }
