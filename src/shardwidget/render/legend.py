"""The legend of a layout picture: what its marks mean, and how the array is split and copied,
in words. Pure: reads a :class:`~shardwidget.model.layout.Layout`, imports no widget code.

The live widget shows it under the grid (``LayoutWire.legend``), and the static pictures
(:mod:`shardwidget.render.picture`) draw it, so both say the same thing. For an array on a 2×4 mesh
with ``P("x", None)``, ``legend_of(layout).replication`` is ``("dimension 0 split 2 ways over
x", "replicated over y: 4 copies")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model.layout import Layout

MARKS: tuple[tuple[str, str], ...] = (
    ("border", "the colour of the device that holds the block (each device has its own colour)"),
    (
        "inner heatmap",
        "the block's values (means of pooled cells), on one colour scale for the whole array",
    ),
    ("stripes", "a block held by several devices: one stripe per copy (×N when more than 8)"),
    ("labels", "the ids of the devices holding the block; rulers give each block's index range"),
)
"""What each mark of the grid means: (mark, meaning), in the order the legend lists them."""

PARTIAL_MARKS: dict[str, str] = {
    "inner heatmap": "none: no device holds a block's values, only partial sums of them",
    "stripes": "a block's holders: one stripe per device holding a partial sum, not a copy",
    "labels": "Σ and the ids of the devices whose partials add up to the block",
}
"""The marks that mean something else for an unreduced layout (partial sums)."""


@dataclass(frozen=True)
class Legend:
    """The legend of one layout.

    Attributes:
        marks: (mark, meaning) for the border, the inner heatmap, the stripes and the labels.
        replication: how the array is split and copied, one short sentence each: "dimension 0
            split 2 ways over x", "replicated over y: 4 copies", "z has size 1: not split".
    """

    marks: tuple[tuple[str, str], ...]
    replication: tuple[str, ...]


def legend_of(lay: Layout) -> Legend:
    """The legend of ``lay``."""
    marks = tuple((m, PARTIAL_MARKS.get(m, t)) for m, t in MARKS) if lay.partial else MARKS
    return Legend(marks, replication_lines(lay))


def replication_lines(lay: Layout) -> tuple[str, ...]:
    """How ``lay`` splits and copies the array, in words (see :class:`Legend`)."""
    if lay.mesh is None or lay.spec is None:
        return _without_mesh(lay)
    sizes = lay.mesh.axes
    used = {a for axes in lay.spec for a in axes} | set(lay.unreduced)
    lines = []
    for dim, axes in enumerate(lay.spec):
        split = [a for a in axes if sizes[a] > 1]
        if split:
            ways = math.prod(sizes[a] for a in split)
            lines.append(f"dimension {dim} split {ways} ways over {'+'.join(split)}")
    for a in lay.unreduced:
        lines.append(f"partial sums over {a}: {sizes[a]} partials per block, added up")
    copies = [a for a in lay.mesh.axis_names if a not in used and sizes[a] > 1]
    for a in copies:
        lines.append(f"replicated over {a}: {sizes[a]} copies")
    for a in lay.mesh.axis_names:
        if sizes[a] == 1:
            lines.append(f"{a} has size 1: not split")
    if len(copies) > 1:
        lines.append(f"each element on {lay.replication} devices")
    if not copies:
        lines.append("no copies: each element on one device")
    return tuple(lines)


def _without_mesh(lay: Layout) -> tuple[str, ...]:
    """A sharding with no mesh (one device, or a sharding JAX gives no mesh)."""
    n, nb = lay.n_devices, len(lay.blocks)
    if n == 1:
        return ("on one device: not split, no copies",)
    lines = [f"split into {nb} blocks" if nb > 1 else "not split"]
    lines.append(
        f"each block on {lay.replication} devices: {lay.replication} copies"
        if lay.replication > 1
        else "no copies: each element on one device"
    )
    return tuple(lines)
