"""ShardView(f, *args): shardings, collectives, memory, local shapes and outputs, checked against
JAX's own compiled executables and numpy, for the tutorial cases of issue 5."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import FunctionView, ShardView, compare
from shardwidget.model.layout import layout_of
from shardwidget.wire import size_budget, wire_size
from tests.helpers import said_in

COLL = re.compile(
    r"=\s*\S.*?\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\("
)


@pytest.fixture(scope="module")
def mesh() -> Any:
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def put(mesh: Any, a: Any, *spec: Any) -> Any:
    return jax.device_put(np.asarray(a), NamedSharding(mesh, P(*spec)))


@pytest.fixture(scope="module")
def x(mesh: Any) -> Any:
    return put(mesh, np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 100, "x", "y")


def hlo_kinds(compiled: Any) -> list[str]:
    """Collective kinds in the compiled HLO text, found without shardwidget.hlo."""
    return [m.group(1) for m in COLL.finditer(compiled.as_text())]


def jax_compiled(f: Any, args: list[Any], out_shardings: Any = None) -> Any:
    """What JAX itself compiles for these inputs' own shardings."""
    kw = {} if out_shardings is None else {"out_shardings": out_shardings}
    return jax.jit(f, in_shardings=tuple(a.sharding for a in args), **kw).lower(*args).compile()


def check_against_jax(v: FunctionView, f: Any, args: list[Any]) -> Any:
    c = jax_compiled(f, args)
    assert v.trace is not None
    assert v.trace.in_shardings == list(jax.tree_util.tree_leaves(c.input_shardings[0]))
    assert v.trace.out_shardings == list(jax.tree_util.tree_leaves(c.output_shardings))
    assert [k.kind for k in v.trace.collectives] == hlo_kinds(c)
    return c


# ------------------------------------------------------------------ the tutorial cases (jit)
def test_elementwise_keeps_layout_without_collectives(x: Any) -> None:
    f = lambda a: 2 * jnp.sin(a) + 1  # noqa: E731
    v = ShardView(f, x)
    assert isinstance(v, FunctionView)
    check_against_jax(v, f, [x])
    assert v.trace.out_shardings[0].spec == P("x", "y")
    assert v.trace.collectives == []
    assert v.trace.local_shapes == {"in": [(32, 16)], "out": [(32, 16)]}
    np.testing.assert_allclose(np.asarray(v.outputs[0]), 2 * np.sin(np.asarray(x)) + 1, atol=1e-6)
    assert v._trace["collectives"] == [] and v._trace["status"] == "ok"


def test_sum_over_sharded_axis_all_reduces_over_x(x: Any) -> None:
    f = lambda a: a.sum(axis=0)  # noqa: E731
    v = ShardView(f, x)
    check_against_jax(v, f, [x])
    assert v.trace.out_shardings[0].spec == P("y")
    (c,) = v.trace.collectives
    assert (c.kind, c.axes, c.shape, c.dtype) == ("all-reduce", ("x",), (16,), "f32")
    assert c.bytes == 2 * (2 - 1) * 16 * 4 // 2  # ring all-reduce of 64 B over 2 devices
    np.testing.assert_allclose(np.asarray(v.outputs[0]), np.asarray(x).sum(0), rtol=1e-5)
    wire = v._trace["collectives"][0]
    assert wire["axes"] == ["x"] and wire["kind"] == "all-reduce"


def test_matmul_with_sharded_contraction_all_reduces(mesh: Any, x: Any) -> None:
    w = put(mesh, np.ones((64, 32), np.float32), "y", None)
    f = lambda a, b: a @ b  # noqa: E731
    v = ShardView(f, x, w)
    check_against_jax(v, f, [x, w])
    kinds = [(c.kind, c.axes) for c in v.trace.collectives]
    assert ("all-reduce", ("y",)) in kinds
    np.testing.assert_allclose(
        np.asarray(v.outputs[0]), np.asarray(x) @ np.ones((64, 32)), rtol=1e-5
    )
    assert v.trace.flops == jax_compiled(f, [x, w]).cost_analysis()["flops"]
    assert [p["path"] for p in v._trace["inputs"]] == ["a", "b"]


def test_resharding_constraint_gives_all_to_all(mesh: Any) -> None:
    y = put(mesh, np.arange(64 * 64, dtype=np.float32).reshape(64, 64), "x", None)
    target = NamedSharding(mesh, P(None, "x"))
    f = lambda a: jax.lax.with_sharding_constraint(a, target)  # noqa: E731
    v = ShardView(f, y)
    check_against_jax(v, f, [y])
    assert [(c.kind, c.axes) for c in v.trace.collectives] == [("all-to-all", ("x",))]
    (k,) = v.trace.constraints
    assert k.kind == "with_sharding_constraint" and k.spec_text == "P(None, 'x')"
    assert k.shape == (64, 64) and "test_trace.py" in k.source
    assert v.trace.out_shardings[0].spec == P(None, "x")
    np.testing.assert_array_equal(np.asarray(v.outputs[0]), np.asarray(y))


def test_roll_over_sharded_axis_gives_collective_permute(x: Any) -> None:
    f = lambda a: jnp.roll(a, 1, axis=0)  # noqa: E731
    v = ShardView(f, x)
    check_against_jax(v, f, [x])
    (c,) = v.trace.collectives
    assert (c.kind, c.axes) == ("collective-permute", ("x",))
    assert all(a != b for a, b in c.groups)  # every pair moves data between x neighbours
    np.testing.assert_array_equal(np.asarray(v.outputs[0]), np.roll(np.asarray(x), 1, axis=0))


def test_out_specs_in_jit_mode(mesh: Any, x: Any) -> None:
    f = lambda a: a * 2  # noqa: E731
    v = ShardView(f, x, out_specs=[[None, None]])
    c = jax_compiled(f, [x], out_shardings=NamedSharding(mesh, P()))
    (want,) = jax.tree_util.tree_leaves(c.output_shardings)
    assert v.trace.out_shardings[0].is_equivalent_to(want, 2)
    assert sorted(k.kind for k in v.trace.collectives) == sorted(hlo_kinds(c))
    assert all(k.kind == "all-gather" for k in v.trace.collectives)
    v.out_specs = [None]  # back to "XLA chooses"
    assert v.trace.out_shardings[0].spec == P("x", "y") and v.trace.collectives == []


def test_memory_is_the_executables_own(x: Any) -> None:
    v = ShardView(lambda a: a.sum(axis=0), x)
    m = jax_compiled(lambda a: a.sum(axis=0), [x]).memory_analysis()
    mem = v.trace.memory
    assert mem["argument"] == m.argument_size_in_bytes == 32 * 16 * 4
    assert mem["output"] == m.output_size_in_bytes
    assert mem["peak"] == mem["argument"] + mem["output"] - mem["alias"] + mem["temp"]
    assert v._trace["memory"] == mem


# ------------------------------------------------------------------ controls re-compile
def test_changing_a_spec_recompiles_and_caches(x: Any) -> None:
    v = ShardView(lambda a: a.sum(axis=0), x)
    assert [c.kind for c in v.trace.collectives] == ["all-reduce"]
    v.in_specs = [[None, "y"]]  # x no longer splits the summed dimension
    assert v.trace.collectives == []
    assert v.trace.in_shardings[0].spec == P(None, "y")
    assert v._trace["inputs"][0]["local_shape"] == [64, 16]
    first = v.trace
    v.in_specs = [["x", "y"]]
    v.in_specs = [[None, "y"]]
    assert v.trace is first  # cached per layout
    v.mesh_shape = [8]  # one axis: 'y' disappears from every spec, the view still compiles
    assert v.axis_names == ["x"] and v.in_specs == [[None, None]]


def test_invalid_layouts_raise_and_keep_the_last_good_view(x: Any) -> None:
    v = ShardView(lambda a: a.sum(axis=0), x)
    before = v.trace
    with pytest.raises(ValueError, match="input a: dimension 0") as e:
        v.in_specs = [[["x", "y", "q"], None]]
    assert "'q'" in str(e.value)
    with pytest.raises(ValueError, match="out_specs has 2 entries"):
        v.out_specs = [None, None]
    assert v.trace is before and v.in_specs == [["x", "y"]]
    odd = ShardView(lambda a: a.sum(axis=0), np.ones((6, 8), np.float32))
    with pytest.raises(ValueError, match=r"input a: dimension 0 .*6") as e:
        odd.in_specs = [["x", None]]  # 6 rows over 8 devices
    assert "divid" in str(e.value)
    assert odd.error == "" and odd.in_specs == [[None, None]]


def test_front_end_requests(x: Any) -> None:
    v = ShardView(lambda a: a.sum(axis=0), x)
    sent: list[dict[str, Any]] = []
    v.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
    good = dict(v._trace_options["original"], in_specs=[[None, "y"]])
    v._on_custom_msg(v, {"type": "trace_request", "seq": 3, "state": good}, [])
    assert sent[-1] == {"type": "result", "seq": 3, "ok": True, "error": ""}
    assert v.in_specs == [[None, "y"]] and v.trace.collectives == []
    v._on_custom_msg(v, {"type": "trace_request", "seq": 2, "state": good}, [])
    assert sent[-1]["error"] == "superseded by a newer request"
    key = v._trace["key"]
    bad = dict(good, in_specs=[[None, "nope"]])
    v._on_custom_msg(v, {"type": "trace_request", "seq": 4, "state": bad}, [])
    assert not sent[-1]["ok"] and "nope" in sent[-1]["error"] and v.error == sent[-1]["error"]
    assert v._trace["key"] == key and v.in_specs == [[None, "y"]]  # the last good view stays


# ------------------------------------------------------------------ errors from JAX
def test_explicit_axes_error_is_shown_and_fixable(mesh: Any) -> None:
    me = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(np.ones((64, 64), np.float32), NamedSharding(me, P("x", "y")))
    b = jax.device_put(np.ones((64, 32), np.float32), NamedSharding(me, P("y", None)))
    v = ShardView(lambda p, q: p @ q, a, b)
    assert v.trace is None
    assert "ShardingTypeError" in v.error and "out_sharding" in v.error
    assert v._trace["status"] == "error" and v._trace["message"] == v.error
    with pytest.raises(ValueError, match="out_sharding"):
        v.in_specs = [["x", "y"], ["y", None]]
    v.in_specs = [["x", None], [None, None]]  # nothing contracted is sharded: compiles
    assert v.error == "" and v.trace.out_shardings[0].spec == P("x", None)
    np.testing.assert_allclose(np.asarray(v.outputs[0]), np.full((64, 32), 64.0))


def test_shape_error_in_f() -> None:
    v = ShardView(lambda a, b: a @ b, np.ones((8, 3), np.float32), np.ones((4, 2), np.float32))
    assert v.trace is None and v.outputs is None
    assert v.error == (
        "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."
    )
    assert v._trace["status"] == "error" and v._trace["outputs"] == []


# ------------------------------------------------------------------ shard_map mode
def test_shard_map_local_shapes_match_what_the_body_sees(mesh: Any) -> None:
    seen: list[tuple[int, ...]] = []

    def f(a: Any) -> Any:
        seen.append(a.shape)  # runs while JAX traces the body
        return a * 2

    arr = jnp.arange(32.0)
    v = ShardView(f, arr, mode="shard_map", mesh_shape=[8], axis_names=["x"],
                  in_specs=[P("x")], out_specs=[P("x")])  # fmt: skip
    assert v.trace.local_shapes == {"in": [(4,)], "out": [(4,)]}
    assert (4,) in seen
    assert v._trace["inputs"][0]["local_shape"] == [4]
    np.testing.assert_array_equal(np.asarray(v.outputs[0]), np.arange(32.0) * 2)


def test_psum_is_the_same_on_every_device_of_the_axis(mesh: Any, x: Any) -> None:
    f = lambda a: jax.lax.psum(a, "y")  # noqa: E731
    v = ShardView(f, x, mode="shard_map", in_specs=[P("x", "y")], out_specs=[P("x", "y")])
    (c,) = v.trace.collectives
    assert (c.kind, c.axes) == ("all-reduce", ("y",))
    out = v.outputs[0]
    assert out.shape == (64, 64)  # out_specs=P('x','y') of a psum shows the repetition
    blocks = np.asarray(x).reshape(2, 32, 4, 16)
    want = np.tile(blocks.sum(axis=2), (1, 1, 4))
    np.testing.assert_allclose(np.asarray(out), want.reshape(64, 64), rtol=1e-5)
    by_x: dict[int, list[np.ndarray]] = {}
    for s in out.addressable_shards:
        by_x.setdefault(s.index[0].start or 0, []).append(np.asarray(s.data))
    for shards in by_x.values():
        assert len(shards) == 4 and all(np.array_equal(shards[0], s) for s in shards)
    stats = v._trace_stats["outputs"][0]
    assert stats["status"] == "ready" and len(stats["blocks"]) == 8


def test_psum_scatter_gives_reduce_scatter(mesh: Any, x: Any) -> None:
    f = lambda a: jax.lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True)  # noqa: E731
    v = ShardView(f, x, mode="shard_map", in_specs=[P("x", None)], out_specs=[P("x", "y")])
    assert [(c.kind, c.axes) for c in v.trace.collectives] == [("reduce-scatter", ("y",))]
    assert v.trace.local_shapes == {"in": [(32, 64)], "out": [(32, 16)]}
    sm = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x", None), out_specs=P("x", "y")))
    np.testing.assert_allclose(np.asarray(v.outputs[0]), np.asarray(sm(x)), rtol=1e-6)


def test_shard_map_out_spec_error_is_shown(x: Any) -> None:
    f = lambda a: jax.lax.psum(a, "y")  # noqa: E731
    v = ShardView(f, x, mode="shard_map", in_specs=[P("x", "y")], out_specs=[P()])
    assert v.trace is None and "out_specs" in v.error and "'<lambda>'" in v.error


# ------------------------------------------------------------------ arguments
def test_pytrees_static_leaves_and_kwargs(mesh: Any) -> None:
    params = {"w": put(mesh, np.ones((16, 8), np.float32), "x", None), "b": np.zeros(8, np.float32)}

    def f(p: Any, xs: Any, n: int, *, scale: Any) -> Any:
        return {"y": (xs @ p["w"] + p["b"]) * n * scale, "n": n}

    xs = put(mesh, np.ones((4, 16), np.float32), None, "x")
    v = ShardView(f, params, xs, 3, scale=np.float32(2.0))
    paths = [p["path"] for p in v._trace_options["inputs"]]
    assert paths == ["p['b']", "p['w']", "xs"]
    assert v._trace_options["static_args"] == ["n=3", "scale=np.float32(2.0)"]
    assert [o["path"] for o in v._trace["outputs"]] == ["out['n']", "out['y']"]
    np.testing.assert_allclose(np.asarray(v.outputs[1]), np.full((4, 8), 16 * 3 * 2.0))


def test_shape_dtype_struct_inputs_compile_without_running(mesh: Any) -> None:
    s = jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=NamedSharding(mesh, P("x", "y")))
    v = ShardView(lambda a: a.sum(axis=0), s)
    assert v.outputs is None and v._trace["ran"] is False
    assert [c.kind for c in v.trace.collectives] == ["all-reduce"]
    assert "ShapeDtypeStruct" in v._trace_options["run_disabled"]
    assert v._trace_stats["outputs"][0]["status"] == "unavailable"


def test_already_jitted_function_and_user_arrays_untouched(x: Any) -> None:
    before = np.asarray(x).copy()
    f = jax.jit(lambda a: a + 1)
    v = ShardView(f, x)
    v.in_specs = [[None, None]]
    assert not x.is_deleted() and x.sharding.spec == P("x", "y")
    np.testing.assert_array_equal(np.asarray(x), before)
    np.testing.assert_array_equal(np.asarray(v.outputs[0]), before + 1)


# ------------------------------------------------------------------ the three approaches
def test_three_approaches_agree_and_differ_in_communication() -> None:
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    sharding = NamedSharding(mesh, P("x"))
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(32,)).astype(np.float32)
    wv = rng.normal(size=(32, 4)).astype(np.float32)
    bv = rng.normal(size=(4,)).astype(np.float32)

    def layer(x: Any, weights: Any, bias: Any) -> Any:
        return jax.nn.sigmoid(x @ weights + bias)

    def layer_auto(x: Any, weights: Any, bias: Any) -> Any:
        x = jax.lax.with_sharding_constraint(x, sharding)
        weights = jax.lax.with_sharding_constraint(weights, sharding)
        return layer(x, weights, bias)

    @partial(jax.shard_map, mesh=mesh, in_specs=(P("x"), P("x", None), P(None)), out_specs=P(None))
    def layer_sharded(x: Any, weights: Any, bias: Any) -> Any:
        return jax.nn.sigmoid(jax.lax.psum(x @ weights, "x") + bias)

    xs, ws = jax.device_put(xv, sharding), jax.device_put(wv, sharding)
    v1 = ShardView(layer, xs, ws, bv)
    v2 = ShardView(layer_auto, xv, wv, bv)
    v3 = ShardView(layer_sharded, xv, wv, bv)
    cmp = compare(v1, v2, v3, names=["jit", "constraint", "shard_map"])
    assert cmp.agree
    want = 1 / (1 + np.exp(-(xv @ wv + bv)))
    np.testing.assert_allclose(np.asarray(v1.outputs[0]), want, rtol=1e-5)
    assert [k.kind for k in v2.trace.constraints] == ["with_sharding_constraint"] * 2
    for v in (v1, v2, v3):  # the contraction over x needs one all-reduce in every version
        assert "all-reduce" in [c.kind for c in v.trace.collectives]
        assert all(c.axes == ("x",) for c in v.trace.collectives if c.kind == "all-reduce")
    assert [r["name"] for r in cmp.rows] == ["jit", "constraint", "shard_map"]
    assert all(r["peak"] > 0 and r["bytes_sent"] > 0 for r in cmp.rows)
    assert "agrees" in repr(cmp)
    cmp_bad = compare(v1, ShardView(lambda a, w, b: a @ w - b, xs, ws, bv))
    assert not cmp_bad.agree and "DIFFERS" in cmp_bad.rows[1]["agreement"]


def test_payload_size_and_text_view(x: Any) -> None:
    v = ShardView(lambda a: (a.sum(axis=0), a * 2), x)
    size = wire_size(v._trace, v._trace_stats, v._trace_options)
    assert size < 3 * size_budget(8)  # two outputs and one input, each within one view's budget
    text = repr(v)
    assert "all-reduce" in text and "over x" in text and "float32[64@x,64@y]" in text
    bundle = v._repr_mimebundle_()  # the picture keeps its collectives in words, not its text
    said = said_in(bundle[0]["text/html"])
    assert any(line.startswith("all-reduce over x:") for line in said), said
    assert "float32[64@x,64@y]" not in bundle[0]["text/html"]


def test_inputs_carry_per_shard_data_as_laid_out_for_the_run(x: Any) -> None:
    """Each input card shows its data per device, under the layout chosen in the view."""
    v = ShardView(lambda a: a * 2, x)
    v.in_specs = [[None, "x"]]  # a layout the user's array does not have
    placed = v.trace.inputs[0]
    assert placed.sharding.spec == P(None, "x") and x.sharding.spec == P("x", "y")
    st = v._trace_stats["inputs"][0]
    assert st["status"] == "ready" and st["key"] == v._trace_stats["key"]
    host = np.asarray(x)
    lay_blocks = layout_of(placed).blocks
    assert len(st["blocks"]) == len(lay_blocks) == 2
    for blk, b in zip(lay_blocks, st["blocks"], strict=True):
        part = host[blk.slices]
        np.testing.assert_allclose(b[:3], [part.min(), part.max(), part.mean()], rtol=1e-5)


def test_inputs_without_data_say_why(mesh: Any) -> None:
    s = jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=NamedSharding(mesh, P("x", "y")))
    v = ShardView(lambda a: a.sum(axis=0), s)
    (st,) = v._trace_stats["inputs"]
    assert st["status"] == "unavailable" and "ShapeDtypeStruct" in st["message"]
    assert len(st["blocks"]) == 8
