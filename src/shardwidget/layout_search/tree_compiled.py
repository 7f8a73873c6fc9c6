"""A tree's candidates checked by the target's compiler, where the user asks
(``view.search(..., compile=True)``): an identity of the tree laid out as the candidate,
compiled by the target's compiler (libtpu, XLA's GPU or CPU compiler, in its helper); its
argument bytes per device are what a device holds there. They equal the data's bytes but on a
TPU, whose tiled layout pads a block's small minor dimensions (a block of 64 f32 takes 128)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax

from ..model import spec as spec_mod
from ..plan import compile as compile_mod
from . import candidates as c
from .target import Target


def _identity(*leaves: Any) -> tuple[Any, ...]:
    return leaves


def argument_bytes(
    leaves: Sequence[tuple[tuple[int, ...], str]], p: c.Proposal, target: Target
) -> int:
    """The compiler's argument bytes per device of the tree's leaves ((shape, dtype) each)
    laid out as ``p`` on ``target``'s chips (PlanError in words where it cannot compile)."""
    mesh = target.mesh_for(p.mesh_shape, p.axis_names)
    args = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in leaves]
    specs = [spec_mod.to_partition_spec(s) for s in p.specs]
    planned = compile_mod.plan(_identity, *args, mesh=mesh, in_specs=specs)
    return int(planned.memory["arguments"])
