"""Function views of odd inputs (issue 10, items 3 and 9): PRNG keys, arguments f does not use,
constant and None results, float0, int4, tracers. Each checked against calling jax.jit itself."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.trace.result import CONSTANT_NOTE, UNUSED_NOTE


@pytest.fixture(scope="module")
def mesh() -> Any:
    return jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,) * 1)


@pytest.fixture(scope="module")
def x(mesh: Any) -> Any:
    return jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x")))


def leaves(tree: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(tree)


def same_shardings(got: list[Any], want: list[Any], shapes: list[Any]) -> None:
    """Each pair places the same indices on the same devices (specs may differ in trailing
    Nones, which NamedSharding's == tells apart: over Auto axes jax.jit writes its outputs'
    P('x') for an input's P('x'), and P('x', None) for the view's P('x', None); over
    Explicit axes, the default of jax.make_mesh from 0.9, both P('x', None))."""
    assert len(got) == len(want) == len(shapes)
    for g, w, shape in zip(got, want, shapes, strict=True):
        assert g.devices_indices_map(tuple(shape)) == w.devices_indices_map(tuple(shape))


def jax_jit_error(f: Any, *args: Any) -> str:
    """The first line of the error jax.jit(f) raises compiling for args ("" when it compiles).

    jax 0.9 cannot draw random bits from a key array sharded over an Explicit mesh axis (its
    threefry lowering checks P('x', None) against the empty abstract mesh: "Resource axis: x
    of P('x', None) is not found in mesh: ()."); jax 0.8 and 0.10 can. The views say what the
    JAX they run on says."""
    try:
        jax.jit(f).lower(*args).compile()
    except Exception as e:
        return str(e).splitlines()[0]
    return ""


def same_placement(a: Any, b: Any) -> None:
    """a and b: the same shape, values and devices_indices_map."""
    assert a.shape == b.shape
    assert a.sharding.devices_indices_map(a.shape) == b.sharding.devices_indices_map(b.shape)


# ------------------------------------------------------------------ item 3: PRNG keys
def test_prng_key_argument_is_viewed_like_any_array() -> None:
    def f(k: Any) -> Any:
        return jax.random.normal(k, (8,))

    key = jax.random.key(0)
    v = ShardView(f, key)
    assert v.error == ""
    assert v.trace is not None and v.trace.ran
    (inp,) = v.trace.input_leaves
    assert inp.shape == () and str(inp.dtype) == "key<fry>"
    assert v._trace_options["inputs"][0]["dtype"] == "key<fry>"
    want = jax.jit(f)(key)
    (got,) = v.outputs or []
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    stats = v._trace_stats
    assert stats["inputs"][0]["status"] == "unavailable"  # keys: layout only, no value stats
    assert "PRNG key" in stats["inputs"][0]["message"]
    assert stats["outputs"][0]["status"] == "ready"


def test_sharded_key_array_in_and_out_match_jit(mesh: Any) -> None:
    keys = jax.device_put(jax.random.split(jax.random.key(1), 8), NamedSharding(mesh, P("x")))

    def f(ks: Any) -> Any:
        u = jax.vmap(lambda k: jax.random.uniform(k, (4,)))(ks)
        return u, jax.vmap(lambda k: jax.random.split(k, 2))(ks)

    v = ShardView(f, keys)
    assert v.in_specs == [["x"]]
    jax_says = jax_jit_error(f, keys)
    if jax_says:  # the view refuses in JAX's words, as jax.jit does
        assert jax_says in v.error
        pytest.skip(f"jax {jax.__version__} cannot jit f for these keys itself: {jax_says}")
    assert v.error == "" and v.trace is not None
    c = jax.jit(f).lower(keys).compile()
    assert v.trace.out_shardings == leaves(c.output_shardings)
    wants = leaves(jax.jit(f)(keys))
    gots = v.outputs or []
    for got, want in zip(gots, wants, strict=True):
        same_placement(got, want)
    np.testing.assert_array_equal(np.asarray(gots[0]), np.asarray(wants[0]))
    np.testing.assert_array_equal(jax.random.key_data(gots[1]), jax.random.key_data(wants[1]))
    assert [lf.dtype for lf in v.trace.output_leaves][1] == gots[1].dtype
    assert "PRNG key" in v._trace_stats["outputs"][1]["message"]


# ------------------------------------------------------------------ item 9: odd inputs
def test_unused_argument_is_dropped_by_xla_and_said(x: Any) -> None:
    def f(a: Any, b: Any) -> Any:
        return a * 2

    y = jnp.ones((8, 4))
    v = ShardView(f, x, y)
    assert v.error == "" and v.trace is not None and v.trace.ran
    c = jax.jit(f, in_shardings=(x.sharding, None)).lower(x, y).compile()
    assert c.input_shardings[0][1] is None  # what XLA does with it
    shapes = [o.shape for o in v.trace.output_leaves]  # the view passes P('x', None) for
    same_shardings(v.trace.out_shardings, leaves(c.output_shardings), shapes)  # P('x')
    assert v.trace.notes["in"] == ["", UNUSED_NOTE]
    assert v._trace["inputs"][1]["note"] == UNUSED_NOTE
    (got,) = v.outputs or []
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(f)(x, y)))
    same_placement(got, jax.jit(f)(x, y))
    v.set_layout(in_specs=[["x", None], ["x", None]])  # re-laying out the unused one works too
    assert v.error == "" and v.trace.in_shardings[1].spec == P("x", None)


@pytest.mark.parametrize(
    ("f", "n_out"),
    [(lambda a: 3.0, 1), (lambda a: None, 0), (lambda a: (a + 1, jnp.float32(2)), 2)],
    ids=["constant", "none", "array-and-constant"],
)
def test_constant_and_none_results(x: Any, f: Any, n_out: int) -> None:
    v = ShardView(f, x)
    assert v.error == "" and v.trace is not None and v.trace.ran
    # The view compiles under jax.set_mesh (for Explicit axes): a constant lands replicated on
    # the mesh there, as it does for the user's own jax.jit(f) under that mesh.
    with jax.set_mesh(x.sharding.mesh):
        c = jax.jit(f).lower(x).compile()
        wants = leaves(jax.jit(f)(x))
    shapes = [o.shape for o in v.trace.output_leaves]
    same_shardings(v.trace.out_shardings, leaves(c.output_shardings), shapes)
    assert len(v.trace.output_leaves) == n_out
    gots = v.outputs or []
    assert len(gots) == n_out
    for got, want in zip(gots, wants, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        same_placement(got, want)
    if n_out:
        assert v.trace.notes["out"][-1] == CONSTANT_NOTE
    assert v.trace.notes["out"][:-1] == [""] * (n_out - 1) or n_out <= 1


def test_float0_argument(x: Any) -> None:
    def f(a: Any, t: Any) -> Any:
        return a * 2

    t = np.zeros((8,), jax.dtypes.float0)
    v = ShardView(f, x, t)
    assert v.error == "" and v.trace is not None and v.trace.ran
    assert v._trace_options["inputs"][1]["dtype"] == "float0"
    assert "float0" in v.trace.notes["in"][1]
    (got,) = v.outputs or []
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.jit(f)(x, t)))
    assert v._trace_stats["inputs"][1]["status"] == "unavailable"


@pytest.mark.parametrize("dtype", [jnp.int4, jnp.uint4])
def test_int4_compiles_and_says_it_is_not_run(mesh: Any, dtype: Any) -> None:
    a = jax.device_put(jnp.ones((8, 8), dtype), NamedSharding(mesh, P("x")))

    def f(v: Any) -> Any:
        return (v + 1).astype(jnp.int8).sum(0)

    v = ShardView(f, a)
    assert v.trace is not None and not v.trace.ran
    c = jax.jit(f).lower(a).compile()
    same_shardings(v.trace.in_shardings, leaves(c.input_shardings[0]), [(8, 8)])
    same_shardings(v.trace.out_shardings, leaves(c.output_shardings), [(8,)])
    assert [k.kind for k in v.trace.collectives] == ["all-reduce"]
    assert "all-reduce" in c.as_text()
    why = v._trace_options["run_disabled"]
    assert why.startswith("not run: " + jnp.dtype(dtype).name) and "compiled layout" in why
    assert v._trace_stats["outputs"][0]["message"] == why
    try:  # what running the executable does: refused (its inputs must be packed) ...
        c(a)
        said = ""  # ... except on jax 0.7, which runs it: the view still does not (safe side)
    except Exception as e:
        said = str(e)
    assert said == "" or "layouts" in said, said


@pytest.mark.parametrize("dtype", [jnp.int4, jnp.uint4])
@pytest.mark.parametrize(("shape", "spec"), [((8, 8), P("x")), ((8, 5, 3), P("x")), ((6,), P())])
def test_sub_byte_bytes_per_device_are_xla_packed_sizes(
    mesh: Any, dtype: Any, shape: tuple[int, ...], spec: Any
) -> None:
    """int4 / uint4: XLA stores two elements a byte (a (1, 5, 3) block: 15 elements, 8 B), so
    the cards' bytes per device are the compiled executable's argument and output sizes, not
    elements x itemsize (1 B for int4 in numpy)."""
    a = jax.device_put(jnp.ones(shape, dtype), NamedSharding(mesh, spec))

    def f(v: Any) -> Any:
        return v + 1

    v = ShardView(f, a)
    assert v.error == "" and v.trace is not None
    m = jax.jit(f).lower(a).compile().memory_analysis()
    inp, out = v.trace.input_leaves[0].layout, v.trace.output_leaves[0].layout
    assert inp.bytes_per_device == m.argument_size_in_bytes
    assert out.bytes_per_device == m.output_size_in_bytes
    n = math.prod(shape)
    assert inp.logical_bytes == (n + 1) // 2 < n * jnp.dtype(dtype).itemsize
    assert inp.itemsize == 1 and inp.itemsize_bits == 4  # the wire's itemsize is unchanged
    card = v._trace["inputs"][0]["layout"]  # what the function view's card prints
    assert card["bytes_per_device"] == m.argument_size_in_bytes
    assert card["logical_bytes"] == inp.logical_bytes


def test_tracers_are_refused_in_words(x: Any) -> None:
    def g(a: Any) -> Any:
        ShardView(lambda b: b * 2, a)
        return a

    with pytest.raises(TypeError, match=r"tracer .* outside jit/vmap/grad"):
        jax.jit(g)(x)
    with pytest.raises(TypeError, match="tracer"):
        jax.vmap(g)(x)


def test_constants_through_shard_map_and_nested_jit(x: Any, mesh: Any) -> None:
    def body(a: Any) -> Any:
        return jnp.float32(3), a * 2

    v = ShardView(body, x, mode="shard_map", in_specs=P("x"), out_specs=(P(), P("x")))
    want = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=(P(), P("x"))))(x)
    assert v.trace is not None and v.trace.notes["out"] == [CONSTANT_NOTE, ""]
    for got, w in zip(v.outputs or [], want, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(w))
        same_placement(got, w)
    nested = jax.jit(lambda a: (a * 2, 4.0))
    v2 = ShardView(nested, x)
    assert v2.trace is not None and v2.trace.notes["out"] == ["", CONSTANT_NOTE]
    v3 = ShardView(lambda a: a, x)  # an input passed through is not a constant
    assert v3.trace is not None and v3.trace.notes == {"in": [], "out": []}


def test_unused_argument_in_shard_map_mode(x: Any, mesh: Any) -> None:
    def body(a: Any, b: Any) -> Any:
        return a * 2

    v = ShardView(body, x, x, mode="shard_map", in_specs=P("x"), out_specs=P("x"))
    assert v.trace is not None and v.trace.notes["in"] == ["", UNUSED_NOTE]
    want = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x, x)
    (got,) = v.outputs or []
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    same_placement(got, want)


def test_odd_input_views_hold_no_device_memory_between_updates(mesh: Any) -> None:
    from shardwidget.model import free_memory
    from tests.helpers import collect

    def live() -> int:
        collect()
        return sum(free_memory.buffers(jax.live_arrays()).values())

    keys = jax.device_put(jax.random.split(jax.random.key(2), 8), NamedSharding(mesh, P("x")))
    sub = jax.make_mesh(
        (2,), ("x",), devices=jax.devices()[2:4], axis_types=(AxisType.Explicit,) * 1
    )
    a = jax.device_put(jnp.ones((8, 8)), NamedSharding(sub, P("x")))
    before = live()
    fs = [lambda k: jax.vmap(lambda k1: jax.random.normal(k1, (4,)))(k), lambda p, q: p * 2]
    views = [ShardView(fs[0], keys), ShardView(fs[1], a, a)]
    jax_says = [jax_jit_error(fs[0], keys), jax_jit_error(fs[1], a, a)]
    for v, said in zip(views, jax_says, strict=True):  # as jax.jit: both, but the keys on 0.9
        assert said in v.error if said else v.error == ""
    assert live() == before
    views[0].set_layout(in_specs=[[None]])
    views[1].set_layout(in_specs=[[None, "x"], [None, None]])
    assert live() == before
