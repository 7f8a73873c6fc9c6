"""One compiled statistics program per shard shape, shared by every layout that has it.

A per-device statistics pass compiled over an array's own sharding is a new XLA program for
every layout: on a GPU, where a compile costs 0.1 to 2.6 s, a re-layout from ``P('a')`` to
``P('b')`` to ``P('c')`` of a 2 × 2 × 2 mesh (the same shard shape each time) compiled one each
while JAX's ``device_put`` compiled nothing. The statistics of a block depend only on its data,
so here every layout is first re-viewed, without a copy, as one stack of its shards: this
process's shards, each on its own device, concatenated along dimension 0 over a one-axis mesh
of those devices in id order (``jax.make_array_from_single_device_arrays`` on the shards'
own buffers). Every layout with the same shard shape, dtype and memory kind on the same
devices is then the same input to the same program: it is compiled once (per backend and
device set, as JAX binds an executable to its devices) and served from the cache after.

Shards in a host memory kind (``pinned_host``, ``unpinned_host``) are moved to device memory
inside the program (XLA computes only on device memory: "memory_space of all inputs passed to
select_n must be the same"), shard by shard, with nothing kept after the call.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any, TypeVar

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from numpy.typing import DTypeLike

from .. import _jax

NAME = "shardwidget_statistics"
"""The name JAX gives each compile of the program (jax.monitoring's fun_name: jit(NAME))."""

K = TypeVar("K", bound=Hashable)
"""What a block function is made for beyond its shard shape and dtype (a summary's Plan)."""

AXIS = "shards"
"""The name of the one mesh axis the shards are stacked over."""

BlockFn = Callable[[Any], tuple[Any, ...]]
"""The per-block computation: one local block (of the shard shape) -> a tuple of arrays."""


def stacked(arr: jax.Array) -> tuple[Any, list[Any], tuple[int, ...]] | None:
    """(the stack of arr's addressable shards as one array, their devices in stack order, the
    shard shape), no copy; None for a 0-d array (no dimension to stack along)."""

    if arr.ndim == 0:
        return None
    shards = sorted(arr.addressable_shards, key=lambda s: s.device.id)
    devices = [s.device for s in shards]
    local = tuple(int(n) for n in shards[0].data.shape)
    mesh = Mesh(np.array(devices, dtype=object), (AXIS,))
    kind = getattr(arr.sharding, "memory_kind", None)
    sharding = NamedSharding(mesh, PartitionSpec(AXIS), memory_kind=kind)
    shape = (local[0] * len(devices), *local[1:])
    whole = jax.make_array_from_single_device_arrays(shape, sharding, [s.data for s in shards])
    return whole, devices, local


@lru_cache(maxsize=64)
def _program(
    devices: tuple[Any, ...],
    local: tuple[int, ...],
    dtype: DTypeLike,
    memory_kind: str | None,
    key: Hashable,
    make: Callable[[tuple[int, ...], Any, Any], BlockFn],
) -> Any:

    fn = make(local, dtype, key)
    on_host = memory_kind is not None and memory_kind != "device"

    def shardwidget_statistics(x: object) -> tuple[Any, ...]:  # (JAX names compiles after it)
        if on_host:
            x = _jax.to_device_memory(x)
        return tuple(o[None] for o in fn(x))

    mesh = Mesh(np.array(devices, dtype=object), (AXIS,))
    spec = PartitionSpec(AXIS)
    body = shardwidget_statistics
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False))


def run(
    arr: jax.Array, make: Callable[[tuple[int, ...], Any, K], BlockFn], key: K
) -> dict[int, tuple[np.ndarray, ...]] | None:
    """Device id -> the host values of ``make(shard shape, dtype, key)`` applied to that device's
    shard of arr (each output without the stacking dimension), from one compiled program per
    (devices, shard shape, dtype, memory kind, make, key). ``make`` must be a module-level
    function (it is part of the cache key). None for a 0-d array."""
    got = stacked(arr)
    if got is None:
        return None
    whole, devices, local = got
    kind = getattr(arr.sharding, "memory_kind", None)
    prog = _program(tuple(devices), local, np.dtype(arr.dtype), kind, key, make)
    outs = [np.asarray(o) for o in prog(whole)]
    return {int(d.id): tuple(o[i] for o in outs) for i, d in enumerate(devices)}


def clear() -> None:
    """Forget every compiled program (benchmarks time a shard shape never seen)."""
    _program.cache_clear()
