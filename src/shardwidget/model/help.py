"""Help out of an error: what to change when a layout fails. Imports no widget code.

- An indivisible shape (3×5 on 8 devices): :func:`suggest_layouts` lists the meshes and specs
  that lay the array out as it is, and the padding (``jnp.pad``) that makes a sharded layout
  fit; :func:`indivisible_hint` is the short form a refused layout's message ends with.
- A ``ShardingTypeError`` under Explicit axes: :func:`explicit_fixes` tries switching the
  Explicit axes to Auto (compiling each candidate) and :func:`sharding_type_hint` names the
  control of those that compile, and the op's ``out_sharding=`` otherwise.

Every suggestion is computed, never guessed: a layout suggested passes the same validation as
the controls (and ``jax.device_put`` accepts it); an axis-type switch suggested compiled.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax

from . import mesh as mesh_mod
from . import spec as spec_mod

MAX_SUGGESTIONS = 6


@dataclass(frozen=True)
class Suggestion:
    """A layout that works for an array's shape on the kernel's devices.

    Attributes:
        mesh_shape / axis_names: the mesh (its product is the device count).
        spec: the normalized spec, one tuple of axis names per dimension.
        pad: (before, after) per dimension for ``jnp.pad``; all zeros when the array fits as is.
        shards: how many distinct blocks the layout has (more: less memory per device).
    """

    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    spec: spec_mod.NormSpec
    pad: tuple[tuple[int, int], ...]
    shards: int

    @property
    def padded(self) -> bool:
        """Whether the array needs padding first."""
        return any(after for _, after in self.pad)

    @property
    def code(self) -> str:
        """Self-contained Python of this layout, for an array bound to ``x``."""
        shape = _tuple(self.mesh_shape)
        names = _tuple([repr(a) for a in self.axis_names])
        lines = ["import jax"]
        if self.padded:
            lines.append("import jax.numpy as jnp")
        lines.append("from jax.sharding import NamedSharding, PartitionSpec as P")
        lines.append("")
        if self.padded:
            lines.append(f"x = jnp.pad(x, {tuple(self.pad)})")
        lines.append(f"mesh = jax.make_mesh({shape}, {names})")
        lines.append(f"x = jax.device_put(x, NamedSharding(mesh, {spec_mod.to_text(self.spec)}))")
        return "\n".join(lines)

    def __str__(self) -> str:
        mesh = " × ".join(f"{a}={s}" for a, s in zip(self.axis_names, self.mesh_shape, strict=True))
        pad = f"pad {_pad_text(self.pad)}, then " if self.padded else ""
        return f"{pad}mesh {mesh}, {spec_mod.to_text(self.spec)} ({self.shards} blocks)"


def _tuple(items: Sequence[object]) -> str:
    return "(" + ", ".join(map(str, items)) + ("," if len(items) == 1 else "") + ")"


def _pad_text(pad: Sequence[tuple[int, int]], name: str = "x") -> str:
    return f"jnp.pad({name}, " + repr(tuple(tuple(p) for p in pad)) + ")"


def _shards(spec: spec_mod.NormSpec, axes: dict[str, int]) -> list[int]:
    return [math.prod(axes[a] for a in entry) for entry in spec]


def _specs(ndim: int, names: Sequence[str]) -> list[spec_mod.NormSpec]:
    """Every spec that puts each axis on at most one dimension (axis order within a dimension
    as in the mesh: the other orders give the same blocks on other devices)."""
    choices: list[list[int]] = [[]]
    for _ in names:  # each axis: unused (-1) or the dimension it shards
        choices = [[*c, d] for c in choices for d in range(-1, ndim)]
    specs = []
    for c in choices:
        spec = tuple(
            tuple(n for n, d in zip(names, c, strict=True) if d == dim) for dim in range(ndim)
        )
        specs.append(spec)
    return specs


def _layouts(shape: Sequence[int], n_devices: int, max_axes: int) -> list[Suggestion]:
    """Every mesh (1 to max_axes axes, sizes > 1) and spec, with the padding it needs."""
    out = []
    for k in range(1, max_axes + 1):
        names = tuple(mesh_mod.default_axis_names(k))
        for ms in mesh_mod.factorizations(n_devices, k):
            if k > 1 and 1 in ms:  # a size-1 axis adds nothing a shorter mesh lacks
                continue
            axes = dict(zip(names, ms, strict=True))
            for spec in _specs(len(shape), names):
                parts = _shards(spec, axes)
                pad = tuple((0, -n % p) for n, p in zip(shape, parts, strict=True))
                out.append(Suggestion(tuple(ms), names, spec, pad, math.prod(parts)))
    return out


def suggest_layouts(
    shape: Sequence[int] | Any, n_devices: int | None = None, max_axes: int = 2
) -> list[Suggestion]:
    """Layouts for an array of this shape (or an array) on n_devices (default: every device).

    First those that fit as they are, most blocks first (replicated last); then, when no
    sharded layout fits, the paddings that shard over every device with the fewest extra
    elements. At most MAX_SUGGESTIONS of each."""
    if not isinstance(shape, Sequence):
        shape = tuple(int(d) for d in shape.shape)
    if n_devices is None:
        n_devices = len(jax.devices())
    shape = tuple(int(d) for d in shape)
    every = _layouts(shape, n_devices, max(1, min(max_axes, mesh_mod.MAX_AXES)))
    fit = sorted((s for s in every if not s.padded), key=lambda s: (-s.shards, s.mesh_shape))
    fit = _distinct(fit)
    out = fit[:MAX_SUGGESTIONS]
    if not fit or fit[0].shards < n_devices:

        def extra(s: Suggestion) -> int:
            return math.prod(n + after for n, (_, after) in zip(shape, s.pad, strict=True))

        padded = [s for s in every if s.padded and s.shards == n_devices]
        out += _distinct(sorted(padded, key=lambda s: (extra(s), s.mesh_shape)))[:MAX_SUGGESTIONS]
    return out


def _distinct(items: list[Suggestion]) -> list[Suggestion]:
    """One suggestion per (blocks per dimension, padding): the others put the same blocks on
    other devices."""
    seen: set[Any] = set()
    out = []
    for s in items:
        axes = dict(zip(s.axis_names, s.mesh_shape, strict=True))
        key = (tuple(_shards(s.spec, axes)), s.pad)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def pad_for(
    shape: Sequence[int], spec: spec_mod.NormSpec, axes: dict[str, int]
) -> tuple[tuple[int, int], ...]:
    """(0, k) per dimension: the padding that makes each dimension divisible by its shards.
    ValueError when a dimension has no shards to divide into (an axis of size 0 or less)."""
    shards = _shards(spec, axes)
    if any(p < 1 for p in shards):
        raise ValueError(f"mesh axis sizes must be positive: {axes}")
    return tuple((0, -n % p) for n, p in zip(shape, shards, strict=True))


def indivisible_hint(
    shape: Sequence[int], spec: spec_mod.NormSpec, axes: dict[str, int], name: str = ""
) -> str:
    """The short hint a refused indivisible layout ends with ("" when every dimension
    divides): the padding that makes this spec fit (of the argument ``name``, in a function
    view), and where to find layouts that fit."""
    pad = pad_for(shape, spec, axes)
    if not any(after for _, after in pad):
        return ""
    padded = "×".join(str(n + a) for n, (_, a) in zip(shape, pad, strict=True))
    what = f" {name}" if name else ""
    return (
        f"Or pad{what} to {padded} first: {_pad_text(pad, name or 'x')}. "
        f"shardwidget.suggest_layouts({name or 'x'}) lists meshes and specs that fit"
    )


# ------------------------------------------------------------------ Explicit axes
def explicit_fixes(
    state: Any, compiles: Callable[[Any], bool]
) -> list[tuple[tuple[str, ...], Any]]:
    """(axes switched to Auto, the state) of the candidates that ``compiles``: each Explicit
    axis alone (the first that compiles is enough), else all of them at once. ``state`` is a
    dataclass with axis_names and axis_types (a TraceState)."""
    explicit = [
        n for n, t in zip(state.axis_names, state.axis_types, strict=True) if t == "explicit"
    ]
    candidates = [(a,) for a in explicit] if len(explicit) > 1 else []
    candidates.append(tuple(explicit))
    out: list[tuple[tuple[str, ...], Any]] = []
    for switch in candidates if explicit else []:
        types = tuple(
            "auto" if n in switch else t
            for n, t in zip(state.axis_names, state.axis_types, strict=True)
        )
        cand = dataclasses.replace(state, axis_types=types)
        if compiles(cand):
            out.append((switch, cand))
            if len(switch) == 1:
                break  # one axis is the smallest change: enough to name
    return out


def sharding_type_hint(fixes: list[tuple[tuple[str, ...], Any]], mode: str) -> str:
    """What the error message says to do (the controls first)."""
    op = "give the op an out_sharding=P(...)" if mode == "jit" else "set out_specs"
    if not fixes:
        return f"To fix it: {op}, or reshard its inputs (jax.sharding.reshard)."
    switch, st = fixes[0]
    axes = ", ".join(map(repr, switch))
    return (
        f"To fix it: switch {axes} to Auto (axis type control; "
        f"axis_types={list(st.axis_types)} compiles), or keep "
        f"{'it' if len(switch) == 1 else 'them'} Explicit and {op}."
    )
