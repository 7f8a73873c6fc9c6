"""The picture of a function view (``view.to_svg()``): each input and output leaf's layout (a
card each for a few leaves; a table and the first leaf's grid for a model's), the collectives
XLA inserted with their device groups, and memory per device. Drawn with the array picture's
pieces (:mod:`shardwidget.render.picture`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax

from ..hlo import peak_text
from ..model.layout import Layout, layout_of_sharding
from ..model.units import fmt_bytes
from . import budget
from .function_leaves import CARDS_UP_TO, leaf_table
from .legend import legend_of
from .machine import has_machine, machine
from .picture import FG2, FG3, MAX_TITLES, Svg, grid, marks, wrap_text
from .scene import array_scene

if TYPE_CHECKING:
    from ..hlo.collectives import Collective
    from ..trace.result import TraceResult


def function_svg(
    res: TraceResult,
    *,
    name: str = "f",
    width: int = 760,
    n_devices: int | None = None,
    note: str = "",
) -> str:
    """The picture of a function view: each input and output leaf's layout, the collectives XLA
    inserted, memory per device; ``note`` under the title (what a plan is)."""
    if n_devices is None:
        n_devices = jax.device_count()
    svg = Svg()
    st = res.state
    axes = " × ".join(f"{n}={s}" for n, s in zip(st.axis_names, st.mesh_shape, strict=False))
    svg.text(12, 20, f"{name} · {res.mode} · mesh {axes}", size=14, mono=True, weight="bold")
    y = 34.0
    if note:
        svg.text(12, 36, note if len(note) <= 120 else note[:119] + "…", size=11, fill="#8250df")
        y += 16
    leaves = [
        (f"in {p}", layout_of_sharding(s, tuple(shape), dt))
        for p, s, shape, dt in zip(
            res.in_paths, res.in_shardings, res.in_shapes, res.in_dtypes, strict=False
        )
    ] + [
        # output paths already say so ("out", "out[0]"): not "out out"
        (p if p.startswith("out") else f"out {p}", lay)
        for p, lay in zip(res.out_paths, _out_layouts(res), strict=False)
    ]
    machine_of = next((lay for _, lay in leaves if has_machine(lay)), None)
    if len(leaves) > CARDS_UP_TO:  # a model's leaves: a table, and one grid (the widget's form)
        y = leaf_table(svg.text, leaves, 12, y, width - 24, (FG2, FG3))
        label, lay = leaves[0]
        svg.text(12, y + 14, f"{label}: {lay.typeof} {lay.spec_text}", size=12, mono=True)
        y += 22 + grid(svg, array_scene(lay, n_devices=n_devices), 12, y + 22, width - 24, 240)
        leaves = []
    else:  # a few leaves: a card each, the largest within the picture's budget
        drawn = budget.pick_leaves([lay.bytes_per_device for _, lay in leaves])
        if len(drawn) < len(leaves):
            svg.text(
                12,
                y + 14,
                f"showing the {len(drawn)} largest of "
                f"{budget.plural(len(leaves), 'leaf', 'leaves')} (bytes per device); the widget "
                "lists them all",
                size=11,
                fill=FG2,
            )
            y += 18
        leaves = [leaves[i] for i in drawn]
    titles = sum(len(lay.blocks) for _, lay in leaves) <= MAX_TITLES  # hover text: bounded
    col_w = (width - 36) / 2
    row_h = 0.0
    for i, (label, lay) in enumerate(leaves):
        x = 12 + (i % 2) * (col_w + 12)
        if i % 2 == 0 and i:
            y += row_h + 14
            row_h = 0
        svg.text(
            x, y + 12, f"{label}: {lay.typeof} {lay.spec_text}", size=12, mono=True, weight="bold"
        )
        words = wrap_text(" · ".join(legend_of(lay).replication), col_w, 10.5)
        for j, part in enumerate(words):
            svg.text(x, y + 27 + 13 * j, part, size=10.5, fill=FG2)
        top = 22 + 13 * len(words)
        scene = array_scene(lay, n_devices=n_devices)
        h = top + grid(svg, scene, x, y + top, col_w, 200, titles)
        row_h = max(row_h, h)
    y += row_h + 24
    if machine_of is not None:  # a gpu_mesh plan: the GPUs by host, what each axis crosses
        color_of = array_scene(machine_of, n_devices=n_devices).color_of
        y += machine(svg, machine_of, 12, y, width - 24, color_of) + 12
    y = _collectives(svg, res, 12, y, width - 24)
    if res.memory:
        # "peak" of the memory analysis is the sum (at most live at once): the compiler's own
        # peak is the next line's
        mem = " · ".join(
            f"{'total' if k == 'peak' else k} {fmt_bytes(v)}" for k, v in res.memory.items() if v
        )
        peak = peak_text.one_line(res.peak, res.peak_unknown)
        for part in [
            p for line in [f"Memory per device: {mem}", *peak] for p in wrap_text(line, width - 24)
        ]:
            svg.text(12, y + 14, part, size=11.5, fill=FG2)
            y += 16
        y += 6
    y = marks(svg, 12, y + 8, width - 24)
    return svg.done(width, y + 8, f"{name} compiled on mesh {axes}")


def _out_layouts(res: TraceResult) -> list[Layout]:
    """The outputs' layouts: the view's own where it has them (an unreduced output's partial
    sums), else read from the compiled shardings."""
    if res.out_layouts is not None:
        return list(res.out_layouts)
    return [
        layout_of_sharding(s, tuple(shape), dt)
        for s, shape, dt in zip(res.out_shardings, res.out_shapes, res.out_dtypes, strict=True)
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def groups_label(c: Collective) -> str:
    """Who talks to whom, as the widget's (js/function/collectives.ts groupsLabel): "4 devices ×
    2 groups"; a collective-permute: "4 pairs"."""
    if c.kind == "collective-permute":
        return _plural(c.n_groups, "pair")
    return f"{_plural(c.group_size, 'device')} × {_plural(c.n_groups, 'group')}"


def _collectives(svg: Svg, res: TraceResult, x: float, y: float, width: float) -> float:
    svg.text(x, y + 10, "Communication", size=12, weight="bold", fill=FG2)
    y += 28
    if not res.collectives:
        svg.text(x + 8, y, "no collectives: every device computes on its own shards", size=11.5)
        return y + 10
    for c in res.collectives[:24]:
        # the axes as the widget's table writes them (js/function/collectives.ts axesLabel)
        over = f"over {', '.join(c.axes)}" if c.axes else "over device groups"
        line = (
            f"• {c.kind} {over} · {fmt_bytes(c.bytes)} per device · {groups_label(c)} · "
            f"result {c.result_text}"
        )
        for i, part in enumerate(wrap_text(line, width - 8)):
            svg.text(x + (8 if i == 0 else 18), y, part, size=11.5)
            y += 16
        for part in wrap_text(f"why: {c.cause.text}", width - 18) if c.cause is not None else []:
            svg.text(x + 18, y, part, size=11, fill=FG3)
            y += 15
    if len(res.collectives) > 24:
        svg.text(x + 8, y, f"… and {len(res.collectives) - 24} more", size=11.5, fill=FG3)
        y += 16
    return y
