"""Statistics of any re-layout, from one pass over the source array.

A re-layout moves data but never changes it. So the source array is summarized once, over a
grid of tiles fine enough that every block boundary any layout on ``n_devices`` can produce
falls on a tile edge: along a dimension of size n, a layout cuts into k equal parts with
k | n and k | n_devices, so every cut is a multiple of n / gcd(n, n_devices). Each tile keeps
count, sum, M2 (squared deviations from its own mean), min, max and NaN/Inf counts. A block's
statistics are then combined on the host (Chan et al.'s parallel variance, in float64) and its
thumbnail is pooled from tile means: no device work per re-layout.

One compiled program per shard shape (dtype, memory kind, devices) computes the tiles, shared by
every layout with that shard shape (:mod:`.shard_program`): every device reduces what it holds.
When the grid would be too large (thousands of devices) or the array spans processes,
:func:`tile_summary` returns None and the caller uses the per-layout path in summary.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, SingleDeviceSharding

from . import mesh as mesh_mod
from . import shard_program
from . import summary as summary_mod
from .layout import Layout, layout_of_sharding
from .summary import MAX_THUMB_SIDE, Plan, Summary, thumb_rows

MAX_TILES = 1 << 17
MAX_TILES_PER_DIM = 256


@dataclass(frozen=True)
class Tiles:
    """Partial statistics of a source array over a fixed grid of equal tiles, computed once:
    the statistics of any layout whose blocks fall on tile edges follow from them on the host
    (count, sum and M2 combine exactly; min, max, NaN and Inf counts reduce)."""

    shape: tuple[int, ...]  # array shape
    grid: tuple[int, ...]  # tiles per dimension
    count: np.ndarray  # float64[grid]: finite elements per tile
    sum: np.ndarray
    m2: np.ndarray
    min: np.ndarray
    max: np.ndarray
    nan: np.ndarray
    inf: np.ndarray
    host: np.ndarray | None  # the whole array, only when it is tiny (for block values)

    @property
    def tile(self) -> tuple[int, ...]:
        """The shape of one tile."""
        return tuple(n // g for n, g in zip(self.shape, self.grid, strict=True))

    @property
    def finite(self) -> bool:
        """No NaN or Inf anywhere. (With them, a thumbnail pixel here is the mean of its finite
        values, while summary.summarize makes it non-finite: the two paths draw it apart.)"""
        return not (self.nan.any() or self.inf.any())

    def aligned(self, layout: Layout) -> bool:
        """True when ``layout`` is of this array and every block boundary lies on a tile edge."""
        t = self.tile
        return layout.shape == self.shape and all(
            a % t[d] == 0 and b % t[d] == 0
            for blk in layout.blocks
            for d, (a, b) in enumerate(blk.index)
        )


def _smallest_factor(n: int) -> int:
    for p in range(2, math.isqrt(n) + 1):
        if n % p == 0:
            return p
    return n


def tile_grid(shape: tuple[int, ...], n_devices: int) -> tuple[int, ...] | None:
    """Tiles per dimension: multiples of gcd(n, n_devices), refined while within MAX_TILES."""
    grid = [math.gcd(n, n_devices) for n in shape]
    if math.prod(grid) > MAX_TILES:
        return None
    while True:
        # refine the coarsest dimension that can still be split
        cands = [d for d, n in enumerate(shape) if grid[d] < min(n, MAX_TILES_PER_DIM)]
        if not cands:
            return tuple(grid)
        d = min(cands, key=lambda i: grid[i])
        f = _smallest_factor(shape[d] // grid[d])
        if math.prod(grid) * f > MAX_TILES or grid[d] * f > MAX_TILES_PER_DIM:
            return tuple(grid)
        grid[d] *= f


def _tile_fn(local: tuple[int, ...], dtype: Any, key: Any) -> Any:
    """The per-block tile partials of one local block of shape ``local``: key is (the block's
    own tile grid, masked). Run by shard_program: one program per shard shape, every layout."""

    local_grid, masked = key
    is_complex = jnp.issubdtype(dtype, jnp.complexfloating)
    split = tuple(x for g, n in zip(local_grid, local, strict=True) for x in (g, n // g))
    inner = tuple(range(1, 2 * len(local), 2))

    def fn(x: Any) -> tuple[Any, ...]:
        # Sums and M2 of each tile are of y / (its largest |y|), returned with that scale: no
        # float32 sum or square of finite values overflows (the host scales back in float64).
        y = (jnp.abs(x) if is_complex else x).astype(jnp.float32).reshape(split)
        fin = jnp.isfinite(y) if masked else None
        sc = summary_mod.unit(y, jnp, fin, inner)
        z = y / sc
        if fin is not None:
            cnt = fin.sum(inner).astype(jnp.float32)
            s = jnp.where(fin, z, 0).sum(inner)
            mean = s / jnp.maximum(cnt, 1)
            m2 = jnp.where(fin, (z - jnp.expand_dims(mean, inner)) ** 2, 0).sum(inner)
            mn = jnp.where(fin, y, jnp.inf).min(inner)
            mx = jnp.where(fin, y, -jnp.inf).max(inner)
            nan = jnp.isnan(y).sum(inner).astype(jnp.float32)
            inf = jnp.isinf(y).sum(inner).astype(jnp.float32)
            return sc.squeeze(inner), cnt, s, m2, mn, mx, nan, inf
        s = z.sum(inner)
        mean = s / (z.size // max(1, s.size))
        m2 = ((z - jnp.expand_dims(mean, inner)) ** 2).sum(inner)
        return sc.squeeze(inner), s, m2, y.min(inner), y.max(inner)

    return fn


def _tile_partials(
    arr: jax.Array, grid: tuple[int, ...], local: tuple[int, ...], masked: bool
) -> list[np.ndarray] | None:
    """The tile partials of arr over ``grid`` (each float64[grid]): every device tiles its own
    block in the program shared by all layouts with this shard shape, and the host places each
    distinct block's tiles where the block lies."""
    shape = tuple(int(n) for n in arr.shape)
    local_grid = tuple(g * ln // n for g, ln, n in zip(grid, local, shape, strict=True))
    per = shard_program.run(arr, _tile_fn, (local_grid, masked))
    if per is None:
        return None
    tile = tuple(n // g for n, g in zip(shape, grid, strict=True))
    outs: list[np.ndarray] | None = None
    for s in arr.addressable_shards:
        rows = per[int(s.device.id)]
        if outs is None:
            outs = [np.empty(grid, np.float64) for _ in rows]
        at = tuple(
            slice((sl.start or 0) // t, (sl.start or 0) // t + g)
            for sl, t, g in zip(s.index, tile, local_grid, strict=True)
        )
        for o, r in zip(outs, rows, strict=True):
            o[at] = r
    return outs


def tile_summary(arr: jax.Array, n_devices: int, values_budget: int) -> Tiles | None:
    """Tile partials of arr, or None when this path does not apply (see module doc)."""

    if not arr.is_fully_addressable or arr.size == 0:
        return None
    arr = mesh_mod.xla_safe_array(arr)  # (axis names XLA cannot read would abort the process)
    if not isinstance(arr.sharding, NamedSharding | SingleDeviceSharding):
        return None
    if jax.numpy.issubdtype(arr.dtype, jax.dtypes.extended):
        return None
    shape = tuple(int(n) for n in arr.shape)
    grid = tile_grid(shape, n_devices)
    if grid is None:
        return None
    local = layout_of_sharding(arr.sharding, shape, arr.dtype).shard_shape
    if any(ln % (n // g) for ln, n, g in zip(local, shape, grid, strict=True)):
        return None  # the source's own blocks do not fall on tile edges (a mesh of fewer devices)
    per = 16 if np.iscomplexobj(np.zeros((), arr.dtype)) else 8
    host = np.asarray(arr) if arr.size * per <= values_budget else None
    parts = _tile_partials(arr, grid, local, False)
    if parts is None:
        return None
    sc, s, m2, mn, mx = parts
    tile_n = float(math.prod(shape) // max(1, math.prod(grid)))
    if np.isfinite(s).all() and np.isfinite(mn).all() and np.isfinite(mx).all():
        zeros = np.zeros_like(s)
        n = np.full_like(s, tile_n)
        return Tiles(shape, grid, n, s * sc, m2 * sc * sc, mn, mx, zeros, zeros, host)
    parts = _tile_partials(arr, grid, local, True)
    assert parts is not None  # (None only for 0-d arrays, which returned above)
    sc, cnt, s, m2, mn, mx, nan, inf = parts
    return Tiles(shape, grid, cnt, s * sc, m2 * sc * sc, mn, mx, nan, inf, host)


def _block_grid(tiles: Tiles, layout: Layout) -> tuple[int, ...]:
    return tuple(n // s if s else 1 for n, s in zip(tiles.shape, layout.shard_shape, strict=True))


def _per_block(a: np.ndarray, nb: tuple[int, ...], op: str) -> np.ndarray:
    """Reduce a tile array to one value per block: shape nb."""
    split = tuple(x for b, g in zip(nb, a.shape, strict=True) for x in (b, g // b))
    inner = tuple(range(1, 2 * len(nb), 2))
    r = a.reshape(split)
    return getattr(r, op)(axis=inner) if inner else r


def summarize(
    tiles: Tiles, layout: Layout, thumb_dims: tuple[int, ...], pixel_budget: int, want_values: bool
) -> Summary:
    """The Summary of an aligned ``layout`` from the tiles alone: no device work."""
    nb = _block_grid(tiles, layout)
    cnt = _per_block(tiles.count, nb, "sum")
    tot = _per_block(tiles.sum, nb, "sum")
    mean = tot / np.maximum(cnt, 1)
    # Chan et al.: M2 = sum of tile M2 + sum n_i (mean_i - mean)^2, per block.
    tile_mean = tiles.sum / np.maximum(tiles.count, 1)
    up = tuple(x for b, g in zip(nb, tiles.grid, strict=True) for x in (b, g // b))
    inner = tuple(range(1, 2 * len(nb), 2))
    dev = tiles.count.reshape(up) * (tile_mean.reshape(up) - np.expand_dims(mean, inner)) ** 2
    m2 = _per_block(tiles.m2, nb, "sum") + (dev.sum(axis=inner) if inner else dev)
    std = np.sqrt(np.maximum(m2, 0) / np.maximum(cnt, 1))
    none = cnt == 0  # no finite value in the block: its statistics are undefined
    mn = _per_block(tiles.min, nb, "min")
    mx = _per_block(tiles.max, nb, "max")
    nan = _per_block(tiles.nan, nb, "sum")
    inf = _per_block(tiles.inf, nb, "sum")
    # a tile without a finite value has no mean to draw: NaN (not 0, which reads as zeros)
    tile_px = np.where(tiles.count > 0, tile_mean, np.nan)
    thumbs_grid = _thumbs(tiles, tile_px, nb, layout, thumb_dims, pixel_budget)
    shard = layout.shard_shape
    stats: list[np.ndarray | None] = []
    values: list[np.ndarray | None] = []
    thumbs: list[np.ndarray | None] = []
    for blk in layout.blocks:
        at = tuple(a // s if s else 0 for (a, _), s in zip(blk.index, shard, strict=True))
        row = np.array([mn[at], mx[at], mean[at], std[at], nan[at], inf[at]])
        if none[at]:
            row[:4] = np.nan
        stats.append(row)
        vals = None
        if want_values and tiles.host is not None:
            vals = tiles.host[blk.slices].reshape(-1)
        values.append(vals)
        thumbs.append(thumbs_grid(at) if thumbs_grid is not None else None)
    return Summary("ready", "", stats, values, thumbs, thumb_dims)


def _thumbs(
    tiles: Tiles,
    tile_mean: np.ndarray,
    nb: tuple[int, ...],
    layout: Layout,
    dims: tuple[int, ...],
    pixel_budget: int,
) -> Any:
    if not dims:
        return None
    other = tuple(d for d in range(len(tiles.shape)) if d not in dims)
    # Average over the other dimensions within each block (equal-size tiles: mean of means),
    # keeping which block along them: img[o_1, ..., o_k, rows, cols].
    split: list[int] = []
    for d, g in enumerate(tiles.grid):
        split += [nb[d], g // nb[d]] if d in other else [g]
    img = tile_mean.reshape(split)
    pos, inner = 0, []
    for d in range(len(tiles.grid)):
        if d in other:
            inner.append(pos + 1)
            pos += 2
        else:
            pos += 1
    img = img.mean(axis=tuple(inner)) if inner else img
    # now axes are: one per dim in order (block index for other dims, tiles for view dims)
    img = np.moveaxis(img, list(dims), list(range(len(other), len(other) + len(dims))))
    if len(dims) == 1:
        img = img[..., None, :]
    br = nb[dims[0]] if len(dims) == 2 else 1
    bc = nb[dims[-1]]
    tr, tc = img.shape[-2] // br, img.shape[-1] // bc  # tiles per block along rows / columns
    per_block = max(1, pixel_budget // max(1, len(layout.blocks)))
    shard = layout.shard_shape
    h = shard[dims[0]] if len(dims) == 2 else 1
    side = thumb_rows(per_block, h, shard[dims[-1]])
    th = max(d for d in range(1, min(tr, side) + 1) if tr % d == 0)
    tw_cap = min(tc, MAX_THUMB_SIDE, max(1, per_block // th))
    tw = max(d for d in range(1, tw_cap + 1) if tc % d == 0)
    lead = img.shape[:-2]
    pooled = img.reshape(*lead, br, th, tr // th, bc, tw, tc // tw).mean(axis=(-4, -1))

    def of(at: tuple[int, ...]) -> np.ndarray:
        r = at[dims[0]] if len(dims) == 2 else 0
        c = at[dims[-1]]
        o = tuple(at[d] for d in other)
        return np.asarray(pooled[(*o, r, slice(None), c, slice(None))])

    return of


class LeafStats:
    """Per-shard statistics of a function view's input and output leaves, layout after layout,
    with as little work per new layout as the data allows (one per view).

    Inputs are the user's own arguments re-laid out: their data never changes. Each argument's
    tile partials (:mod:`.tiles`) are computed once, from its first placed copy, and serve every
    aligned layout on the host in a few ms, as in the array view (arguments with NaN or Inf
    excepted: their thumbnails would differ, see Tiles.finite). Outputs, and inputs the tiles
    do not serve, are new data for each layout: numpy reduces them where the shards already sit
    in host memory (the CPU backend: no copy and no compile per layout), elsewhere the compiled
    per-device pass of :func:`summarize` (cached per sharding, shape, dtype and plan).
    """

    def __init__(self, n_devices: int, values_budget: int) -> None:
        self._n_devices = n_devices
        self._values_budget = values_budget
        self._tiles: dict[int, Any] = {}  # argument index -> its Tiles, or None (no tiles)

    def summarize(
        self, arr: jax.Array, layout: Layout, plan: Plan, pixel_budget: int, argument: int | None
    ) -> Summary:
        """Summary of arr: the placed copy of array argument number `argument`, or (None) an
        output. plan and pixel_budget as for :func:`plan_for`."""
        if argument is not None:
            if argument not in self._tiles:
                self._tiles[argument] = tile_summary(arr, self._n_devices, self._values_budget)
            t = self._tiles[argument]
            if t is not None and t.finite and t.aligned(layout):
                return summarize(t, layout, plan.thumb_dims, pixel_budget, plan.values)
        return summary_mod.summarize(arr, layout, plan, prefer_host=True)
