"""What a saved picture may hold: every picture a view saves into a notebook or a page
(``to_svg``, the display bundle's picture, ``snapshot()``, a saved page's ``<noscript>``) stays
within :data:`PICTURE_BUDGET`, and says what it left out.

The drawings bound themselves where they grow with the pod or the model: the mesh of 65,536
positions is one raster image (not 65,536 rectangles), the memory chart draws at most
:data:`MAX_BARS` bars (each the fullest of a run of consecutive devices) and :data:`MAX_GROUPS`
groups (the largest, then "others"), a function picture draws at most :data:`MAX_LEAVES` leaves
(the largest) and no hover text past :data:`~shardwidget.render.picture.MAX_TITLES` blocks in
all. :func:`shardwidget.render.snapshot.picture_html` is the last guard: a picture still over
the budget loses its hover map, then is left out with a line saying so. Pure numpy, no JAX.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

PICTURE_BUDGET = 512 * 1024
"""The most bytes one view's saved picture may take."""
MAX_BARS = 256
"""The most bars the memory chart draws; past it each bar is the fullest of a run of devices."""
MAX_GROUPS = 12
"""The most groups the memory chart stacks and names; the rest are one "others" group."""
MAX_LEAVES = 24
"""The most leaves a function picture draws (the largest per device, in their order)."""
MAX_MESH_CELLS = 1024
"""Past this many positions the mesh is drawn as one raster image."""


def rgb_of(color: str) -> tuple[int, int, int]:
    """ "#rrggbb" as integers."""
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def mesh_raster(
    ids: Sequence[int], holding: set[int], color_of: Callable[[int], str], cols: int, cell: int
) -> np.ndarray:
    """The mesh as an RGB image: a cell of ``cell`` px per position in mesh order, ``cols``
    to a row, in its device's colour (light grey where it holds nothing)."""
    cache: dict[str, tuple[int, int, int]] = {}
    rgb = np.empty((len(ids), 3), np.uint8)
    for i, d in enumerate(ids):
        col = color_of(d) if d in holding else "#eeeeee"
        if col not in cache:
            cache[col] = rgb_of(col)
        rgb[i] = cache[col]
    rows = math.ceil(len(ids) / cols)
    flat = np.full((rows * cols, 3), 255, np.uint8)
    flat[: len(ids)] = rgb
    img = flat.reshape(rows, cols, 3)
    return np.repeat(np.repeat(img, cell, axis=0), cell, axis=1)


def top_groups(
    by_group: Sequence[Sequence[int]], names: Sequence[str]
) -> tuple[list[list[int]], list[str], list[int]]:
    """(rows, names, original group index or -1 for "others") of the MAX_GROUPS - 1 largest
    groups (bytes over all devices), in their order, then one "others (N groups)" row summing
    the rest; every group as it is when there are at most MAX_GROUPS."""
    rows = [list(r) for r in by_group]
    if len(rows) <= MAX_GROUPS:
        return rows, list(names), list(range(len(rows)))
    totals = [sum(r) for r in rows]
    keep = sorted(sorted(range(len(rows)), key=lambda g: -totals[g])[: MAX_GROUPS - 1])
    rest = [g for g in range(len(rows)) if g not in set(keep)]
    others = np.sum(np.array([rows[g] for g in rest], np.int64), axis=0).tolist()
    return (
        [rows[g] for g in keep] + [others],
        [names[g] for g in keep] + [f"others ({len(rest)} groups)"],
        [*keep, -1],
    )


def bucket_bars(
    ids: Sequence[int], rows: Sequence[Sequence[int]]
) -> tuple[list[int], list[list[int]], int]:
    """(ids drawn, rows drawn, devices per bar): every device when there are at most MAX_BARS,
    else one bar per run of ``k`` consecutive devices, the run's fullest device (its own split
    by group)."""
    n = len(ids)
    if n <= MAX_BARS:
        return list(ids), [list(r) for r in rows], 1
    k = math.ceil(n / MAX_BARS)
    table = np.array(rows, np.int64).reshape(len(rows), n)
    totals = table.sum(axis=0)
    picks = [s + int(np.argmax(totals[s : s + k])) for s in range(0, n, k)]
    return [int(ids[i]) for i in picks], table[:, picks].tolist(), k


def pick_leaves(sizes: Sequence[int]) -> list[int]:
    """Indices of the leaves a function picture draws: all, or the MAX_LEAVES largest (bytes
    per device) in their order."""
    if len(sizes) <= MAX_LEAVES:
        return list(range(len(sizes)))
    return sorted(sorted(range(len(sizes)), key=lambda i: -sizes[i])[:MAX_LEAVES])


def plural(n: int, word: str, words: str = "") -> str:
    """ "1 leaf", "65,536 positions"."""
    return f"{n:,d} {word if n == 1 else words or word + 's'}"


def fits(text: str) -> bool:
    """Whether a saved picture's text is within the budget."""
    return len(text.encode("utf-8")) <= PICTURE_BUDGET
