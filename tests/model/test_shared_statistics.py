"""Statistics compile at most once per (shard shape, dtype, memory kind, devices), shared by
every layout, view, input and output with that shard shape (issue 29: on a GPU, a re-layout
from P('a') to P('b') to P('c') of a 2 × 2 × 2 mesh compiled one statistics program each,
while JAX's device_put compiled nothing). Compiles are counted with JAX's own monitoring event
(_jax.CompileCount)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget._jax import CompileCount
from shardwidget.model import shard_program
from shardwidget.model import summary as S
from shardwidget.model.layout import layout_of

EXPLICIT = (AxisType.Explicit,) * 3


def _mesh():
    return jax.make_mesh((2, 2, 2), ("a", "b", "c"), axis_types=EXPLICIT)


def _check(arr, summ) -> None:
    host = np.asarray(arr)
    for blk, row in zip(layout_of(arr).blocks, summ.stats, strict=True):
        part = host[blk.slices]
        np.testing.assert_allclose(row[:4], [part.min(), part.max(), part.mean(), part.std()],
                                   rtol=1e-5, atol=1e-6)  # fmt: skip


def test_summaries_of_three_layouts_with_one_shard_shape_compile_one_program():
    S.clear_caches()
    mesh = _mesh()
    x = np.random.default_rng(0).standard_normal((32, 16)).astype(np.float32)
    counts = []
    for axis in ("a", "b", "c"):
        arr = jax.device_put(x, NamedSharding(mesh, P(axis)))
        lay = layout_of(arr)
        with CompileCount() as c:
            summ = S.summarize(arr, lay, S.plan_for(lay, (0, 1), 8192, 8192))
        counts.append(c.n)
        _check(arr, summ)
    assert counts[0] >= 1 and counts[1:] == [0, 0], counts


def test_an_array_view_relayout_onto_a_seen_shard_shape_compiles_no_statistics():
    """(What it compiles is the re-layout's cost estimate, jit(<lambda>) of the reshard, once
    per layout pair: in a kernel that is left to after the update.)"""
    mesh = _mesh()
    x = jax.device_put(np.arange(32 * 16, dtype=np.float32).reshape(32, 16),
                       NamedSharding(mesh, P("a")))  # fmt: skip
    v = ShardView(x)
    S.clear_caches()  # nothing of a view before this one
    counts = []
    for spec in (["b"], ["c"], ["a"], ["b"]):
        with CompileCount() as c:
            v.spec = spec
            summ = v.summary
        counts.append(c.of(shard_program.NAME))
        assert c.n == c.of("jit(<lambda>)"), c.names  # the estimate's reshard only
        _check(jax.device_put(x, NamedSharding(mesh, P(spec[0]))), summ)
    assert counts == [0, 0, 0, 0], counts


def test_a_function_view_update_compiles_what_jit_compiles_and_no_statistics(monkeypatch):
    """Off the host path (as on a GPU: shards not in host memory), a function view's statistics
    of outputs with a seen shard shape compile nothing: the update compiles exactly what the
    same update of a view without statistics compiles (jax.jit's own programs)."""
    monkeypatch.setattr(S, "HOST_STATS_BYTES", -1)  # every shard "on the device"
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32),
                       NamedSharding(mesh, P()))  # fmt: skip
    kw = {"mesh_shape": [2, 4], "axis_names": ["x", "y"], "out_specs": [None]}
    with_stats = ShardView(lambda a: jnp.tanh(a) * 2, a, **kw)
    without = ShardView(lambda a: jnp.tanh(a) * 2, a, stats=False, **kw)
    seen: set[tuple[int, ...]] = set()
    for specs in ([["x", None]], [["y", None]], [[None, "x"]], [["y", "x"]], [["x", "y"]],
                  [["y", None]], [[None, "y"]]):  # fmt: skip
        with CompileCount() as plain:
            without.in_specs = specs
            without.trace  # noqa: B018 (the compile happens on reading it)
        with CompileCount() as ours:
            with_stats.in_specs = specs
            res = with_stats.trace
            st = with_stats._trace_stats
        shapes = {layout_of(arr).shard_shape for arr in res.inputs + res.outputs}
        if shapes <= seen:  # every leaf's shard shape seen before: no statistics compile
            assert ours.n == plain.n, (specs, ours.names, plain.names)
            assert ours.of(shard_program.NAME) == 0
        seen |= shapes
        for arr, s in zip(res.inputs + res.outputs, st["inputs"] + st["outputs"], strict=True):
            host = np.asarray(arr)
            for blk, row in zip(layout_of(arr).blocks, s["blocks"], strict=True):
                part = host[blk.slices]
                np.testing.assert_allclose(row[:4], [part.min(), part.max(), part.mean(),
                                                     part.std()], rtol=1e-4, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_one_program_serves_every_layout_of_a_dtype(dtype):
    S.clear_caches()
    x = (np.arange(64 * 8).reshape(64, 8) % 17).astype(dtype)
    for spec in (P("a", "b"), P("b", "c"), P("c", "a"), P("b", "a")):  # shards (32, 4) each
        arr = jax.device_put(x, NamedSharding(_mesh(), spec))
        lay = layout_of(arr)
        _check(arr if dtype != np.complex64 else jnp.abs(arr),
               S.summarize(arr, lay, S.plan_for(lay, (0, 1), 8192, 0)))  # fmt: skip
    assert S.shard_program._program.cache_info().misses == 1


def test_scalars_compile_nothing():
    S.clear_caches()
    flat = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
    for mesh in (_mesh(), flat):
        arr = jax.device_put(np.float32(3.5), NamedSharding(mesh, P()))
        lay = layout_of(arr)
        with CompileCount() as c:
            summ = S.summarize(arr, lay, S.plan_for(lay, (), 8192, 8192))
        assert c.n == 0 and summ.status == "ready", c.names
        np.testing.assert_allclose(summ.stats[0][:4], [3.5, 3.5, 3.5, 0.0])
