"""GSPMD (HloSharding-based) and pmap layouts as a mesh and a PartitionSpec, where one
describes them.

A ``GSPMDSharding`` carries an XLA tile assignment: array dimensions cut into tiles, a device
(by its position in the sharding's device assignment) for each tile, and optionally a last
dimension of replicas. When that is all, the same blocks on the same devices are a
NamedSharding over a mesh shaped like the tile assignment, its devices in the assignment's
order, each cut dimension on its own axis. :func:`equivalent` reads that from the adapter's
record (:class:`~shardwidget._jax.record.ShardingRecord`: the tile assignment, or the one-axis
mesh a jax 0.7 ``PmapSharding`` stands for) and keeps it only when it puts the same blocks on
every device as JAX's ``devices_indices_map`` (also in the record); anything else (manual
subgroups, maximal shardings on one of several devices, ...) is a "custom layout".
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from .._jax.record import Index, MeshRecord, ShardingRecord, record_of
from .mesh import default_axis_names

CUSTOM = "custom layout"
"""What the views call a layout no mesh and spec describe."""

Entries = tuple[tuple[str, ...], ...]


def index_map(mesh: MeshRecord, spec: Entries, shape: tuple[int, ...]) -> dict[int, Index] | None:
    """Device id -> its block, for a mesh and spec (dimension d cut into the product of its
    axes' sizes, the first axis major; a size-0 dimension not cut); None when the spec does
    not lay the shape out evenly on the mesh."""
    if len(spec) > len(shape):
        return None
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    if any(a not in sizes for entry in spec for a in entry):
        return None
    padded = [spec[d] if d < len(spec) else () for d in range(len(shape))]
    cuts = [math.prod(sizes[a] for a in entry) for entry in padded]
    if any(n % c for n, c in zip(shape, cuts, strict=True)):
        return None
    where = list(np.ndindex(*mesh.axis_sizes)) if mesh.axis_sizes else [()]
    out: dict[int, Index] = {}
    for dev, coords in zip(mesh.device_ids, where, strict=True):
        at = dict(zip(mesh.axis_names, coords, strict=True))
        block = []
        for d, n in enumerate(shape):
            k = 0
            for a in padded[d]:
                k = k * sizes[a] + at[a]
            size = n // cuts[d]
            block.append((k * size, (k + 1) * size) if n else (0, 0))
        out[dev] = tuple(block)
    return out


def _tiled(rec: ShardingRecord) -> tuple[MeshRecord, Entries] | None:
    """(mesh, spec) read from the record's tile assignment, or None."""
    tile = rec.tile
    ndim = len(rec.shape)
    if tile is None or not tile.replicas_only or len(tile.dims) < ndim:
        return None
    n = len(tile.order)
    if n != math.prod(tile.dims) or sorted(tile.order) != list(range(n)) or n != len(rec.devices):
        return None
    kept = [d for d, k in enumerate(tile.dims) if k > 1] or [len(tile.dims) - 1]
    names = tuple(default_axis_names(len(kept)))
    mesh = MeshRecord(
        axis_names=names,
        axis_sizes=tuple(tile.dims[d] for d in kept),
        axis_types=("auto",) * len(kept),
        device_ids=tuple(rec.devices[i].id for i in tile.order),
    )
    spec = tuple((names[kept.index(d)],) if d in kept else () for d in range(ndim))
    return mesh, spec


def equivalent(rec: ShardingRecord) -> tuple[MeshRecord, Entries] | None:
    """The mesh and spec that put the same blocks on the same devices as a sharding without
    a mesh of its own (checked against the record's ``devices_indices_map``), or None."""
    if rec.sharding_type == "NamedSharding" or rec.indices is None:
        return None
    found = (rec.mesh, rec.spec) if rec.mesh is not None and rec.spec is not None else _tiled(rec)
    if found is None:
        return None
    mesh, spec = found
    return found if index_map(mesh, spec, rec.shape) == dict(rec.indices) else None


@lru_cache(maxsize=64)
def named_equivalent(sharding: jax.sharding.Sharding, shape: tuple[int, ...]) -> Any | None:
    """The NamedSharding that puts the same blocks on the same devices as this GSPMD (or
    pmap) sharding (checked with devices_indices_map), or None when no mesh and spec do
    ("custom layout")."""
    if isinstance(sharding, NamedSharding):
        return None
    found = equivalent(record_of(sharding, shape))
    if found is None:
        return None
    mesh, spec = found
    held: set[jax.Device] = sharding.device_set  # (typed: jaxlib's Device has no stubs)
    by_id = {int(d.id): d for d in held}
    devices = np.array([by_id[i] for i in mesh.device_ids], dtype=object)
    jmesh = jax.sharding.Mesh(
        devices.reshape(mesh.axis_sizes),
        mesh.axis_names,
        axis_types=(AxisType.Auto,) * len(mesh.axis_names),
    )
    pspec = PartitionSpec(*(e[0] if len(e) == 1 else (e or None) for e in spec))
    return NamedSharding(jmesh, pspec, memory_kind=sharding.memory_kind)


def as_named(arr: jax.Array) -> Any | None:
    """arr's own device buffers as an array with the equivalent NamedSharding (no copy), or
    None when none describes its layout. JAX's device_put from a GSPMDSharding to a mesh in
    another device order fails (an assertion in its reshard); from this view of it, it works."""
    named = named_equivalent(arr.sharding, tuple(int(d) for d in arr.shape))
    if named is None:
        return None
    shards = {s.device: s.data for s in arr.addressable_shards}
    order = named.addressable_devices_indices_map(tuple(arr.shape))
    return jax.make_array_from_single_device_arrays(
        tuple(arr.shape), named, [shards[d] for d in order]
    )
