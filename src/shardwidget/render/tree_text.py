"""A tree view as terminal text and as a static HTML table (no script): the mesh, memory per
device, the largest leaves, replicated leaves flagged. Reads the view's public surface only
(``leaves``, ``per_device``, ``static``, ``mesh``, ``large_bytes``)."""

from __future__ import annotations

import html
from typing import Any

from .text import fmt_bytes

TOP = 12  # leaves listed, largest first


def _mesh_text(mesh: Any) -> str:
    return " × ".join(f"{n}={s}" for n, s in zip(mesh.axis_names, mesh.devices.shape, strict=True))


def _rows(view: Any) -> list[tuple[str, str, str, str, int, bool]]:
    """(path, type, spec, flag, bytes per device, large replicated) of the largest leaves."""
    from ..model.rules import leaf_bytes

    rows = []
    for leaf in view.leaves:
        b = leaf_bytes(leaf)[1]
        spec = leaf.spec
        spec_text = "" if spec is None else str(spec)
        rep = len(leaf_bytes(leaf)[0]) > 1 and not any(e is not None for e in (spec or ()))
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
        + f" · mesh {_mesh_text(view.mesh)}",
        f"per device: max {fmt_bytes(top)} (device {most[0] if most else '-'})"
        + f", min {fmt_bytes(min(per.values()) if per else 0)}",
    ]
    width = min(60, max((len(r[0]) for r in rows[:TOP]), default=4))
    for path, typ, spec, _flag, b, large in rows[:TOP]:
        mark = "  ⚠ large replicated" if large else ""
        lines.append(f"  {path[:width]:<{width}}  {typ:<20} {spec:<24} {fmt_bytes(b):>10}{mark}")
    if len(rows) > TOP:
        lines.append(f"  … {len(rows) - TOP} more")
    return "\n".join(lines)


def static_html(view: Any) -> str:
    """The view as an HTML table (no script): memory per device, then the largest leaves."""
    per = view.per_device
    top = max(per.values()) if per else 1
    bars = "".join(
        f"<tr><td>{d}</td><td><div style='background:#4c78a8;height:10px;"
        f"width:{max(1, round(200 * b / max(top, 1)))}px'></div></td>"
        f"<td style='text-align:right'>{html.escape(fmt_bytes(b))}</td></tr>"
        for d, b in per.items()
    )
    flag = " style='background:#fde2e1' title='large and replicated'"
    rows = "".join(
        f"<tr{flag if large else ''}><td><code>{html.escape(p)}"
        f"</code></td><td>{html.escape(t)}</td><td><code>{html.escape(s)}</code></td>"
        f"<td style='text-align:right'>{html.escape(fmt_bytes(b))}</td></tr>"
        for p, t, s, _f, b, large in _rows(view)[:TOP]
    )
    return (
        "<div class='shardwidget-tree' style='font:12px sans-serif'>"
        f"<div><b>{len(view.leaves)} array leaves</b> · mesh "
        f"{html.escape(_mesh_text(view.mesh))}</div>"
        "<table><caption style='text-align:left'>bytes per device</caption>"
        f"{bars}</table><table><caption style='text-align:left'>largest leaves (per device)"
        f"</caption><tr><th>path</th><th>type</th><th>spec</th><th>bytes</th></tr>{rows}"
        "</table></div>"
    )
