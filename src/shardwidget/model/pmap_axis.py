"""pmap's unnamed mesh axis, relabelled for a reader: JAX names it with an internal name
(:data:`shardwidget._jax.PMAP_INTERNAL_AXIS`), which the views show as :data:`LABEL` in their
traits, types and specs (the shardings themselves keep JAX's name)."""

from __future__ import annotations

import dataclasses

from . import spec as spec_mod
from .layout import Layout

LABEL = "pmap"
"""What the views call that unnamed axis (in traits, types, specs): JAX's name is internal."""


def renamed(spec: spec_mod.NormSpec, old: str, new: str) -> spec_mod.NormSpec:
    """spec with mesh axis old called new."""
    return tuple(tuple(new if a == old else a for a in entry) for entry in spec)


def relabel(lay: Layout) -> Layout:
    """lay with pmap's internal axis name replaced by LABEL (unchanged without it)."""
    if lay.mesh is None:
        return lay
    unnamed = lay.mesh.pmap_axis  # (read by the adapter with the mesh)
    if unnamed is None:
        return lay
    names = tuple(LABEL if a == unnamed else a for a in lay.mesh.axis_names)
    spec = None if lay.spec is None else renamed(lay.spec, unnamed, LABEL)
    mesh = dataclasses.replace(lay.mesh, axis_names=names, pmap_axis=None)
    return dataclasses.replace(lay, mesh=mesh, spec=spec)
