"""Specs per argument leaf, as JAX reads them in a pytree of specs (a prefix, one spec for
every leaf, None for unspecified), and the mesh the arguments already live on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, SingleDeviceSharding

from .. import _jax
from ..model import state as state_mod
from ..model.spec import is_spec
from .result import Leaf


def _spec_like(v: object) -> bool:
    """A spec in any form the view takes: None, a PartitionSpec, or a list of entries."""
    if is_spec(v):
        return True
    return isinstance(v, list | tuple) and all(
        e is None
        or isinstance(e, str)
        or (isinstance(e, list | tuple) and all(isinstance(a, str) for a in e))
        for e in v
    )


class _Each:
    """The spec of every leaf under one prefix leaf (a box tree_map leaves alone)."""

    def __init__(self, specs: list[Any]) -> None:
        self.specs = specs


def leaf_specs(
    value: Any,
    full: Any,
    as_prefix: Callable[[Any], Any],
    keep: Sequence[int],
    what: str,
    of: str,
) -> list[Any]:
    """value as one spec per kept leaf of the pytree ``full`` (``keep``: the positions of the
    leaves that take a spec among all of full's leaves), read as JAX reads specs:

    - a PartitionSpec: that spec for every leaf;
    - a list with one spec-like entry per kept leaf: as it is (the view's own form);
    - a tuple or dict (or a list that is not one per leaf): a pytree prefix of full (after
      ``as_prefix``), each spec or None broadcast over the leaves below it.

    Raises ValueError in JAX's words when it is none of these."""
    if is_spec(value) and value is not None:
        return [value] * len(keep)
    seq = isinstance(value, list | tuple)
    if not seq and not isinstance(value, dict):
        raise ValueError(
            f"{what} must be a PartitionSpec, a tuple or dict (a pytree prefix of {of}) or a "
            f"list with one spec per array leaf; got {type(value).__name__}"
        )
    one_each = seq and len(value) == len(keep) and all(_spec_like(v) for v in value)
    if one_each and (isinstance(value, list) or not keep):
        return list(value)
    try:
        boxed = jax.tree.map(
            lambda s, sub: _Each([s] * len(jax.tree_util.tree_leaves(sub))),
            as_prefix(value),
            full,
            is_leaf=is_spec,
        )
    except (ValueError, TypeError) as e:
        if one_each:
            return list(value)
        if seq and all(_spec_like(v) for v in value):  # a flat list of specs: the count is off
            leaves = "array inputs" if what == "in_specs" else "outputs"
            raise ValueError(
                f"{what} has {len(value)} entries; the function has {len(keep)} {leaves} (or "
                f"give a single spec, or a tuple that is a pytree prefix of {of})"
            ) from None
        raise ValueError(
            f"{what} {value!r} is neither one spec per array leaf ({len(keep)}) nor a pytree "
            f"prefix of {of}: {str(e).strip()}"
        ) from None
    every = [
        s
        for box in jax.tree_util.tree_leaves(boxed, is_leaf=lambda v: isinstance(v, _Each))
        for s in box.specs
    ]
    return [every[i] for i in keep]


@dataclass
class Sharded:
    sharding: Any


def own_mesh(leaves: Sequence[Leaf]) -> Any:
    """The jax Mesh of the first leaf with a NamedSharding over a concrete mesh; else, for an
    array committed to one device (``jax.device_put(x, device)``: jax.jit runs there), a
    one-axis mesh of that device; else None."""

    for lf in leaves:
        sh = getattr(lf.value, "sharding", None)
        if isinstance(sh, NamedSharding) and isinstance(sh.mesh, jax.sharding.Mesh):
            return sh.mesh
    for lf in leaves:
        sh = getattr(lf.value, "sharding", None)
        if isinstance(sh, SingleDeviceSharding) and getattr(lf.value, "committed", False):
            (device,) = sh.device_set
            return jax.sharding.Mesh(np.array([device]), ("x",))
    return None


def jit_own_shardings(
    f: Any, args: Sequence[Any], kwargs: dict[str, Any], n: int
) -> tuple[list[Any], list[str | None], list[Any]]:
    """What a jitted f's own compile for (args, kwargs) does with its n array leaves:

    - per input leaf, its NamedSharding where not fully replicated (else None);
    - per input leaf, its memory kind (where f's in_shardings place a leaf that has no
      sharding of its own: numpy, as ``f(*args)`` places it);
    - per output leaf, its NamedSharding (memory kind included) where f gives out_shardings of
      its own, else [].

    All None (and []) when f does not compile for them (committed inputs it refuses, …); the
    input lists are all None when f's inputs are not the n leaves one for one."""

    none: list[Any] = [None] * n
    try:
        compiled = f.lower(*args, **kwargs).compile()
        shs = jax.tree_util.tree_leaves(compiled.input_shardings)
    except Exception:  # (committed inputs it refuses, pmap, …): the view's defaults
        return none, list(none), []
    outs: list[Any] = []
    if _jax.jit_has_out_shardings(f, tuple(args), kwargs):
        outs = jax.tree_util.tree_leaves(compiled.output_shardings)
        outs = [sh if isinstance(sh, NamedSharding) else None for sh in outs]
    if len(shs) != n:
        return none, list(none), outs
    ins = [
        sh if isinstance(sh, NamedSharding) and not sh.is_fully_replicated else None for sh in shs
    ]
    return ins, memory_kinds(shs, n), outs


def memory_kinds(shardings: Sequence[Any], n: int) -> list[str | None]:
    """The memory kind of each of n leaves' shardings ("pinned_host", …; None where a leaf has
    none, and for every leaf when the counts differ)."""
    if len(shardings) != n:
        return [None] * n
    return [getattr(sh, "memory_kind", None) for sh in shardings]


def as_called(
    structs: Sequence[Any], leaves: Sequence[Leaf], memory: Sequence[str | None]
) -> list[Any]:
    """structs as ``f(*args)`` traces the leaves: one with no sharding of its own (numpy) that
    f's own in_shardings place in another memory kind (``memory``, pinned_host) goes in
    without a sharding, as numpy does: JAX traces its value in device memory, so an output
    XLA lays out lands in device memory, as ``f(x)`` returns it (a struct in pinned_host
    would put it there). Every other leaf as laid out."""
    return [
        jax.ShapeDtypeStruct(s.shape, s.dtype)
        if getattr(lf.value, "sharding", None) is None and mk not in (None, "device")
        else s
        for s, lf, mk in zip(structs, leaves, memory, strict=True)
    ]


def jit_out_specs(
    own: Sequence[Any], own_mesh: object, mesh_key: object, shapes: Sequence[tuple[int, ...]]
) -> tuple[Any, ...]:
    """jit mode's default out_specs: a ``jax.jit(g, out_shardings=…)`` f's own output
    shardings (``own``, one per output leaf) where the state is on their mesh, as ``f(*args)``
    lays its outputs out; else None (XLA chooses)."""
    if len(own) != len(shapes):
        return (None,) * len(shapes)
    outs = []
    for sh, shape in zip(own, shapes, strict=True):
        st = state_mod.state_of_sharding(sh, len(shape)) if sh is not None else None
        same = st is not None and st.mesh_key == mesh_key and sh.mesh == own_mesh
        outs.append(st.spec if same and st is not None else None)
    return tuple(outs)


def pad_out_specs(out_specs: Sequence[Any], shapes: Sequence[tuple[int, ...]]) -> tuple[Any, ...]:
    """Each out_spec shorter than its output's rank padded with None entries, as JAX reads a
    short spec (P() is replicated for any rank); longer ones are left for check_outputs to
    refuse, and so are out_specs whose count differs from the outputs'."""
    if len(shapes) != len(out_specs):
        return tuple(out_specs)
    return tuple(
        s if s is None or len(s) >= len(shape) else (*s, *((),) * (len(shape) - len(s)))
        for s, shape in zip(out_specs, shapes, strict=True)
    )
