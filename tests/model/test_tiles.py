"""Statistics from tile partials of the source must equal numpy on every block of any layout."""

import math

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from shardwidget.model import mesh as mesh_mod
from shardwidget.model import summary as S
from shardwidget.model import tiles as T
from shardwidget.model.layout import layout_of
from shardwidget.model.state import build_sharding
from tests.model.test_layout import layouts
from tests.model.test_summary import ref_stats

N = 8


def test_tile_grid_aligns_with_every_possible_cut():
    for shape in [(4096, 4096), (6, 8), (12, 5, 16), (7,), ()]:
        grid = T.tile_grid(shape, N)
        for n, g in zip(shape, grid, strict=True):
            assert n % g == 0
            assert g % math.gcd(n, N) == 0
    assert T.tile_grid((4096, 4096), 256) == (256, 256)
    assert T.tile_grid((4096, 4096), 4096) is None  # too fine: the per-layout path takes over


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layouts(),
    st.sampled_from([np.float32, np.int32, np.complex64, ml_dtypes.bfloat16]),
    st.booleans(),
)
def test_tile_stats_match_numpy_for_any_relayout(case, dtype, nonfinite):
    st_, shape = case
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 100 + 50).astype(dtype)
    if nonfinite and np.dtype(dtype).kind == "f" and x.size > 2:
        x.reshape(-1)[0] = np.nan
        x.reshape(-1)[-1] = np.inf
    src = jax.device_put(x)  # one device: the tiles come from the source
    tiles = T.tile_summary(src, N, values_budget=4096)
    assert tiles is not None
    mesh = mesh_mod.build_mesh(st_.mesh_shape, st_.axis_names, st_.axis_types)
    arr = jax.device_put(src, build_sharding(st_, mesh))
    lay = layout_of(arr)
    assert tiles.aligned(lay)
    dims = (0, 1) if len(shape) > 1 else (0,)
    s = T.summarize(tiles, lay, dims, 8192, want_values=True)
    host = np.asarray(x)
    for blk, got, vals in zip(lay.blocks, s.stats, s.values, strict=True):
        np.testing.assert_allclose(got, ref_stats(host[blk.slices]), rtol=2e-3, atol=2e-2)
        if vals is not None:
            np.testing.assert_array_equal(vals, host[blk.slices].reshape(-1))


def test_tile_path_agrees_with_direct_path_and_thumbnails_are_means():
    x = np.random.default_rng(3).standard_normal((256, 128)).astype(np.float32)
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    src = jax.device_put(x, NamedSharding(mesh, P("y", None)))
    tiles = T.tile_summary(src, N, 0)
    arr = jax.device_put(src, NamedSharding(mesh, P("x", "y")))
    lay = layout_of(arr)
    via_tiles = T.summarize(tiles, lay, (0, 1), 8192, False)
    direct = S.summarize(arr, lay, S.plan_for(lay, (0, 1), 8192, 0))
    for a, b in zip(via_tiles.stats, direct.stats, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for blk, t in zip(lay.blocks, via_tiles.thumbs, strict=True):
        h, w = blk.shape
        th, tw = t.shape
        assert th <= 32
        assert tw <= 32
        ref = x[blk.slices].reshape(th, h // th, tw, w // tw).mean(axis=(1, 3))
        np.testing.assert_allclose(t, ref, rtol=1e-4, atol=1e-5)


def test_not_used_for_keys_and_empty():
    keys = jax.random.split(jax.random.key(0), 8)
    assert T.tile_summary(keys, N, 0) is None
    assert T.tile_summary(jax.numpy.zeros((0, 3)), N, 0) is None


@pytest.mark.parametrize("view_dims", [(0, 2), (2, 1)])
def test_3d_thumbnails_average_other_dims(view_dims):
    x = np.random.default_rng(1).standard_normal((4, 16, 8)).astype(np.float32)
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    arr = jax.device_put(x, NamedSharding(mesh, P("x", None, "y")))
    tiles = T.tile_summary(arr, N, 0)
    lay = layout_of(arr)
    s = T.summarize(tiles, lay, view_dims, 1 << 16, False)
    other = next(d for d in range(3) if d not in view_dims)
    for blk, t in zip(lay.blocks, s.thumbs, strict=True):
        ref = x[blk.slices].mean(axis=other)
        if view_dims[0] > view_dims[1]:
            ref = ref.T
        np.testing.assert_allclose(t, ref, rtol=1e-4, atol=1e-5)


def test_block_without_finite_values_via_tiles():
    x = np.ones((8, 8), np.float32)
    x[:4] = np.nan
    x[4:6] = np.inf
    src = jax.device_put(x)
    tiles = T.tile_summary(src, N, 0)
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    lay = layout_of(jax.device_put(src, NamedSharding(mesh, P("x", None))))
    s = T.summarize(tiles, lay, (0, 1), 8192, False)
    for blk, got in zip(lay.blocks, s.stats, strict=True):
        np.testing.assert_allclose(got, ref_stats(x[blk.slices]))
    assert np.isnan(s.stats[0][:4]).all()


@pytest.mark.parametrize("nonfinite", [False, True])
def test_tile_stats_of_large_finite_values_stay_finite(nonfinite):
    """Tiles whose values square (or sum) past float32's largest: every block's mean and std
    are numpy's, finite (the tiles are reduced in units of their largest |value| and scaled
    back in float64; XLA's reciprocal of that unit must not flush to 0)."""
    x = np.exp(np.arange(512 * 512, dtype=np.float64) % 80).reshape(512, 512)
    x[0, :4] = [3e38, -3e38, 1e38, 2e38]
    x = x.astype(np.float32)
    if nonfinite:
        x[1, 1], x[-1, -1] = np.nan, np.inf
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    arr = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
    tiles = T.tile_summary(arr, N, values_budget=0)
    assert tiles is not None and math.prod(tiles.tile) > 1
    for spec in [P("x", "y"), P("y", None), P()]:
        lay = layout_of(jax.device_put(arr, NamedSharding(mesh, spec)))
        s = T.summarize(tiles, lay, (0, 1), 8192, want_values=False)
        for blk, got in zip(lay.blocks, s.stats, strict=True):
            want = ref_stats(x[blk.slices])
            assert np.all(np.isfinite(got[:4])), (spec, blk.index, got)
            np.testing.assert_allclose(got[:4], want[:4], rtol=1e-5)
            assert list(got[4:]) == want[4:]
