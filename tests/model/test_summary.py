"""Per-shard statistics, values and thumbnails checked against numpy on the same blocks."""

import math

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.model import summary as S
from shardwidget.model.layout import layout_of


def put(x, mshape, names, spec, **kw):
    mesh = jax.make_mesh(mshape, names, axis_types=(AxisType.Explicit,) * len(names))
    return jax.device_put(x, NamedSharding(mesh, P(*spec), **kw))


def summarize(arr, view_dims=(0, 1), pix=8192, vals=8192):
    lay = layout_of(arr)
    return lay, S.summarize(arr, lay, S.plan_for(lay, view_dims, pix, vals))


def ref_stats(block):
    b = np.abs(block) if np.iscomplexobj(block) else block.astype(np.float64)
    fin = b[np.isfinite(b)]
    counts = [np.isnan(b).sum(), np.isinf(b).sum()]
    if fin.size == 0:  # no finite value: the statistics are undefined (NaN, sent as null)
        return [np.nan] * 4 + counts
    return [fin.min(), fin.max(), fin.mean(), fin.std(), *counts]


@pytest.mark.parametrize(
    "dtype", [np.bool_, np.int8, np.int32, np.float16, ml_dtypes.bfloat16, np.float32, np.complex64]
)
def test_stats_match_numpy(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 48)) * 10
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal((64, 48))
    x = (x > 0) if dtype is np.bool_ else x.astype(dtype)
    arr = put(x, (2, 4), ("x", "y"), ("x", "y"))
    lay, s = summarize(arr)
    assert s.status == "ready" and len(s.stats) == 8
    host = np.asarray(x)
    for blk, st in zip(lay.blocks, s.stats, strict=True):
        np.testing.assert_allclose(st, ref_stats(host[blk.slices]), rtol=2e-3, atol=2e-3)


def test_nan_inf_counted_and_excluded():
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    x[0, 0] = np.nan
    x[1, 1] = np.inf
    x[7, 7] = -np.inf
    arr = put(x, (2, 4), ("x", "y"), ("x", None))
    lay, s = summarize(arr)
    for blk, st in zip(lay.blocks, s.stats, strict=True):
        np.testing.assert_allclose(st, ref_stats(x[blk.slices]), rtol=1e-5)
    assert s.stats[0][4] == 1 and s.stats[0][5] == 1 and s.stats[1][5] == 1


def test_block_without_finite_values_has_undefined_stats():
    x = np.ones((8, 8), np.float32)
    x[:4] = np.nan
    x[4:6] = np.inf
    arr = put(x, (2, 4), ("x", "y"), ("x", None))
    _, s = summarize(arr)
    assert np.isnan(s.stats[0][:4]).all()
    assert list(s.stats[0][4:]) == [32, 0]
    np.testing.assert_allclose(s.stats[1], [1, 1, 1, 0, 0, 16])


def test_small_blocks_send_values_large_do_not():
    x = np.arange(32.0, dtype=np.float32).reshape(4, 8)
    arr = put(x, (2, 4), ("x", "y"), ("x", "y"))
    lay, s = summarize(arr)
    for blk, v in zip(lay.blocks, s.values, strict=True):
        np.testing.assert_array_equal(np.asarray(v).reshape(blk.shape), x[blk.slices])
    big = put(np.ones((64, 64), np.float32), (2, 4), ("x", "y"), ("x", "y"))
    _, s2 = summarize(big)
    assert all(v is None for v in s2.values)


def test_thumbnails_are_block_means():
    x = np.random.default_rng(0).standard_normal((256, 128)).astype(np.float32)
    arr = put(x, (2, 4), ("x", "y"), ("x", "y"))
    lay, s = summarize(arr)
    for blk, t in zip(lay.blocks, s.thumbs, strict=True):
        h, w = blk.shape
        th, tw = t.shape
        assert th <= 32 and tw <= 32
        ref = x[blk.slices].reshape(th, h // th, tw, w // tw).mean(axis=(1, 3))
        np.testing.assert_allclose(t, ref, rtol=1e-4, atol=1e-5)


def test_thumbnail_of_3d_over_chosen_dims_averages_the_rest():
    x = np.random.default_rng(0).standard_normal((4, 16, 8)).astype(np.float32)
    arr = put(x, (2, 4), ("x", "y"), (None, "x", "y"))
    lay, s = summarize(arr, view_dims=(2, 1))  # drawn as rows=d1, cols=d2 (sorted by plan)
    for blk, t in zip(lay.blocks, s.thumbs, strict=True):
        ref = x[blk.slices].mean(axis=0)
        if s.thumb_dims == (2, 1):
            ref = ref.T
        np.testing.assert_allclose(t, ref, rtol=1e-4, atol=1e-5)


def test_budget_limits_thumbnail_size():
    arr = put(np.ones((4096, 4096), np.float32), (2, 4), ("x", "y"), ("x", "y"))
    lay = layout_of(arr)
    plan = S.plan_for(lay, (0, 1), 8 * 100, 0)
    assert plan.thumb_shape[0] * plan.thumb_shape[1] <= 100


def test_one_compile_per_shard_shape_and_cached():
    S.clear_caches()
    x = np.ones((64, 64), np.float32)
    a = put(x, (2, 4), ("x", "y"), ("x", "y"))
    summarize(a)
    summarize(put(x * 2, (2, 4), ("x", "y"), ("x", "y")))
    summarize(put(x * 3, (4, 2), ("x", "y"), ("y", "x")))  # another layout, the same shards
    info = S.shard_program._program.cache_info()
    assert info.misses == 1 and info.hits == 2


def test_single_device_and_pmap_and_keys_and_empty():
    _, s = summarize(jnp.arange(12.0).reshape(3, 4))
    np.testing.assert_allclose(s.stats[0][:4], [0, 11, 5.5, np.arange(12).std()], rtol=1e-6)
    pm = jax.pmap(lambda v: v * 2)(jnp.arange(16.0).reshape(8, 2))
    _, s = summarize(pm)
    assert [st[1] for st in s.stats] == [2 * (2 * i + 1) for i in range(8)]
    keys = jax.random.split(jax.random.key(0), 8)
    _, s = summarize(keys)
    assert s.status == "unavailable" and "PRNG" in s.message
    _, s = summarize(jnp.zeros((0, 4)))
    assert s.status == "unavailable"


def test_pinned_host_stats():
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    arr = put(x, (2, 4), ("x", "y"), ("x",), memory_kind="pinned_host")
    lay, s = summarize(arr)
    for blk, st in zip(lay.blocks, s.stats, strict=True):
        np.testing.assert_allclose(st, ref_stats(x[blk.slices]), rtol=1e-6)
    assert math.isclose(s.stats[0][0], 0.0)


def assert_same_summary(got, want, lay, x):
    """got and want agree (and with numpy on x's blocks): statistics, values and thumbnails."""
    assert got.status == "ready" and got.thumb_dims == want.thumb_dims
    for blk, a, b in zip(lay.blocks, got.stats, want.stats, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(a, ref_stats(x[blk.slices]), rtol=2e-3, atol=2e-3)
    for a, b in zip(got.values, want.values, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
    for a, b in zip(got.thumbs, want.thumbs, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("shape", "spec", "view_dims", "dtype"),
    [
        ((64, 48), ("x", "y"), (0, 1), np.float32),  # thumbnails, no values
        ((8, 8), ("x", None), (0, 1), np.float32),  # small blocks: values too
        ((4, 16, 8), (None, "x", "y"), (2, 1), np.float32),  # 3-D, transposed thumbnail
        ((64, 48), (None, "y"), (0, 1), np.complex64),  # replicated over x
        ((64, 48), ("x", "y"), (0, 1), np.int32),
    ],
)
def test_host_path_agrees_with_the_compiled_one(monkeypatch, shape, spec, view_dims, dtype):
    """Where XLA refuses the per-device computation (its CPU backend with thousands of simulated
    devices), each block is reduced with numpy on the host: the same numbers come out."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x.flat[5] = np.nan
        x.flat[-3] = np.inf
    arr = put(x, (2, 4), ("x", "y"), spec)
    lay, want = summarize(arr, view_dims)

    tries: list[int] = []

    def refuse(*_a, **_k):
        tries.append(1)
        raise RuntimeError("INVALID_ARGUMENT: Multiprocess computations aren't implemented")

    monkeypatch.setattr(S, "_REFUSED", {})  # this test's refusals stay in this test
    monkeypatch.setattr(S, "_device_rows", refuse)
    _, got = summarize(arr, view_dims)
    assert_same_summary(got, want, lay, x)
    # refused once on this many devices: the next summary goes to the host at once
    _, again = summarize(arr, view_dims)
    assert len(tries) == 1
    assert_same_summary(again, want, lay, x)
    # too much data to copy out: the original error, which the widget shows in words
    monkeypatch.setattr(S, "HOST_FALLBACK_BYTES", 16)
    with pytest.raises(RuntimeError, match="Multiprocess"):
        summarize(arr, view_dims)


@pytest.mark.parametrize(
    ("shard", "dims", "thumb", "pool"),
    [
        ((64, 64), (0, 1), (11, 11), (6, 6)),  # edge-padded windows (4096 devices)
        ((64, 48), (0, 1), (8, 8), (8, 6)),  # exact windows
        ((5, 7, 9), (2, 0), (5, 2), (2, 3)),  # 3-D, transposed, other dim averaged, padded
        ((1, 30), (0, 1), (1, 4), (1, 8)),  # one row, padded columns
        ((40,), (0,), (1, 7), (1, 6)),  # 1-D
    ],
)
def test_host_thumbnails_equal_padded_pooling(shard, dims, thumb, pool):
    """The host pools a stack of blocks without copying them into a padded array: the same
    pixels as numpy's edge padding then window means, and as the compiled (jnp) path."""
    ys = np.random.default_rng(0).standard_normal((6, *shard)).astype(np.float32)
    plan = S.Plan(dims, thumb, pool, values=False)
    got = S._thumbnails(ys, plan, np)
    for b in range(ys.shape[0]):
        other = tuple(d for d in range(len(shard)) if d not in dims)
        img = ys[b].mean(axis=other) if other else ys[b]
        img = img.T if len(dims) == 2 and dims[0] > dims[1] else img
        img = img if img.ndim == 2 else img[None, :]
        (th, tw), (fh, fw) = thumb, pool
        img = np.pad(img, ((0, th * fh - img.shape[0]), (0, tw * fw - img.shape[1])), "edge")
        want = img.reshape(th, fh, tw, fw).mean(axis=(1, 3)).reshape(-1)
        np.testing.assert_allclose(got[b], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            np.asarray(S._thumbnail(jnp.asarray(ys[b]), plan, jnp)), want, rtol=1e-5, atol=1e-6
        )


def test_only_xla_s_fixed_refusal_is_remembered(monkeypatch):
    """Another failure of the per-device pass (a passing one) is served by the host path this
    time, and the compiled pass is tried again next time."""
    arr = put(np.ones((16, 8), np.float32), (2, 4), ("x", "y"), ("x", "y"))
    tries: list[int] = []

    def fail(*_a, **_k):
        tries.append(1)
        raise RuntimeError("RESOURCE_EXHAUSTED: out of memory")

    monkeypatch.setattr(S, "_REFUSED", {})
    monkeypatch.setattr(S, "_device_rows", fail)
    for _ in range(2):
        _, got = summarize(arr)
        assert got.status == "ready"
    assert len(tries) == 2 and S._REFUSED == {}


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("path", ["compiled", "host", "host_inplace"])
def test_large_finite_values_keep_finite_statistics(monkeypatch, path, masked):
    """Finite values past ~1.8e19 square past float32's range, and sums of values near its
    largest overflow: the mean and std are still finite and numpy's (float64), on the compiled
    per-device path, the host fallback and numpy's in-place reduction; with NaN and Inf in a
    block (masked statistics) too."""
    x = np.exp(np.arange(64, dtype=np.float64)).reshape(8, 8)  # up to 2.3e27
    x[0, :4] = [3e38, -3e38, 1e38, 2e38]  # sums and differences past float32's largest
    x = x.astype(np.float32)
    if masked:
        x[0, 5], x[7, 7] = np.nan, -np.inf
    arr = put(x, (2, 4), ("x", "y"), ("x", "y"))
    monkeypatch.setattr(S, "_REFUSED", {})
    if path == "host":
        monkeypatch.setattr(
            S, "_device_rows", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("no"))
        )
    lay, got = summarize(arr, pix=64, vals=0) if path != "host_inplace" else (None, None)
    if path == "host_inplace":
        lay = layout_of(arr)
        got = S.summarize(arr, lay, S.plan_for(lay, (0, 1), 64, 0), prefer_host=True)
    assert got.status == "ready"
    for blk, row in zip(lay.blocks, got.stats, strict=True):
        want = ref_stats(x[blk.slices])
        assert np.all(np.isfinite(row[:4])), (blk.index, row)
        np.testing.assert_allclose(row[:4], want[:4], rtol=1e-5)
        assert list(row[4:]) == want[4:]


def test_no_finite_value_sends_no_heatmap():
    """An all-NaN (or all-Inf) array has no heatmap to draw: the statistics send no thumbnails
    (not flat ones that read as zeros) and the static picture draws none either; a partly NaN
    array still sends its heatmap (NaN pixels as 0, as documented)."""
    from shardwidget import ShardView
    from shardwidget.render.scene import heat_range

    for fill in (np.nan, np.inf):
        v = ShardView(put(np.full((8, 8), fill, np.float32), (2, 4), ("x", "y"), ("x", "y")))
        assert v._stats["status"] == "ready" and v._stats["thumbs"] is None
        assert all(s == [0, 0] for s in v._stats["thumb_shapes"])
        assert heat_range(v.summary) is None
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    x[:4] = np.nan
    v = ShardView(put(x, (2, 4), ("x", "y"), ("x", "y")))
    assert v._stats["thumbs"] is not None and (v._stats["vmin"], v._stats["vmax"]) == (32.0, 63.0)
