"""The layouts a practitioner would try for a step on N chips: pure, no JAX.

The chip count is factored over the roles data, FSDP, sequence and tensor (one to three at
once, each axis of size 2 or more; the mesh's axes in that order, tensor last: the innermost,
best-connected axis). Each factorization has its standard placement:

- data: the batch's first dimension over ``data``; parameters replicated over it;
- fsdp: each parameter's largest dimension the axis divides over ``fsdp`` (ties: the first),
  and the batch over ``data`` × ``fsdp``;
- tensor: each weight Megatron-style (:mod:`.dataflow`: column splits over their output
  dimension, row splits over their contracting one);
- seq: the batch's second dimension (the sequence) over ``seq``;
- ZeRO-1, where an optimizer state is among the arguments and data is a role without fsdp:
  the optimizer state's largest divisible dimension over ``data`` too, the parameters as above.

They come in the order a time budget should see them (:func:`tried_first`).

A layout that cannot divide a shape is dropped with the reason. Each argument leaf has a
:class:`Leaf` role: "param" (an argument with a weight in it), "opt" (an argument whose arrays
all mirror parameters' shapes: an optimizer state), "batch" (the rest); scalars stay replicated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

ROLES = ("data", "fsdp", "seq", "tensor")
"""The roles, as the mesh's axes are named and ordered."""
LABELS = {"data": "DP", "fsdp": "FSDP", "seq": "SP", "tensor": "TP"}
MAX_ROLES = 3

Spec = tuple[tuple[str, ...], ...]
"""One tuple of mesh axes per dimension (() where the dimension is whole)."""


@dataclass(frozen=True)
class Leaf:
    """One array leaf of the arguments.

    Attributes:
        arg: the argument it belongs to (0-based).
        path: its path (``jax.tree_util.keystr``) inside the arguments, "[0]['w']".
        shape: its shape.
        role: "param", "opt" or "batch".
        tp: (split, dim) of a weight ("column" or "row", the dimension the tensor axis
            splits); None for any other leaf.
        mirror: an optimizer state leaf's parameter (its index among the leaves); else None.
    """

    arg: int
    path: str
    shape: tuple[int, ...]
    role: str
    tp: tuple[str, int] | None = None
    mirror: int | None = None


@dataclass(frozen=True)
class Proposal:
    """A layout to compile: a mesh and every leaf's spec.

    Attributes:
        name: "FSDP 32 × TP 8", "ZeRO-1 · DP 8" or the user's strategy's name.
        mesh_shape, axis_names: the mesh.
        specs: one :data:`Spec` per leaf (the flattened arguments' order).
        strategy: "standard", "zero-1", or the user's strategy's name.
        notes: what a reader should know (a parameter FSDP could not split, …).
    """

    name: str
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    specs: tuple[Spec, ...]
    strategy: str = "standard"
    notes: tuple[str, ...] = field(default=())

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two proposals the same compile."""
        return (self.mesh_shape, self.axis_names, self.specs)


@dataclass(frozen=True)
class Dropped:
    """A layout left out, and why in words."""

    name: str
    reason: str


class Indivisible(ValueError):
    """A placement that cannot divide a leaf's shape (the message names the leaf)."""


def factorizations(n: int, k: int) -> Iterator[tuple[int, ...]]:
    """Every ordered way to write n as a product of k factors, each 2 or more."""
    if k == 1:
        if n >= 2:
            yield (n,)
        return
    for d in range(2, n + 1):
        if n % d == 0:
            for rest in factorizations(n // d, k - 1):
                yield (d, *rest)


def meshes(n: int) -> Iterator[dict[str, int]]:
    """Every factorization of n over the roles (one to :data:`MAX_ROLES` at once), as
    role -> size in :data:`ROLES` order; fewer roles first."""
    for k in range(1, MAX_ROLES + 1):
        for combo in itertools.combinations(ROLES, k):
            for sizes in factorizations(n, k):
                yield dict(zip(combo, sizes, strict=True))


def _prior(roles: dict[str, int]) -> tuple[int, ...]:
    """Within one set of roles, what practitioners try first: the smallest tensor and sequence
    axes (they cross the most bytes per step), then the largest FSDP axis."""
    return (roles.get("tensor", 1), roles.get("seq", 1), -roles.get("fsdp", 1))


def tried_first(found: Iterable[dict[str, int]]) -> list[dict[str, int]]:
    """The meshes in the order a budget should see them: one of each set of roles in turn
    (DP, FSDP, TP, DP × FSDP, FSDP × TP, …), each set's own in :func:`_prior` order, so a
    search stopped early has compiled every kind of layout, not all sizes of the first."""
    groups: dict[tuple[str, ...], list[dict[str, int]]] = {}
    for roles in found:
        groups.setdefault(tuple(roles), []).append(roles)
    queues = [sorted(g, key=_prior) for g in groups.values()]
    out: list[dict[str, int]] = []
    for k in range(max((len(q) for q in queues), default=0)):
        out.extend(q[k] for q in queues if k < len(q))
    return out


def name_of(roles: dict[str, int]) -> str:
    """ "FSDP 32 × TP 8"."""
    return " × ".join(f"{LABELS[r]} {s}" for r, s in roles.items())


def _largest_divisible(shape: tuple[int, ...], size: int, taken: set[int]) -> int | None:
    """The largest dimension (the first of equals) that ``size`` divides, not in ``taken``."""
    dims = [d for d in range(len(shape)) if d not in taken and shape[d] % size == 0]
    return max(dims, key=lambda d: (shape[d], -d)) if dims else None


def _tp(leaf: Leaf, t: int, entries: list[tuple[str, ...]]) -> None:
    if leaf.tp is None or t < 2:
        return
    split, d = leaf.tp
    if leaf.shape[d] % t:
        raise Indivisible(
            f"tensor = {t} does not divide {leaf.path} (shape {leaf.shape}), dimension {d} "
            f"({leaf.shape[d]}: its {split} split)"
        )
    entries[d] = ("tensor",)


def _spread(leaf: Leaf, axis: str, size: int, entries: list[tuple[str, ...]]) -> bool:
    """The leaf's largest free dimension that ``size`` divides over ``axis``; False if none."""
    taken = {d for d, e in enumerate(entries) if e}
    d = _largest_divisible(leaf.shape, size, taken)
    if d is None:
        return False
    entries[d] = (axis,)
    return True


def param_spec(leaf: Leaf, roles: dict[str, int], unsplit: list[str]) -> Spec:
    """A parameter's spec: tensor first (its Megatron split), then FSDP's largest divisible
    dimension; a parameter FSDP cannot split is named in ``unsplit``."""
    entries: list[tuple[str, ...]] = [()] * len(leaf.shape)
    _tp(leaf, roles.get("tensor", 1), entries)
    f = roles.get("fsdp", 1)
    if f > 1 and leaf.shape and not _spread(leaf, "fsdp", f, entries):
        unsplit.append(leaf.path)
    return tuple(entries)


def batch_spec(leaf: Leaf, roles: dict[str, int]) -> Spec:
    """A batch leaf's spec: dimension 0 over data × fsdp, dimension 1 over seq."""
    entries: list[tuple[str, ...]] = [()] * len(leaf.shape)
    over = tuple(r for r in ("data", "fsdp") if r in roles)
    if over and leaf.shape:
        n = math.prod(roles[r] for r in over)
        if leaf.shape[0] % n:
            axes = " × ".join(f"{r} {roles[r]}" for r in over)
            raise Indivisible(
                f"the batch dimension of {leaf.path} ({leaf.shape[0]}) is not divisible by "
                f"{axes} = {n}"
            )
        entries[0] = over
    s = roles.get("seq", 1)
    if s > 1 and len(leaf.shape) >= 2:
        if leaf.shape[1] % s:
            raise Indivisible(
                f"the sequence dimension of {leaf.path} ({leaf.shape[1]}) is not divisible by "
                f"seq = {s}"
            )
        entries[1] = ("seq",)
    return tuple(entries)


def _opt_spec(leaf: Leaf, specs: Sequence[Spec], roles: dict[str, int], zero1: bool) -> Spec:
    base = specs[leaf.mirror] if leaf.mirror is not None else ((),) * len(leaf.shape)
    if not zero1:
        return base
    entries = list(base)
    _spread(leaf, "data", roles["data"], entries)
    return tuple(entries)


def place(leaves: Sequence[Leaf], roles: dict[str, int], zero1: bool = False) -> Proposal:
    """The standard placement of ``roles`` (ZeRO-1 with ``zero1``); Indivisible naming the
    leaf when a shape cannot be divided, ValueError when a role has nothing to split."""
    _check_roles(leaves, roles)
    unsplit: list[str] = []
    specs: list[Spec] = []
    for leaf in leaves:
        if not leaf.shape:
            specs.append(())
        elif leaf.role == "param":
            specs.append(param_spec(leaf, roles, unsplit))
        elif leaf.role == "batch":
            specs.append(batch_spec(leaf, roles))
        else:
            specs.append(((),) * len(leaf.shape))  # filled below, once parameters are placed
    for i, leaf in enumerate(leaves):
        if leaf.role == "opt" and leaf.shape:
            specs[i] = _opt_spec(leaf, specs, roles, zero1)
    params = [leaf for leaf in leaves if leaf.role == "param" and leaf.shape]
    if "fsdp" in roles and params and len(unsplit) == len(params):
        raise Indivisible(f"fsdp = {roles['fsdp']} divides no dimension of any parameter")
    notes = (
        (f"FSDP leaves whole (no dimension divisible): {', '.join(unsplit)}",) if unsplit else ()
    )
    name = name_of(roles)
    return Proposal(
        name=f"ZeRO-1 · {name}" if zero1 else name,
        mesh_shape=tuple(roles.values()),
        axis_names=tuple(roles),
        specs=tuple(specs),
        strategy="zero-1" if zero1 else "standard",
        notes=notes,
    )


def _check_roles(leaves: Sequence[Leaf], roles: dict[str, int]) -> None:
    if "tensor" in roles and not any(leaf.tp for leaf in leaves):
        raise ValueError("no weight found in the function's dataflow for tensor parallelism")
    if "seq" in roles and not any(leaf.role == "batch" and len(leaf.shape) >= 2 for leaf in leaves):
        raise ValueError("no input has a sequence dimension (a batch leaf of rank 2 or more)")
    has_batch = any(leaf.role == "batch" and leaf.shape for leaf in leaves)
    has_params = any(leaf.role == "param" for leaf in leaves)
    # without a batch, data parallelism has nothing to split; FSDP still splits parameters
    if "data" in roles and not has_batch and ("fsdp" not in roles or not has_params):
        raise ValueError("no batch input to split over data")
    if "fsdp" in roles and not has_batch and not has_params:
        raise ValueError("no batch input and no parameter to split over fsdp")


def propose(n: int, leaves: Sequence[Leaf]) -> tuple[list[Proposal], list[Dropped]]:
    """Every standard placement of every factorization of n chips (ZeRO-1 beside each data
    role without fsdp where an optimizer state is given), and those dropped with the reason."""
    if n == 1:
        one = Proposal("one device", (1,), ("data",), tuple(((),) * len(x.shape) for x in leaves))
        return [one], []
    has_opt = any(leaf.role == "opt" for leaf in leaves)
    out: list[Proposal] = []
    dropped: list[Dropped] = []
    for roles in tried_first(meshes(n)):
        variants = [False]
        if has_opt and "data" in roles and "fsdp" not in roles:
            variants.append(True)
        for zero1 in variants:
            try:
                out.append(place(leaves, roles, zero1))
            except ValueError as e:
                label = f"ZeRO-1 · {name_of(roles)}" if zero1 else name_of(roles)
                dropped.append(Dropped(label, str(e)))
    return out, dropped
