"""GSPMD (HloSharding-based) layouts as a mesh and a PartitionSpec, where one describes them.

A ``GSPMDSharding`` carries an XLA tile assignment: array dimensions cut into tiles, a device
(by its position in the sharding's device assignment) for each tile, and optionally a last
dimension of replicas. When that is all, the same blocks on the same devices are a
NamedSharding over a mesh shaped like the tile assignment, its devices in the assignment's
order, each cut dimension on its own axis. :func:`named_equivalent` builds that and keeps it
only when JAX's ``devices_indices_map`` of the two agree on every device; anything else (manual
subgroups, maximal shardings on one of several devices, ...) is a "custom layout".

This module reads the HloSharding of a GSPMDSharding (JAX-internal API): the one place that
does, so a JAX change breaks it alone (and arrays then read as custom layouts).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from .. import _jax
from .mesh import default_axis_names

CUSTOM = "custom layout"
"""What the views call a layout no mesh and spec describe."""


def _index_map(sharding: Any, shape: tuple[int, ...]) -> dict[int, tuple[tuple[int, int], ...]]:
    return {
        int(d.id): tuple(
            (s, s + 1) if isinstance(s, int) else s.indices(n)[:2]  # (int: a PmapSharding's)
            for s, n in zip(idx, shape, strict=True)
        )
        for d, idx in sharding.devices_indices_map(shape).items()
    }


def _tiled_mesh(sharding: Any, ndim: int) -> tuple[Any, tuple[Any, ...]] | None:
    """(jax Mesh, PartitionSpec entries) read from the tile assignment, or None."""

    hs = _jax.hlo_sharding(sharding)
    if hs is None:
        return None
    assignment = _jax.device_assignment(sharding)
    if hs.is_replicated():
        dims, order = [1] * ndim + [len(assignment)], list(range(len(assignment)))
    elif hs.is_tiled():
        dims = [int(d) for d in hs.tile_assignment_dimensions()]
        order = [int(i) for i in hs.tile_assignment_devices()]
        extra = len(dims) - ndim
        kinds = [str(t) for t in hs.subgroup_types()] if extra else []
        if extra < 0 or any("REPLICATED" not in k for k in kinds):
            return None  # manual / unreduced subgroups: no mesh and spec say that
    else:
        return None
    if len(order) != int(np.prod(dims)) or sorted(order) != list(range(len(order))):
        return None
    devices = np.array([assignment[i] for i in order], dtype=object).reshape(dims)
    kept = [d for d, n in enumerate(dims) if n > 1] or [len(dims) - 1]
    names = default_axis_names(len(kept))
    devices = devices.reshape([dims[d] for d in kept])
    mesh = jax.sharding.Mesh(devices, tuple(names), axis_types=(AxisType.Auto,) * len(kept))
    spec = tuple(names[kept.index(d)] if d in kept else None for d in range(ndim))
    return mesh, spec


@lru_cache(maxsize=64)
def named_equivalent(sharding: Any, shape: tuple[int, ...]) -> Any | None:
    """The NamedSharding that puts the same blocks on the same devices as this GSPMDSharding
    (checked with devices_indices_map), or None when no mesh and spec do ("custom layout")."""
    if isinstance(sharding, NamedSharding):
        return None
    pmapped = _jax.pmap_sharding_named(sharding, len(shape))  # (jax 0.7's pmap outputs)
    if pmapped is not None:
        return pmapped if _index_map(pmapped, shape) == _index_map(sharding, shape) else None
    if _jax.hlo_sharding(sharding) is None:
        return None
    try:
        found = _tiled_mesh(sharding, len(shape))
        if found is None:
            return None
        mesh, spec = found
        named = NamedSharding(
            mesh,
            PartitionSpec(*spec),  # type: ignore[no-untyped-call]
            memory_kind=sharding.memory_kind,
        )
        same = _index_map(named, shape) == _index_map(sharding, shape)
    except Exception:  # an HloSharding this reading does not cover: a custom layout
        return None
    return named if same else None


def as_named(arr: Any) -> Any | None:
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
