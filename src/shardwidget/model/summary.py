"""Per-shard statistics, small values and heatmap thumbnails, in one compiled call for all shards.

For a NamedSharding the work runs inside ``jax.shard_map`` over the sharding's own mesh and spec:
each device reduces its own block where it lives, and only a few numbers per device come back to
the host. The compiled function is cached per (sharding, shape, dtype, thumbnail geometry). A
per-shard Python loop of jitted reductions would compile once per device (22 s at 256 devices),
and copying the array to the host would ship it whole: neither happens here.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding
from jax.typing import DTypeLike

from . import mesh as mesh_mod
from . import shard_program
from . import spec as spec_mod
from .gspmd import as_named
from .layout import Layout, layout_of_sharding

MAX_VALUES = 64  # a block with at most this many elements sends its values
MAX_THUMB_SIDE = 32


@dataclass(frozen=True)
class Plan:
    """What to compute for one view; part of the compile-cache key."""

    thumb_dims: tuple[int, ...]  # the array dims drawn (0, 1 or 2 of them)
    thumb_shape: tuple[int, int]  # (rows, cols) of each block's thumbnail; (0, 0) for none
    pool: tuple[int, int]  # pooling window (rows, cols) in elements
    values: bool
    masked: bool = False  # NaN/Inf-aware statistics (slower; only when the data has them)


@dataclass
class Summary:
    """Per-block data of one layout, in the order of ``Layout.blocks``: what the grid draws.

    Attributes: ``status`` ("ready" or "unavailable", with ``message`` saying why); ``stats``,
    per block min, max, mean, std, NaN count, Inf count (float64[6]); ``values``, a block's
    values when it has at most MAX_VALUES elements; ``thumbs``, a pooled-mean heatmap of the
    block over ``thumb_dims`` (float64[rows, cols]). Entries are None where a block has none.
    ``partials``: for an unreduced layout (``Layout.partial``), the statistics of each device's
    partial value, in the order of ``Layout.devices`` (None: not on this process); the blocks'
    own ``stats`` are then None (no device holds a block's value, only its partials). None for
    every other layout.
    """

    status: str  # "ready" | "unavailable"
    message: str
    stats: list[np.ndarray | None]  # per block: float64[6]
    values: list[np.ndarray | None]  # per block: flat values (native dtype) or None
    thumbs: list[np.ndarray | None]  # per block: float64[rows, cols] or None
    thumb_dims: tuple[int, ...]
    partials: list[np.ndarray | None] | None = None

    @staticmethod
    def unavailable(n_blocks: int, why: str) -> Summary:
        """A summary with no data for ``n_blocks`` blocks, saying ``why`` (shown in the view)."""
        return Summary(
            "unavailable", why, [None] * n_blocks, [None] * n_blocks, [None] * n_blocks, ()
        )


def _thumb_dims(ndim: int, view_dims: tuple[int, ...]) -> tuple[int, ...]:
    if ndim == 0:
        return ()
    dims = tuple(d for d in view_dims if 0 <= d < ndim)
    if len(dims) == 2 and dims[0] != dims[1]:
        return dims
    if ndim == 1:
        return (0,)
    return (0, 1)


def thumb_rows(per_block: int, h: int, w: int) -> int:
    """How many thumbnail rows to aim for with ``per_block`` pixels for an h × w block: the
    block's own aspect (a tall 2048×1024 block gets a tall 32×16 thumbnail, not 16×32), at most
    MAX_THUMB_SIDE."""
    return max(1, min(MAX_THUMB_SIDE, math.isqrt(per_block * max(1, h) // max(1, w))))


def plan_for(
    layout: Layout, view_dims: tuple[int, ...], pixel_budget: int, values_budget: int
) -> Plan:
    """Choose thumbnail size and whether values go along, within byte budgets for all blocks."""
    shard = layout.shard_shape
    n_elems = math.prod(shard) if shard else 1
    n_blocks = max(1, len(layout.blocks))
    per_value = 16 if "complex" in layout.dtype else 8
    values = n_elems <= MAX_VALUES and n_elems * n_blocks * per_value <= values_budget
    dims = _thumb_dims(len(layout.shape), view_dims)
    if not dims or n_elems == 0:
        return Plan(dims, (0, 0), (1, 1), values)
    h = shard[dims[0]] if len(dims) == 2 else 1
    w = shard[dims[-1]]
    per_block = max(1, pixel_budget // n_blocks)
    th = min(h, thumb_rows(per_block, h, w))
    tw = min(w, MAX_THUMB_SIDE, max(1, per_block // max(1, th)))
    th = min(th, max(1, per_block // tw))
    fh, fw = math.ceil(h / th), math.ceil(w / tw)
    return Plan(dims, (math.ceil(h / fh), math.ceil(w / fw)), (fh, fw), values)


def unit(y: object, xp: types.ModuleType, finite: object = None, axis: object = None) -> Any:
    """The unit that float32 statistics of `y` are summed in (of its `finite` values where
    given; along `axis`, kept as size-1 dims): an eighth of the largest |y|, so that no sum or
    square of finite values overflows, and XLA's reciprocal of it (it divides by multiplying)
    stays a normal float32 (a flushed 1 / 3e38 made every value 0). 1 for all zeros and NaN
    (which then propagates)."""
    mag = xp.abs(y if finite is None else xp.where(finite, y, 0))
    s = mag.max(axis=axis, keepdims=axis is not None)
    return xp.where(s > 0, s * xp.float32(0.125), xp.float32(1))


def _mean_std(
    y: jax.Array | np.ndarray,
    xp: types.ModuleType,
    finite: jax.Array | np.ndarray | None = None,
    axis: int | None = None,
) -> tuple[Any, Any]:
    """Mean and std of float32 `y` (of its `finite` values where given; along `axis`, None:
    all), computed in :func:`unit` of y and scaled back: no sum or square of finite values
    overflows float32, however large they are (NaN and Inf propagate where `finite` is None)."""
    keep = axis is not None
    s = unit(y, xp, finite, axis)
    z = y / s
    if finite is None:
        n = y.size if axis is None else y.shape[axis]
        mz = z.sum(axis=axis, keepdims=keep) / xp.float32(n)
        d2 = ((z - mz) ** 2).sum(axis=axis) / xp.float32(n)
    else:
        n = xp.maximum(finite.sum(axis=axis, keepdims=keep), 1).astype(xp.float32)
        mz = xp.where(finite, z, 0).sum(axis=axis, keepdims=keep) / n
        d2 = xp.where(finite, (z - mz) ** 2, 0).sum(axis=axis) / (n if axis is None else n[..., 0])
    if keep:
        s, mz = s[..., 0], mz[..., 0]
    return mz * s, xp.sqrt(d2) * s


def _plain_stats(y: jax.Array | np.ndarray, xp: types.ModuleType) -> Any:
    """min, max, mean, std of float32 `y` in two passes, and zero counts. NaN and Inf propagate,
    which the caller reads as "use the masked statistics". `xp` as in _masked_stats; the mean
    and std as _mean_std (no overflow for large finite values)."""
    mean, std = _mean_std(y, xp)
    zero = xp.float32(0)
    return xp.stack([y.min(), y.max(), mean, std, zero, zero]).astype(xp.float32)


def _masked_stats(y: jax.Array | np.ndarray, xp: types.ModuleType) -> Any:
    """min, max, mean, std of the finite values of float32 `y`, and its NaN and Inf counts.
    `xp` is jax.numpy (inside the compiled per-device call) or numpy (the host path)."""
    finite = xp.isfinite(y)
    mean, std = _mean_std(y, xp, finite)
    return xp.stack(
        [
            xp.where(finite, y, xp.inf).min(),
            xp.where(finite, y, -xp.inf).max(),
            mean,
            std,
            xp.isnan(y).sum().astype(xp.float32),
            xp.isinf(y).sum().astype(xp.float32),
        ]
    ).astype(xp.float32)


def _thumbnail(y: jax.Array | np.ndarray, plan: Plan, xp: types.ModuleType) -> Any:
    """The (th·tw,) pooled-mean heatmap of float32 block `y` over plan.thumb_dims (the other
    dims averaged). Non-finite values make their pixel non-finite; the host draws those as 0."""
    return _thumbnails(y[None], plan, xp)[0]


def _thumbnails(ys: jax.Array | np.ndarray, plan: Plan, xp: types.ModuleType) -> Any:
    """:func:`_thumbnail` of a stack of equal float32 blocks ``ys[b, ...]``: (b, th·tw)."""
    th, tw = plan.thumb_shape
    dims = tuple(d + 1 for d in plan.thumb_dims)
    other = tuple(d for d in range(1, ys.ndim) if d not in dims)
    img = ys.mean(axis=other) if other else ys
    if len(dims) == 2 and dims[0] > dims[1]:
        img = xp.swapaxes(img, 1, 2)
    if img.ndim == 2:
        img = img[:, None, :]
    fh, fw = plan.pool
    if xp is np:  # np.pad would copy the whole stack (35 ms for 4096 blocks of 64×64)
        img = _pool_rows(np.asarray(img), th, fh)  # (already numpy: no copy)
        img = np.swapaxes(_pool_rows(np.swapaxes(img, 1, 2), tw, fw), 1, 2)
        return np.ascontiguousarray(img).reshape(img.shape[0], -1)
    ph, pw = th * fh - img.shape[1], tw * fw - img.shape[2]
    if ph or pw:  # inside XLA the edge padding fuses into the reduction
        img = xp.pad(img, ((0, 0), (0, ph), (0, pw)), mode="edge")
    return img.reshape(img.shape[0], th, fh, tw, fw).mean(axis=(2, 4)).reshape(img.shape[0], -1)


def _pool_rows(img: np.ndarray, t: int, f: int) -> np.ndarray:
    """Means of windows of f rows (axis -2) into t rows, the last window padded with copies of
    the last row (as ``np.pad(mode="edge")`` would, without copying the input). Sums strided
    row slices: each is contiguous along the rows, so numpy adds whole rows at a time."""
    if f == 1:
        return img
    k = (t - 1) * f  # rows in the full windows
    main = img[..., 0:k:f, :].copy()
    for j in range(1, f):
        main += img[..., j:k:f, :]
    pad = t * f - img.shape[-2]
    last = img[..., k:, :].sum(axis=-2) + pad * img[..., -1, :]
    return np.concatenate([main, last[..., None, :]], axis=-2) / np.float32(f)


def _block_fn(shard_shape: tuple[int, ...], dtype: DTypeLike, plan: Plan) -> Any:
    """The per-block computation: (stats[1,6], values[1,k], thumb[1,p]) of one local block."""

    is_complex = jnp.issubdtype(dtype, jnp.complexfloating)

    def fn(x: jax.Array) -> tuple[Any, ...]:
        y = jnp.abs(x) if is_complex else x
        y = y.astype(jnp.float32)
        stats = (_masked_stats(y, jnp) if plan.masked else _plain_stats(y, jnp))[None]
        vals = x.reshape(1, -1) if plan.values else jnp.zeros((1, 0), x.dtype)
        th, tw = plan.thumb_shape
        if th * tw == 0:
            return stats, vals, jnp.zeros((1, 0), jnp.float32)
        return stats, vals, _thumbnail(y, plan, jnp)[None]

    return fn


@lru_cache(maxsize=32)
def _compiled(
    sharding: jax.sharding.Sharding, shape: tuple[int, ...], dtype: np.dtype, plan: Plan
) -> Any:

    shard_shape = layout_of_sharding(sharding, shape, dtype).shard_shape
    fn = _block_fn(shard_shape, dtype, plan)
    if isinstance(sharding, SingleDeviceSharding):
        return jax.jit(fn)
    assert isinstance(sharding, NamedSharding)
    mesh = sharding.mesh
    out = PartitionSpec(tuple(mesh.axis_names))
    return jax.jit(
        jax.shard_map(
            fn, mesh=mesh, in_specs=sharding.spec, out_specs=(out, out, out), check_vma=False
        )
    )


REFUSAL = "Multiprocess computations aren't implemented"
"""XLA's CPU backend's refusal of any computation over thousands of devices."""
_REFUSED: dict[tuple[str, int], Exception] = {}
"""(platform, device count) -> XLA's refusal of the per-device pass there, which the host path
then served: later summaries on that many devices go to the host path without a new attempt."""


def clear_caches() -> None:
    """Forget every compiled statistics function (benchmarks time a layout never seen) and every
    refusal remembered."""
    _compiled.cache_clear()
    shard_program.clear()
    _REFUSED.clear()


def _rows(out: jax.Array, sharding: jax.sharding.Sharding) -> dict[int, np.ndarray]:
    """Device id -> its row of a (n_devices, k) result, reading only this process's shards."""

    if out.is_fully_addressable:
        host = np.array(out)  # a copy: rows of a view would keep `out` alive on CPU
        if isinstance(sharding, NamedSharding):
            ids = [int(d.id) for d in sharding.mesh.devices.flat]
        else:
            (device,) = _devices(sharding)
            ids = [int(device.id)]
        return {d: host[i] for i, d in enumerate(ids)}
    return {int(s.device.id): np.array(s.data)[0] for s in out.addressable_shards}


def _devices(sharding: jax.sharding.Sharding) -> set[jax.Device]:
    """The sharding's devices, typed (jaxlib declares ``device_set``'s items without stubs)."""
    devices: set[jax.Device] = sharding.device_set
    return devices


def _block_rows(shard_shape: tuple[int, ...], dtype: DTypeLike, plan: Plan) -> Any:
    """_block_fn's rows without their leading 1: (stats[6], values[k], thumb[p])."""
    fn = _block_fn(shard_shape, dtype, plan)
    return lambda x: tuple(o[0] for o in fn(x))


def _shared_rows(
    arr: jax.Array, plan: Plan
) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray], dict[int, np.ndarray]] | None:
    """Per-device rows from the program shared by every layout with arr's shard shape
    (shard_program: compiled once per shard shape, dtype, memory kind and devices); None for a
    0-d array."""
    per = shard_program.run(arr, _block_rows, plan)
    if per is None:
        return None
    stat_rows = {d: r[0] for d, r in per.items()}
    if not plan.masked and not all(np.isfinite(r[:4]).all() for r in stat_rows.values()):
        # NaN or Inf somewhere: one more call, with statistics of the finite values and counts.
        return _shared_rows(arr, dataclasses.replace(plan, masked=True))
    val_rows = {d: r[1] for d, r in per.items()} if plan.values else {}
    thumb_rows = {d: r[2] for d, r in per.items()} if plan.thumb_shape[0] else {}
    return stat_rows, val_rows, thumb_rows


def _device_rows(
    arr: jax.Array, plan: Plan
) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Per-device rows of statistics, values and thumbnails from the compiled per-device call:
    the shared program of the shard shape; a 0-d array's one value per device read on the host
    (nothing to compile); an unreduced one's partials over arr's own sharding."""
    if not spec_mod.unreduced_of(getattr(arr.sharding, "spec", None)):
        if arr.ndim == 0:
            return _host_rows(arr, plan, None)
        shared = _shared_rows(arr, plan)
        if shared is not None:
            return shared
    sharding, shape = arr.sharding, tuple(arr.shape)
    stats_out, vals_out, thumb_out = _compiled(sharding, shape, arr.dtype, plan)(arr)
    stat_rows = _rows(stats_out, sharding)
    if not plan.masked and not all(np.isfinite(r[:4]).all() for r in stat_rows.values()):
        # NaN or Inf somewhere: one more call, with statistics of the finite values and counts.
        plan = dataclasses.replace(plan, masked=True)
        stats_out, vals_out, thumb_out = _compiled(sharding, shape, arr.dtype, plan)(arr)
        stat_rows = _rows(stats_out, sharding)
    val_rows = _rows(vals_out, sharding) if plan.values else {}
    thumb_rows = _rows(thumb_out, sharding) if plan.thumb_shape[0] else {}
    return stat_rows, val_rows, thumb_rows


HOST_FALLBACK_BYTES = 256 << 20  # the most shard data the host path copies out of devices


HOST_STATS_BYTES = 64 << 20  # the most shard data numpy reduces in place instead of compiling


HOST_CHUNK_BYTES = 16 << 20  # blocks reduced together on the host: at most this much data


def _host_blocks(xs: np.ndarray, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What _block_fn computes, in numpy, for a stack of equal blocks ``xs[b, ...]`` at once:
    (stats[b, 6], values[b, k], thumbs[b, p]); the plain statistics, or the NaN/Inf-aware ones
    for a block with non-finite values. One vectorized pass per chunk, not a loop per block
    (4096 blocks took 0.5 s one by one)."""
    b = xs.shape[0]
    y = (np.abs(xs) if np.iscomplexobj(xs) else xs).astype(np.float32, copy=False)
    flat = y.reshape(b, -1)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/Inf propagate, as on devices
        mean, std = _mean_std(flat, np, axis=1)  # as _plain_stats
        zero = np.zeros(b, np.float32)
        stats = np.stack([flat.min(axis=1), flat.max(axis=1), mean, std, zero, zero], axis=1)
    for j in np.flatnonzero(~np.isfinite(stats[:, :4]).all(axis=1)):
        stats[j] = _masked_stats(flat[j], np)
    # xs is a stacked copy: rows of it never keep a device buffer (jax.live_arrays()) alive
    vals = xs.reshape(b, -1) if plan.values else np.zeros((b, 0), xs.dtype)
    th, tw = plan.thumb_shape
    thumbs = _thumbnails(y, plan, np) if th * tw else np.zeros((b, 0), np.float32)
    return stats.astype(np.float32, copy=False), vals, thumbs


def _distinct_shards(
    arr: jax.Array, shards: Sequence[jax.Shard] | None = None
) -> dict[Any, jax.Shard]:
    """This process's shards of arr (or ``shards``, its addressable_shards already read: JAX
    makes a new Shard object per device each time, 25 ms at 4096 devices), one per distinct
    block (replicas share a block)."""
    first: dict[Any, jax.Shard] = {}
    for s in arr.addressable_shards if shards is None else shards:
        first.setdefault(tuple((sl.start, sl.stop) for sl in s.index), s)
    return first


def in_host_memory(arr: jax.Array) -> bool:
    """Whether numpy can reduce arr's shards where they are: on the CPU backend device memory
    is host memory (np.asarray of a shard copies nothing), within HOST_STATS_BYTES."""
    if any(d.platform != "cpu" for d in _devices(arr.sharding)):
        return False
    return sum(int(s.data.nbytes) for s in _distinct_shards(arr).values()) <= HOST_STATS_BYTES


def _host_rows(
    arr: jax.Array, plan: Plan, why: Exception | None
) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Per-device rows as _rows gives them, computed on the host from this process's shards
    (each distinct block once). Raises `why` (when given) if the shards are too big to copy."""
    shards = arr.addressable_shards
    first = _distinct_shards(arr, shards)
    total = sum(s.data.nbytes for s in first.values())
    if why is not None and total > HOST_FALLBACK_BYTES:
        raise why
    keys = list(first)
    per_block = max(1, total // max(1, len(keys)))
    step = max(1, HOST_CHUNK_BYTES // per_block)
    done: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for i in range(0, len(keys), step):
        chunk = keys[i : i + step]
        stack = np.stack([np.asarray(first[k].data) for k in chunk])
        stats, vals, thumbs = _host_blocks(stack, plan)
        for j, k in enumerate(chunk):
            done[k] = (stats[j], vals[j], thumbs[j])
    stat_rows: dict[int, np.ndarray] = {}
    val_rows: dict[int, np.ndarray] = {}
    thumb_rows: dict[int, np.ndarray] = {}
    for s in shards:
        d = int(s.device.id)
        key = tuple((sl.start, sl.stop) for sl in s.index)
        stat_rows[d], val_rows[d], thumb_rows[d] = done[key]
    return stat_rows, val_rows, thumb_rows


def summarize(arr: jax.Array, layout: Layout, plan: Plan, *, prefer_host: bool = False) -> Summary:
    """Statistics, values and thumbnails of every block of arr (as described by layout), in one
    compiled per-device pass; with prefer_host, by numpy where :func:`in_host_memory` allows."""

    n = len(layout.blocks)
    if jax.numpy.issubdtype(arr.dtype, jax.dtypes.extended):
        return Summary.unavailable(n, "PRNG key arrays: only the layout is shown, not key data")
    if arr.size == 0:
        return Summary.unavailable(n, "the array has no elements")
    arr = mesh_mod.xla_safe_array(arr)  # (axis names XLA cannot read would abort the process)
    sharding = arr.sharding
    if not isinstance(sharding, NamedSharding | SingleDeviceSharding):
        return _other_sharding(arr, layout, plan)
    if layout.partial:  # JAX has no shards of an unreduced array: the per-device pass only
        return _partials(arr, layout, plan)
    first_device: Any = next(iter(sharding.device_set))
    where = (str(first_device.platform), len(sharding.device_set))
    if prefer_host and in_host_memory(arr):
        stat_rows, val_rows, thumb_rows = _host_rows(arr, plan, None)
    elif where in _REFUSED:  # XLA refused before on this many devices: no new attempt
        stat_rows, val_rows, thumb_rows = _host_rows(arr, plan, _REFUSED[where])
    else:
        try:
            stat_rows, val_rows, thumb_rows = _device_rows(arr, plan)
        except Exception as e:
            # XLA refused to run the per-device computation. The one case seen: XLA's CPU
            # backend with thousands of simulated devices ("Multiprocess computations aren't
            # implemented on the CPU backend", from about 4096 devices, for any jit). There the
            # shards already live in host memory: reduce each one with numpy, within a budget.
            stat_rows, val_rows, thumb_rows = _host_rows(arr, plan, e)
            if REFUSAL in str(e):  # XLA's fixed limit, not a passing failure: don't ask again
                _REFUSED[where] = e  # (each attempt costs ~30 ms at 4096 devices)
    return _assemble(layout, plan, stat_rows, val_rows, thumb_rows)


def _assemble(
    layout: Layout,
    plan: Plan,
    stat_rows: dict[int, np.ndarray],
    val_rows: dict[int, np.ndarray],
    thumb_rows: dict[int, np.ndarray],
) -> Summary:
    """The Summary of per-device rows, one per block (its first holder on this process)."""
    stats: list[np.ndarray | None] = []
    values: list[np.ndarray | None] = []
    thumbs: list[np.ndarray | None] = []
    for blk in layout.blocks:
        dev = next((d for d in blk.devices if d in stat_rows), None)
        if dev is None:
            stats.append(None)
            values.append(None)
            thumbs.append(None)
            continue
        row = stat_rows[dev].astype(np.float64)
        if row[4] + row[5] >= math.prod(blk.shape):  # no finite value: undefined statistics
            row[:4] = np.nan
        stats.append(row)
        values.append(val_rows[dev] if plan.values else None)
        thumbs.append(
            thumb_rows[dev].astype(np.float64).reshape(plan.thumb_shape)
            if plan.thumb_shape[0]
            else None
        )
    return Summary("ready", "", stats, values, thumbs, plan.thumb_dims)


def _other_sharding(arr: jax.Array, layout: Layout, plan: Plan) -> Summary:
    """Statistics of an array with another sharding (GSPMDSharding, HloSharding-based): through
    the NamedSharding with the same blocks on the same devices when one exists (.gspmd; the
    compiled per-device pass over it), else each distinct shard on the host, within a budget."""

    same = as_named(arr)  # the same buffers, as the equivalent NamedSharding
    if same is not None:
        return summarize(same, layout, plan)
    try:
        stat_rows, val_rows, thumb_rows = _host_rows(
            arr, plan, ValueError("the shards are too large to copy to the host")
        )
    except ValueError as e:
        why = f"statistics of a {type(arr.sharding).__name__} custom layout: {e}"
        return Summary.unavailable(len(layout.blocks), why)
    return _assemble(layout, plan, stat_rows, val_rows, thumb_rows)


def _partials(arr: jax.Array, layout: Layout, plan: Plan) -> Summary:
    """Statistics of each device's partial value of an unreduced array (shard_map over its own
    spec, unreduced set included, hands each device its partial)."""
    plan = dataclasses.replace(plan, thumb_shape=(0, 0), pool=(1, 1), values=False)
    try:
        stat_rows, _, _ = _device_rows(arr, plan)
    except Exception as e:  # jax 0.8 refuses to reduce an unreduced operand in a shard_map
        why = str(e).strip().split("\n")[0]
        return Summary.unavailable(
            len(layout.blocks),
            f"each device's partial value cannot be read on this JAX ({why}); jax 0.9+ reads it",
        )
    partials: list[np.ndarray | None] = []
    for dev in layout.devices:
        row = stat_rows.get(dev.id)
        partials.append(None if row is None else row.astype(np.float64))
    n = len(layout.blocks)
    return Summary("ready", "", [None] * n, [None] * n, [None] * n, (), partials)
