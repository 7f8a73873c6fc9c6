"""A compiled output's sharding (HLO text, as the planning helper returns it) read back as a
PartitionSpec on the plan's AbstractMesh, where one describes it.

The helper compiles for N devices whose ids are the positions on the plan's mesh (row-major).
An HLO tile assignment (``{devices=[4,1,2]<=[8] last_tile_dim_replicate}``, an iota with a
transpose ``<=[2,4]T(1,0)``, or an explicit list) says which tile of each dimension every
position holds. The spec is the one whose mesh axes, cut the way JAX cuts them (the first axis
of a dimension major), give every position the same tile: candidates are tried and the
geometry compared, so a spec is only ever returned when it puts the same blocks on the same
positions. Pure numpy; no device is touched.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Sequence

import numpy as np

_TILED = re.compile(r"devices=\[([\d,]+)\](<=\[([\d,]+)\](?:T\(([\d,]+)\))?|[\d,]+)")

Entry = tuple[str, ...]


def tiles_of(text: str, n: int) -> tuple[list[int], np.ndarray] | None:
    """(tile counts per dimension, with a last replica dimension when the text says so;
    positions in tile-assignment order) of an HLO sharding text; ([], all positions) for
    ``{replicated}``; None for what no tiling describes (maximal, manual, subgroups)."""
    t = text.strip()
    if "maximal" in t or "manual" in t or "last_tile_dims=" in t or "unreduced" in t:
        return None
    m = _TILED.search(t)
    if m is None:
        return ([], np.arange(n)) if "replicated" in t else None
    dims = [int(x) for x in m.group(1).split(",")]
    if m.group(3) is not None:
        iota = np.arange(math.prod(int(x) for x in m.group(3).split(",")))
        order = iota.reshape([int(x) for x in m.group(3).split(",")])
        if m.group(4):
            order = order.transpose([int(x) for x in m.group(4).split(",")])
        order = order.reshape(-1)
    else:
        order = np.array([int(x) for x in m.group(2).split(",")])
    if math.prod(dims) != n or len(order) != n:
        return None
    return dims, order


def _assignments(
    counts: Sequence[int], axes: dict[str, int], used: frozenset[str] = frozenset()
) -> Iterator[tuple[Entry, ...]]:
    """Every way to give dimension d an ordered tuple of unused mesh axes whose sizes
    multiply to counts[d] (axes of size 1 left out)."""
    if not counts:
        yield ()
        return
    free = [a for a in axes if a not in used and axes[a] > 1]
    for k in range(len(free) + 1):
        for combo in itertools.permutations(free, k):
            if math.prod(axes[a] for a in combo) != counts[0]:
                continue
            for rest in _assignments(counts[1:], axes, used | set(combo)):
                yield (combo, *rest)


def spec_of(
    text: str, shape: Sequence[int], names: Sequence[str], sizes: Sequence[int]
) -> tuple[Entry, ...] | None:
    """The spec (one axis tuple per dimension) of an HLO sharding text on a mesh of these axis
    names and sizes (positions row-major), or None when no spec gives the same tiles."""
    n = math.prod(sizes)
    found = tiles_of(text, n)
    if found is None:
        return None
    dims, order = found
    nd = len(shape)
    if not dims:
        return ((),) * nd
    if len(dims) not in (nd, nd + 1) or (len(dims) == nd + 1 and "replicate" not in text):
        return None
    counts = dims[:nd]
    if any(c and s % c for s, c in zip(shape, counts, strict=True)):
        return None  # an uneven cut (XLA pads): no spec lays that out
    want = np.zeros((n, nd), np.int64)  # want[p, d]: the tile of dimension d position p holds
    want[order] = np.stack(np.unravel_index(np.arange(n), dims)[:nd], axis=1) if nd else want
    coords = np.indices(tuple(sizes)).reshape(len(sizes), -1)
    axes = dict(zip(names, sizes, strict=True))
    at = {a: i for i, a in enumerate(names)}
    for entries in _assignments(counts, axes):
        got = np.zeros((n, nd), np.int64)
        for d, entry in enumerate(entries):
            for a in entry:
                got[:, d] = got[:, d] * axes[a] + coords[at[a]]
        if np.array_equal(got, want):
            return tuple(entries)
    return None
