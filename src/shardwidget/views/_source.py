"""The array a view shows, as the user gave it: a numpy array or scalar placed on a device, the
mesh it already lives on, a copy that can be re-laid out (summed first when it is unreduced), and
words for where it came from. No widget code.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from jax.sharding import NamedSharding

from .. import _jax
from ..model import gspmd
from ..model import spec as spec_mod
from ..model.pmap_axis import LABEL

if TYPE_CHECKING:
    pass


def coerce(obj: object) -> tuple[Any, str]:
    """(jax.Array, note) for what ShardView accepts; TypeError/ValueError naming what was given."""
    accepted = "a jax.Array, a numpy array or a Python/numpy scalar"
    if isinstance(obj, jax.core.Tracer):
        raise TypeError(
            f"ShardView got a tracer ({type(obj).__name__}, {getattr(obj, 'aval', '?')}): it shows "
            "concrete arrays, so call it outside jit/vmap/grad, on the function's result"
        )
    if isinstance(obj, jax.Array):
        if obj.is_deleted():
            raise ValueError(
                f"ShardView got a deleted jax.Array (shape {tuple(obj.shape)}, "
                f"{obj.dtype}); it was donated or deleted, so there is nothing to show"
            )
        return obj, ""
    if isinstance(obj, np.ndarray | np.generic | bool | int | float | complex):
        if isinstance(obj, np.ndarray) and obj.dtype == object:
            raise TypeError(f"ShardView got a numpy array of dtype object; expected {accepted}")
        arr = jax.device_put(obj)
        kind = "numpy array" if isinstance(obj, np.ndarray) else f"{type(obj).__name__} scalar"
        dev = next(iter(arr.devices()))
        return arr, f"{kind} placed on {dev} (jax.device_put with no sharding)"
    raise TypeError(f"ShardView got {type(obj).__name__}; expected {accepted}")


def default_view_dims(ndim: int, spec: Any) -> list[int]:
    if ndim == 0:
        return []
    if ndim == 1:
        return [0]
    sharded = [d for d in range(ndim) if spec is not None and spec[d]]
    rest = [d for d in range(ndim) if d not in sharded]
    return sorted((sharded + rest)[:2])


def in_kernel() -> bool:
    """Whether this runs in an IPython kernel (whose event loop runs between messages; other
    running loops, such as one a library left set in this thread, may never come back)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


class PartialSource(ValueError):
    """The view's original array is unreduced: its transfer to another layout is not modelled."""


def own_mesh(arr: jax.Array) -> tuple[Any | None, dict[str, str] | None]:
    """(the mesh of arr's own layout, axis renames) for the controls: a NamedSharding's mesh
    (pmap's internal axis renamed to LABEL, a mesh of the same devices), a GSPMD tile
    assignment's mesh, a one-device mesh for one device; (None, None) for a custom layout."""

    sh = arr.sharding
    named = sh if isinstance(sh, NamedSharding) else gspmd.named_equivalent(sh, tuple(arr.shape))
    if named is not None:
        mesh = named.mesh
        unnamed = _jax.unnamed_pmap_axis(mesh.axis_names)
        if unnamed is None:
            return mesh, None
        names = tuple(LABEL if a == unnamed else a for a in mesh.axis_names)
        renamed = jax.sharding.Mesh(mesh.devices, names, axis_types=mesh.axis_types)
        return renamed, {unnamed: LABEL}
    devs = _jax.device_assignment(sh)
    if len(devs) == 1:
        return jax.sharding.Mesh(np.array(devs, dtype=object), ("x",)), None
    return None, None


def movable(arr: jax.Array) -> jax.Array:
    """arr in a form jax.device_put moves to any sharding: unreduced partials summed, a GSPMD
    layout as its equivalent NamedSharding (the same buffers)."""
    if isinstance(arr.sharding, NamedSharding):
        return _summed(arr)
    named = gspmd.as_named(arr)
    return named if named is not None else arr


def _summed(arr: jax.Array) -> jax.Array:
    """arr itself, or for an unreduced array (partial sums on each device) the array it stands
    for: the partials summed over the unreduced axes, laid out as its partitions. device_put
    cannot move an unreduced array (JAX has no shard indices for it); a jit with that output
    sharding makes XLA sum them (an all-reduce over the unreduced axes)."""
    sharding = arr.sharding
    if not spec_mod.unreduced_of(getattr(sharding, "spec", None)):
        return arr
    summed: jax.Array = jax.jit(lambda a: a, out_shardings=spec_mod.partitions_only(sharding))(arr)
    return summed


def source_of(arr: jax.Array, original: jax.Array) -> str:
    return "original" if arr is original else "resharded"


def _process_index() -> int:
    return int(jax.process_index())
