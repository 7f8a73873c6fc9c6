"""A static picture of a function view (HTML + inline SVG, no script), the twin of
:mod:`shardwidget.render.snapshot` for ``ShardView(f, *args)``: every input and output leaf as its
layout's grid (axes, index ticks, holders), the collectives XLA inserted as a table (with the mesh
axes they run over and where they come from), and the terminal text (memory, flops) below.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from ..model.layout import layout_of_sharding
from ..model.units import fmt_bytes
from . import snapshot

if TYPE_CHECKING:
    from ..trace.result import TraceResult

NO_COLLECTIVES = "No collectives: every device computes its part alone"
"""What the live view says when XLA inserted none (js/function/collectives.ts)."""

LEAF_WIDTH = 220
MAX_LEAVES = 16
"""Leaves drawn per side; the rest are named in the text below."""


def _leaves(title: str, names: list[str], layouts: list[Any], n_devices: int | None) -> str:
    cards = []
    for name, lay in list(zip(names, layouts, strict=False))[:MAX_LEAVES]:
        cards.append(
            '<div class="shardwidget-leaf" style="display:inline-block;vertical-align:top;'
            'margin:0 12px 8px 0">'
            f'<div style="font-family:monospace"><b>{html.escape(name)}</b> '
            f"{html.escape(lay.typeof)}</div>"
            + snapshot.embed(snapshot.svg(lay, (), LEAF_WIDTH, n_devices))
            + "</div>"
        )
    return f"<div><b>{title}</b></div><div>{''.join(cards)}</div>" if cards else ""


def _collectives(result: TraceResult) -> str:
    if not result.collectives:
        return f'<div role="status">{NO_COLLECTIVES}</div>'
    head = (
        "collective",
        "over axes",
        "result per device",
        "sent per device",
        "groups",
        "caused by",
    )
    th = "".join(f'<th style="text-align:left;padding:0 8px 0 0">{h}</th>' for h in head)
    rows = []
    for c in result.collectives:
        cells = (
            c.kind,
            ", ".join(c.axes) or "—",
            f"{c.dtype}{list(c.shape)}",
            fmt_bytes(c.bytes),
            f"{c.n_groups} × {c.group_size}",
            " · ".join(x for x in (c.op_name, c.source) if x) or "—",
        )
        tds = "".join(f'<td style="padding:0 8px 0 0">{html.escape(str(x))}</td>' for x in cells)
        title = html.escape(f"groups: {c.groups_text}") if c.groups_text else ""
        rows.append(f'<tr class="shardwidget-collective" title="{title}">{tds}</tr>')
    return (
        '<table style="border-collapse:collapse;font-family:monospace;font-size:12px">'
        f'<caption style="text-align:left"><b>collectives XLA inserted</b></caption>'
        f"<tr>{th}</tr>{''.join(rows)}</table>"
    )


def render(
    name: str,
    mode: str,
    result: TraceResult | None,
    error: str,
    text: str,
    n_devices: int | None = None,
) -> str:
    """The function view as HTML: ``result`` (None before a first compile) drawn leaf by leaf,
    its collectives, ``error`` when the view shows one, and ``text`` (its terminal text)."""
    err = (
        '<div class="shardwidget-error" role="alert" style="color:#b00020;margin:2px 0">'
        f"⚠ {html.escape(error)}</div>"
        if error
        else ""
    )
    body = ""
    if result is not None:
        ins = [
            layout_of_sharding(s, tuple(shape), dt)
            for s, shape, dt in zip(
                result.in_shardings, result.in_shapes, result.in_dtypes, strict=True
            )
        ]
        outs = result.out_layouts or [
            layout_of_sharding(s, tuple(shape), dt)
            for s, shape, dt in zip(
                result.out_shardings, result.out_shapes, result.out_dtypes, strict=True
            )
        ]
        body = (
            _leaves("inputs", result.in_paths, ins, n_devices)
            + _leaves("outputs", result.out_paths, outs, n_devices)
            + _collectives(result)
        )
    return (
        '<div class="shardwidget-snapshot" style="font-family:system-ui,sans-serif;'
        f'font-size:12px;line-height:1.4"><div><b>{html.escape(name)}</b> ({html.escape(mode)})'
        f"</div>{err}{body}"
        '<pre style="font-family:monospace;white-space:pre-wrap;font-size:12px">'
        f"{html.escape(text)}</pre></div>"
    )
