"""The scene of an array picture: what every static surface shows, built once from a view's state.

A scene is renderer-independent data: the title and the facts under it, the two drawn
dimensions and their titles, the blocks drawn (index ranges, holders, colours, hover text with
their statistics, heatmaps), the heatmap's range and the legend. :mod:`.picture` draws it as SVG
(``to_svg()``, and through it the display bundle's picture, ``snapshot()``, saved pages and
PNG); :mod:`.text` writes the same title and numbers in the terminal. The live TypeScript
renderer draws its own, with the same colours and labels (contract-tested).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import jax
import numpy as np

from ..model.layout import Block, Layout
from ..model.summary import Summary
from ..model.units import fmt_bytes
from .colors import color_scheme
from .legend import Legend, legend_of

MAX_STRIPES = 8  # as the live grid: beyond, a ×N badge


def fmt_stat(v: float | None) -> str:
    """A statistic as the pictures write it: 4 significant digits; "NaN" / "inf" / "-inf" for
    the non-finite; "–" when there is none (an empty or all-NaN block has no mean)."""
    if v is None:
        return "–"
    f = float(v)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f"{f:.4g}"


def stats_text(row: Sequence[float | None] | np.ndarray | None) -> str:
    """A block's statistics (min, max, mean, std, NaN count, Inf count) in one line; "" when it
    has none. Any of them may be NaN or infinite (an all-NaN or all-inf block)."""
    if row is None or len(row) < 4:
        return ""
    mn, mx, mean, std = (fmt_stat(v) for v in row[:4])
    s = f"min {mn} · max {mx} · mean {mean} · std {std}"
    nans, infs = (_count(row, i) for i in (4, 5))
    if nans or infs:
        s += f" · {nans} NaN · {infs} Inf"
    return s


def _count(row: Sequence[float | None] | np.ndarray, i: int) -> int:
    v = row[i] if len(row) > i else None
    return int(v) if v is not None and math.isfinite(float(v)) else 0


def block_title(block: Block, row: Sequence[float | None] | np.ndarray | None = None) -> str:
    """A block's hover text: its index ranges and holders; then its shard shape and
    statistics."""
    rng = ", ".join(f"[{a}:{e})" for a, e in block.index)
    many = "s" if len(block.devices) > 1 else ""
    first = f"{rng} on device{many} {', '.join(map(str, block.devices))}"
    second = f"shard {tuple(e - a for a, e in block.index)}"
    stats = stats_text(row)
    return f"{first}\n{second}" + (f" · {stats}" if stats else "")


def title(lay: Layout) -> str:
    """The picture's title: type, spec and memory kind."""
    return " · ".join(p for p in (lay.typeof, lay.spec_text, lay.memory_kind) if p)


@dataclass(frozen=True)
class Facts:
    """The numbers under the title, one source for the picture and the terminal text."""

    n_devices: int
    n_blocks: int
    replication: int
    bytes_per_device: str
    logical_bytes: str

    def line(self) -> str:
        nd, nb = self.n_devices, self.n_blocks
        return (
            f"{nd} device{'s' if nd != 1 else ''} · {nb} block{'s' if nb != 1 else ''} · "
            f"replication {self.replication} · {self.bytes_per_device} per device"
        )


def facts(lay: Layout) -> Facts:
    return Facts(
        lay.n_devices,
        len(lay.blocks),
        lay.replication,
        fmt_bytes(lay.bytes_per_device),
        fmt_bytes(lay.logical_bytes),
    )


@dataclass(frozen=True)
class SceneBlock:
    """One block as drawn: where it lies, who holds it, in which colours, what hovering says."""

    index: tuple[tuple[int, int], ...]
    devices: tuple[int, ...]
    colors: tuple[str, ...]  # the first MAX_STRIPES holders' colours
    title: str
    thumb: np.ndarray | None  # pooled means over the drawn dims, or None


@dataclass(frozen=True)
class ArrayScene:
    """An array view's picture as data (see the module).

    Attributes:
        layout: the layout drawn.
        title: type, spec and memory kind.
        facts: devices, blocks, replication, bytes.
        row, col: the drawn dimensions (None: not drawn; a 1-d array has only ``col``).
        row_title, col_title: what each drawn dimension is sharded over.
        blocks: the blocks drawn (those at the first position along the other dimensions).
        others: the other dimensions and the position drawn along them ("" when none).
        heat: the heatmap's range (finite min, max over the thumbnails), or None.
        legend: the legend's words.
        color_of: a device's colour (the renderer's rule).
    """

    layout: Layout
    title: str
    facts: Facts
    row: int | None
    col: int | None
    row_title: str
    col_title: str
    blocks: tuple[SceneBlock, ...]
    others: str
    heat: tuple[float, float] | None
    legend: Legend
    color_of: Callable[[int], str]


def drawn_dims(lay: Layout, view_dims: Sequence[int]) -> tuple[int | None, int | None]:
    """(row, col): the two dimensions the grid draws (view_dims, else the first two)."""
    nd = len(lay.shape)
    dims = tuple(view_dims) if len(view_dims) == min(nd, 2) else ()
    if not dims:
        dims = (0, 1) if nd >= 2 else (0,) if nd else ()
    return (dims[0] if len(dims) == 2 else None), (dims[-1] if dims else None)


def axis_title(lay: Layout, d: int) -> str:
    """ "dim 0 (16) · sharded over x", as the live grid titles it (js/array/grid/geometry.ts
    dimTitle): a dimension over mesh axes of size 1 only is not split, and says why."""
    axes = lay.spec[d] if lay.spec is not None and d < len(lay.spec) else ()
    sizes = lay.mesh.axes if lay.mesh is not None else {}
    if axes and all(sizes.get(a) == 1 for a in axes):
        how = f"not split ({', '.join(axes)} {'have' if len(axes) > 1 else 'has'} size 1)"
    else:
        how = f"sharded over {'+'.join(axes)}" if axes else "not sharded"
    return f"dim {d} ({lay.shape[d]}) · {how}"


def heat_range(summary: Summary | None) -> tuple[float, float] | None:
    """The heatmap's scale: the finite min and max over every block's thumbnail (the wire's
    vmin/vmax), or None without thumbnails (or with no finite value in any)."""
    if summary is None:
        return None
    present = [t for t in summary.thumbs if t is not None and t.size]
    flat = np.concatenate([t.reshape(-1) for t in present]) if present else np.zeros(0)
    fin = flat[np.isfinite(flat)]
    return (float(fin.min()), float(fin.max())) if fin.size else None


def _thumb(summary: Summary | None, k: int) -> np.ndarray | None:
    if summary is None or k >= len(summary.thumbs):
        return None
    t = summary.thumbs[k]
    if t is None or not t.size:
        return None
    return t.reshape(1, -1) if t.ndim == 1 else t


def _row(summary: Summary | None, k: int) -> np.ndarray | None:
    if summary is None or k >= len(summary.stats):
        return None
    return summary.stats[k]


def array_scene(
    lay: Layout,
    summary: Summary | None = None,
    view_dims: Sequence[int] = (),
    *,
    n_devices: int | None = None,
) -> ArrayScene:
    """The scene of an array view's layout and statistics. ``n_devices``: the kernel's device
    count (default ``jax.device_count()``), which the colours depend on, as in the widget."""
    if n_devices is None:
        n_devices = jax.device_count()
    ids = [*(lay.mesh.device_ids if lay.mesh else ()), *(d.id for d in lay.devices)]
    color_of = color_scheme(n_devices, ids)
    r, c = drawn_dims(lay, view_dims)
    other = [d for d in range(len(lay.shape)) if d not in (r, c)]
    first = {d: min(b.index[d] for b in lay.blocks) for d in other} if lay.blocks else {}
    blocks = tuple(
        SceneBlock(
            b.index,
            b.devices,
            tuple(color_of(d) for d in b.devices[:MAX_STRIPES]),
            block_title(b, _row(summary, k)),
            _thumb(summary, k),
        )
        for k, b in enumerate(lay.blocks)
        if all(b.index[d] == first[d] for d in other)
    )
    at = ", ".join(f"dim {d} at {first[d][0]}:{first[d][1]}" for d in other)
    return ArrayScene(
        layout=lay,
        title=title(lay),
        facts=facts(lay),
        row=r,
        col=c,
        row_title=axis_title(lay, r) if r is not None else "",
        col_title=axis_title(lay, c) if c is not None else "",
        blocks=blocks,
        others=at,
        heat=heat_range(summary),
        legend=legend_of(lay),
        color_of=color_of,
    )
