"""A tree view as terminal text and as an SVG: the mesh, memory per device by top-level group
(with a hardware preset's HBM line), the largest leaves, replicated leaves flagged. The selected
leaf is drawn by the one array picture (:func:`shardwidget.render.picture.array_svg`); the
display bundle and snapshot embed the whole through :mod:`shardwidget.render.snapshot`. Reads
the view's public surface only (``leaves``, ``per_device``, ``static``, ``mesh``,
``large_bytes``, ``memory``)."""

from __future__ import annotations

import html
import re
from typing import Any

from ..model import mesh as mesh_mod
from ..model import spec as spec_mod
from ..model.copies import on_every_device
from ..model.rules import leaf_bytes
from ..model.units import fmt_bytes
from . import budget
from .colors import PALETTE16

TOP = 12  # leaves listed, largest first


def _mesh_text(mesh: Any) -> str:
    sizes = mesh_mod.mesh_sizes(mesh)
    return " × ".join(f"{n}={s}" for n, s in zip(mesh.axis_names, sizes, strict=True))


def _rows(view: Any) -> list[tuple[str, str, str, str, int, bool]]:
    """(path, type, spec, flag, bytes per device, large replicated) of the largest leaves."""
    rows = []
    mesh_ids = frozenset(mesh_mod.mesh_ids(view.mesh))
    for leaf in view.leaves:
        b = leaf_bytes(leaf)[1]
        spec = leaf.spec
        nd = len(leaf.shape)
        spec_text = "" if spec is None else spec_mod.to_text(spec_mod.normalize(spec, nd))
        rep = len(mesh_ids) > 1 and on_every_device(leaf, mesh_ids)
        large = rep and b >= view.large_bytes
        typ = f"{leaf.dtype}{list(leaf.shape)}"
        rows.append((leaf.path, typ, spec_text, "replicated" if rep else "", b, large))
    rows.sort(key=lambda r: -r[4])
    return rows


def text(view: Any) -> str:
    """The view in a few lines of text (``repr(view)``)."""
    per = view.per_device
    rows = _rows(view)
    top = max(per.values()) if per else 0
    most = [d for d, b in per.items() if b == top]
    lines = [
        f"ShardView(tree): {len(rows)} array leaves"
        + (f", {len(view.static)} static" if view.static else "")
        + f" · mesh {_mesh_text(view.mesh)}"
        + (f" · {view.planned}" if view.planned else ""),
        f"per device: max {fmt_bytes(top)} (device {most[0] if most else '-'})"
        + f", min {fmt_bytes(min(per.values()) if per else 0)}",
    ]
    lines += [f"note: {n}" for n in view.notes]
    width = min(60, max((len(r[0]) for r in rows[:TOP]), default=4))
    for path, typ, spec, _flag, b, large in rows[:TOP]:
        mark = "  ⚠ large replicated" if large else ""
        lines.append(f"  {path[:width]:<{width}}  {typ:<20} {spec:<24} {fmt_bytes(b):>10}{mark}")
    if len(rows) > TOP:
        lines.append(f"  … {len(rows) - TOP} more")
    return "\n".join(lines)


def _group_color(g: int) -> str:
    """A group's colour: the front end's groupColor (js/tree/memory_chart.ts); grey for the
    "others" of a picture that names the largest groups only (g = -1)."""
    return PALETTE16[(g * 5) % len(PALETTE16)] if g >= 0 else "#afb8c1"


def memory_svg(
    memory: dict[str, Any], groups: list[str], hbm: float | None, label: str, width: int = 760
) -> tuple[str, float]:
    """(SVG elements, height) of the memory chart: a bar per device stacked by group, the HBM
    line when it is within 4× the fullest device (as the widget draws it), devices over it
    outlined in red."""
    all_totals = [sum(col) for col in zip(*memory["by_group"], strict=True)]
    by_group, groups, index = budget.top_groups(memory["by_group"], groups)
    ids, by_group, per_bar = budget.bucket_bars(memory["ids"], by_group)
    totals = [sum(row[i] for row in by_group) for i in range(len(ids))]
    most = max(all_totals, default=0)
    inside = hbm is not None and hbm <= most * 4
    top = max(most, hbm if inside and hbm else 0, 1)
    h, left, y0 = 110.0, 64.0, 22.0
    bar = (width - left - 12) / max(1, len(ids))
    parts = [
        f'<text x="12" y="14" font-size="12" font-weight="600" font-family="sans-serif">'
        f"Memory per device · max {html.escape(fmt_bytes(most))}</text>"
    ]
    for i, (d, total) in enumerate(zip(ids, totals, strict=True)):
        x, base = left + i * bar, 0.0
        over = hbm is not None and total > hbm
        for g, row in enumerate(by_group):
            hh = row[i] / top * (h - 6)
            if hh <= 0:
                continue
            stroke = ' stroke="#a4000f" stroke-width="1.5"' if over else ""
            w = max(0.5, bar - 2)
            parts.append(
                f'<rect x="{x + 1:.1f}" y="{y0 + h - base - hh:.1f}" width="{w:.1f}"'
                f' height="{hh:.1f}" fill="{_group_color(index[g])}"{stroke}/>'
            )
            base += hh
        if len(ids) <= 64:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{y0 + h + 11}" font-size="9" '
                f'text-anchor="middle" font-family="sans-serif" fill="#57606a">{d}</text>'
            )
    if inside and hbm is not None:
        y = y0 + h - hbm / top * (h - 6)
        parts.append(
            f'<line x1="{left}" x2="{width - 12}" y1="{y:.1f}" y2="{y:.1f}" stroke="#a4000f" '
            f'stroke-dasharray="4 3"/><text x="{left - 4}" y="{y + 3:.1f}" font-size="9" '
            f'text-anchor="end" fill="#a4000f" font-family="sans-serif">'
            f"{html.escape(label)} {html.escape(fmt_bytes(hbm))}</text>"
        )
    x, y = 12.0, y0 + h + 18
    for g, name in enumerate(groups):
        if x + 24 + 7 * len(name) > width and x > 12:  # a new line of the key
            x, y = 12.0, y + 16
        parts.append(
            f'<rect x="{x}" y="{y}" width="10" height="10" fill="{_group_color(index[g])}"/>'
            f'<text x="{x + 14}" y="{y + 9}" font-size="10.5" font-family="monospace">'
            f"{html.escape(name)}</text>"
        )
        x += 24 + 7 * len(name)
    if per_bar > 1:
        n = len(memory["ids"])
        y += 16
        parts.append(
            f'<text x="12" y="{y + 9}" font-size="10.5" font-family="sans-serif" fill="#57606a">'
            f"showing {len(ids):,d} bars of {n:,d} devices: each the fullest of "
            f"{per_bar:,d} consecutive devices</text>"
        )
    return "".join(parts), y + 18


def leaf_table_svg(view: Any, y: float, width: int) -> tuple[str, float]:
    """(SVG elements, y under it) of the largest leaves as :func:`text` lists them (path, type,
    spec, bytes per device, large replicated leaves flagged): drawn in the picture, so that the
    text under it need not repeat them (issue 38)."""
    rows = _rows(view)
    cols = (12.0, width * 0.42, width * 0.64, width - 12.0)
    heads = ("leaf", "type", "spec", "per device")
    parts = [
        f'<text x="{c:.0f}" y="{y + 12:.0f}" font-size="10.5" font-weight="bold" '
        f'font-family="sans-serif" fill="#57606a"'
        + (' text-anchor="end"' if h == "per device" else "")
        + f">{h}</text>"
        for c, h in zip(cols, heads, strict=True)
    ]
    y += 18
    for path, typ, spec, _flag, b, large in rows[:TOP]:
        flag = " ⚠ large replicated" if large else ""
        fill = "#a4000f" if large else "#1f2328"
        cells = (_cut(path, 44), typ, spec, fmt_bytes(b) + flag)
        for i, (c, cell) in enumerate(zip(cols, cells, strict=True)):
            anchor = ' text-anchor="end"' if i == 3 else ""
            parts.append(
                f'<text x="{c:.0f}" y="{y + 11:.0f}" font-size="11" font-family="monospace" '
                f'fill="{fill}"{anchor}>{html.escape(cell)}</text>'
            )
        y += 15
    if len(rows) > TOP:
        parts.append(
            f'<text x="12" y="{y + 11:.0f}" font-size="11" font-family="sans-serif" '
            f'fill="#57606a">… {len(rows) - TOP} more leaves</text>'
        )
        y += 15
    return "".join(parts), y + 8


def _cut(path: str, n: int) -> str:
    """A path cut in the middle: its start names the group, its end the leaf."""
    return path if len(path) <= n else f"{path[: n // 2 - 2]}…{path[-(n // 2 + 1) :]}"


def tree_svg(view: Any, leaf_svg: str, width: int = 760) -> str:
    """The tree view's picture: the memory chart, the largest leaves' table, then the selected
    leaf's array picture; a plan's first line says what it is ("planned on AbstractMesh (32, 8)
    · no devices")."""
    memory, groups = view.memory
    hw = view.hardware_preset
    chart, height = memory_svg(memory, groups, hw.hbm_bytes, hw.name, width)
    badge = ""
    if view.planned:
        badge = (
            f'<text x="12" y="14" font-size="12" font-weight="600" font-family="sans-serif" '
            f'fill="#8250df">{html.escape(view.planned)} · estimates for '
            f"{html.escape(hw.name)}</text>"
        )
        chart = f'<g transform="translate(0 20)">{chart}</g>'
        height += 20
    table, height = leaf_table_svg(view, height, width)
    m = re.search(r'height="(\d+)"', leaf_svg)
    leaf_h = int(m.group(1)) if m else 0
    path = view.leaves[view.selected].path
    head = (
        f'<text x="12" y="{height + 10:.0f}" font-size="12" font-family="monospace" '
        f'fill="#1f2328">leaf {html.escape(path)}</text>'
    )
    leaf = leaf_svg.replace("<svg ", f'<svg x="0" y="{height + 14:.0f}" ', 1)
    total = height + 14 + leaf_h
    label = f"{len(view.leaves)} array leaves, mesh {_mesh_text(view.mesh)}"
    if view.planned:
        label += f", {view.planned}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'width="{width}" height="{total:.0f}" viewBox="0 0 {width} {total:.0f}" role="img" '
        f'aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>'
        f'<rect width="100%" height="100%" fill="#ffffff"/>{badge}{chart}{table}{head}{leaf}</svg>'
    )
