"""Statistics of arrays in every memory kind JAX offers on this backend (issue 29: arrays in
``pinned_host`` failed on every JAX with "memory_space of all inputs passed to select_n must be
the same"). Cases from JAX's own memory-kind tests: an 8-device array on a 4 × 2 mesh, a
single-device array, and ``device_put`` of numpy; the array view, the function view and the
model's summary, on the compiled per-device path; values against numpy."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from shardwidget import ShardView
from shardwidget.model import summary as S
from shardwidget.model import tiles as T
from shardwidget.model.layout import layout_of

KINDS = sorted({m.kind for m in jax.devices()[0].addressable_memories()})


def _mesh():
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


def _data() -> np.ndarray:
    x = np.random.default_rng(7).standard_normal((16, 8)).astype(np.float32) * 3
    x[3, 1] = np.nan  # the masked statistics too
    return x


def _arrays(kind: str) -> dict[str, jax.Array]:
    x = _data()
    mesh = _mesh()
    return {
        "mesh4x2": jax.device_put(x, NamedSharding(mesh, P("x", "y"), memory_kind=kind)),
        "single": jax.device_put(x, SingleDeviceSharding(jax.devices()[0], memory_kind=kind)),
        "numpy_put": jax.device_put(x, NamedSharding(mesh, P(None, "y"), memory_kind=kind)),
    }


def _check(arr, stats) -> None:
    host = np.asarray(arr)
    for blk, row in zip(layout_of(arr).blocks, stats, strict=True):
        part = host[blk.slices]
        fin = part[np.isfinite(part)]
        want = [fin.min(), fin.max(), fin.mean(), fin.std(), np.isnan(part).sum()]
        np.testing.assert_allclose(np.asarray(row)[:5], want, rtol=1e-4, atol=1e-5)


@pytest.fixture(autouse=True)
def _compiled_path(monkeypatch):
    """As on an accelerator: the shards are not read in place by numpy, the per-device pass
    (or the tiles' program) computes every statistic."""
    monkeypatch.setattr(S, "HOST_STATS_BYTES", -1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", ["mesh4x2", "single", "numpy_put"])
def test_summary_and_tiles_of_every_memory_kind(kind: str, case: str) -> None:
    arr = _arrays(kind)[case]
    assert arr.sharding.memory_kind == kind
    lay = layout_of(arr)
    summ = S.summarize(arr, lay, S.plan_for(lay, (0, 1), 4096, 0))
    assert summ.status == "ready", summ.message
    _check(arr, summ.stats)
    tiles = T.tile_summary(arr, len(jax.devices()), 0)
    assert tiles is not None
    _check(arr, T.summarize(tiles, lay, (0, 1), 4096, False).stats)


@pytest.mark.parametrize("stats", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", ["mesh4x2", "single", "numpy_put"])
def test_array_view_statistics_of_every_memory_kind(kind: str, case: str, stats: bool) -> None:
    arr = _arrays(kind)[case]
    v = ShardView(arr, stats=stats)
    assert v.error == "", v.error
    if not stats:  # the view says so and shows the layout; the summary is still there on ask
        assert v._stats["status"] == "unavailable" and "stats=False" in v._stats["message"]
    else:
        assert v._stats["status"] == "ready", v._stats.get("message")
    assert v.summary.status == "ready", v.summary.message
    _check(arr, v.summary.stats)
    if case == "mesh4x2":
        v.spec = ["y", "x"]  # a re-layout keeps the memory kind; its statistics as numpy's
        assert v.error == "", v.error
        _check(jax.device_put(arr, NamedSharding(_mesh(), P("y", "x"))), v.summary.stats)


@pytest.mark.parametrize("kind", KINDS)
def test_function_view_statistics_of_every_memory_kind(kind: str) -> None:
    mesh = _mesh()
    arr = _arrays(kind)["mesh4x2"]
    f = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P("x", "y"), memory_kind=kind))
    try:
        want = f(arr)
    except Exception as e:  # jax before 0.10 on CPU: "Side-effect ops cannot be replicated"
        pytest.skip(f"jax {jax.__version__} cannot run f itself: {str(e)[:120]}")
    v = ShardView(f, arr)
    assert v.error == "", v.error
    res, st = v.trace, v._trace_stats
    assert res.outputs[0].sharding.memory_kind == want.sharding.memory_kind
    for leaf, s in zip(res.inputs + res.outputs, st["inputs"] + st["outputs"], strict=True):
        assert s["status"] == "ready", s.get("message")
        _check(leaf, s["blocks"])
