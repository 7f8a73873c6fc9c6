"""PartitionSpecs as plain data: normalization, text, and validation with precise messages.

A spec entry per array dimension is ``None`` (replicated), an axis name, or a list of axis names
(the dimension is split over their product, major to minor). Imports no widget code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
from jax.sharding import NamedSharding, PartitionSpec

from .._jax import spec_entries

SpecEntry = None | str | list[str]
NormSpec = tuple[tuple[str, ...], ...]  # () for a replicated dimension


def is_spec(v: object) -> bool:
    """A single spec as JAX reads one in a pytree of specs: a PartitionSpec, or None."""
    return v is None or isinstance(v, PartitionSpec)


def normalize(spec: Any, ndim: int) -> NormSpec:
    """Turn a PartitionSpec, list or tuple into one tuple of axis names per dimension.

    Entries beyond the spec's length are replicated. Raises ValueError for malformed entries or
    a spec longer than the array's rank.
    """
    if spec is None:
        entries: list[Any] = []
    elif isinstance(spec, str):
        raise ValueError(
            f"spec must be a list with one entry per dimension, not the string {spec!r}; "
            f"did you mean [{spec!r}]?"
        )
    else:
        try:
            entries = list(spec)
        except TypeError:
            raise ValueError(
                f"spec must be a PartitionSpec or a list, got {type(spec).__name__}"
            ) from None
    if len(entries) > ndim:
        raise ValueError(
            f"spec has {len(entries)} entries but the array has {ndim} dimension"
            f"{'' if ndim == 1 else 's'}: give at most one entry per dimension"
        )
    out: list[tuple[str, ...]] = []
    for dim, e in enumerate(entries):
        if e is None:
            out.append(())
        elif isinstance(e, str):
            out.append((e,))
        elif isinstance(e, list | tuple) and all(isinstance(a, str) for a in e):
            out.append(tuple(e))
        else:
            raise ValueError(
                f"dimension {dim}: spec entry {e!r} must be None, an axis name or a list of "
                "axis names"
            )
    out.extend(() for _ in range(ndim - len(out)))
    return tuple(out)


def to_wire(spec: NormSpec) -> list[SpecEntry]:
    """The trait form: None, 'x' or ['x', 'y'] per dimension."""
    out: list[SpecEntry] = []
    for axes in spec:
        if not axes:
            out.append(None)
        elif len(axes) == 1:
            out.append(axes[0])
        else:
            out.append(list(axes))
    return out


def to_partition_spec(spec: NormSpec) -> Any:
    """The jax PartitionSpec of a normalized spec."""
    return PartitionSpec(*(None if not a else a[0] if len(a) == 1 else tuple(a) for a in spec))


def unreduced_of(pspec: object, order: Sequence[str] = ()) -> tuple[str, ...]:
    """The unreduced axes of a jax PartitionSpec, in ``order`` (the mesh's axis order, as
    jax.typeof writes them) then sorted (() when it has none)."""
    return _ordered(getattr(pspec, "unreduced", ()) or (), order)


def reduced_of(pspec: jax.sharding.PartitionSpec, order: Sequence[str] = ()) -> tuple[str, ...]:
    """The reduced axes of a jax PartitionSpec (``P('x', reduced={'y'})``), as unreduced_of."""
    return _ordered(getattr(pspec, "reduced", ()) or (), order)


def _ordered(axes: Any, order: Sequence[str]) -> tuple[str, ...]:
    names = {str(a) for a in axes}
    return tuple(a for a in order if a in names) + tuple(sorted(names - set(order)))


def partitions_only(sharding: Any) -> Any:
    """A NamedSharding with its spec's unreduced / reduced sets dropped: the same blocks on the
    same devices. JAX's ``devices_indices_map`` (and so ``addressable_shards``, ``np.asarray``
    and ``device_put``) raises NotImplementedError for an unreduced spec; the geometry of the
    partitions is what each device's partial value covers."""
    pspec = sharding.spec
    if not (getattr(pspec, "unreduced", None) or getattr(pspec, "reduced", None)):
        return sharding
    return NamedSharding(
        sharding.mesh,
        PartitionSpec(*spec_entries(pspec)),
        memory_kind=sharding.memory_kind,
    )


def to_text(spec: NormSpec, unreduced: Sequence[str] = (), reduced: Sequence[str] = ()) -> str:
    """P('x', None, ('y', 'z')), with trailing replicated dimensions kept (they are informative);
    an unreduced set as JAX prints it: P('y', unreduced={'x'})."""
    parts = []
    for axes in spec:
        if not axes:
            parts.append("None")
        elif len(axes) == 1:
            parts.append(repr(axes[0]))
        else:
            parts.append("(" + ", ".join(map(repr, axes)) + ")")
    if unreduced:
        parts.append("unreduced={" + ", ".join(map(repr, sorted(unreduced))) + "}")
    if reduced:
        parts.append("reduced={" + ", ".join(map(repr, sorted(reduced))) + "}")
    return "P(" + ", ".join(parts) + ")"


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def validate(spec: NormSpec, shape: Sequence[int], axes: Mapping[str, int]) -> None:
    """Raise ValueError when spec cannot lay out an array of this shape on a mesh with these axes.

    ``axes`` maps axis name to size, in mesh order. Messages name the dimension, the sizes and
    what would work instead. The controls' ``sanitizeSpec`` (js/shared/spec.ts) keeps exactly
    the specs this accepts: js/tests/wire/spec_validity.gen.json pins the two.
    """
    names = list(axes)
    used: dict[str, int] = {}
    for dim, entry in enumerate(spec):
        for a in entry:
            if a not in axes:
                raise ValueError(
                    f"dimension {dim}: axis {a!r} is not in the mesh; its axes are "
                    + ", ".join(f"{n!r} (size {axes[n]})" for n in names)
                )
            if a in used:
                first = used[a]
                where = (
                    f"dimensions {first} and {dim}" if first != dim else f"dimension {dim} twice"
                )
                raise ValueError(
                    f"axis {a!r} is used by {where}; a mesh axis can shard only one dimension, once"
                )
            used[a] = dim
    for dim, entry in enumerate(spec):
        if not entry:
            continue
        n = shape[dim]
        parts = 1
        for a in entry:
            parts *= axes[a]
        if n % parts:
            label = entry[0] if len(entry) == 1 else "(" + ", ".join(entry) + ")"
            sizes = " × ".join(f"{a}={axes[a]}" for a in entry)
            fits = [a for a in names if n % axes[a] == 0 and axes[a] > 1 and a not in entry]
            free = [a for a in fits if a not in used]
            taken = [a for a in fits if a in used]
            hints = []
            if free:
                hints.append(
                    "axes that divide it: " + ", ".join(f"{a!r} (size {axes[a]})" for a in free)
                )
            if taken:
                hints.append(
                    ", ".join(f"{a!r} (size {axes[a]}, used by dimension {used[a]})" for a in taken)
                    + " would divide it if freed"
                )
            hint = "; ".join(hints) or "no mesh axis divides it; leave it replicated (None)"
            raise ValueError(
                f"dimension {dim} has size {n}, which {label!r} ({sizes}, {parts} shards) does "
                f"not divide: {n} % {parts} = {n % parts}. Divisors of {n}: "
                f"{', '.join(map(str, _divisors(n)[:12]))}; {hint}"
            )
