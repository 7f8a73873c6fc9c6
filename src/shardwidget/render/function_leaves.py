"""A function's leaves in the static picture as the widget lists them once there are more than
a few (js/function/leaf_table.ts): a table of path, type, spec and bytes per device, drawn
through the picture's own text writer, and one grid under it (render/picture.py draws that)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..model.layout import Layout
from ..model.units import fmt_bytes

CARDS_UP_TO = 4
"""A function with at most this many leaves keeps a grid per leaf (js/function/compact.ts)."""

MAX_TABLE_ROWS = 48
"""Rows of the table at most; the rest are counted."""

ROW_PX = 15


def _short(path: str, n: int = 44) -> str:
    """A path cut in the middle: its start names the argument, its end the leaf."""
    return path if len(path) <= n else f"{path[: n // 2 - 2]}…{path[-(n // 2 + 1) :]}"


def leaf_table(
    text: Callable[..., Any],
    leaves: Sequence[tuple[str, Layout]],
    x: float,
    y: float,
    width: float,
    greys: tuple[str, str],
) -> float:
    """Draw the table with ``text`` (the picture's ``Svg.text``) from (x, y); returns the y under
    it. ``greys``: the colours of the header and of the "more" line."""
    cols = (x + 6, x + width * 0.42, x + width * 0.66, x + width - 6)
    for c, head in zip(cols, ("leaf", "type", "spec", "per device"), strict=True):
        anchor = "end" if head == "per device" else "start"
        text(c, y + 12, head, size=10.5, fill=greys[0], weight="bold", anchor=anchor)
    y += 18
    for label, lay in leaves[:MAX_TABLE_ROWS]:
        rep = f" ×{lay.replication}" if lay.replication > 1 else ""
        shape = f"{lay.dtype}[{','.join(map(str, lay.shape))}]"
        text(cols[0], y + 11, _short(label), size=11, mono=True)
        text(cols[1], y + 11, shape, size=11, mono=True)
        text(cols[2], y + 11, lay.spec_text, size=11, mono=True)
        text(cols[3], y + 11, fmt_bytes(lay.bytes_per_device) + rep, size=11, anchor="end")
        y += ROW_PX
    if len(leaves) > MAX_TABLE_ROWS:
        more = f"… and {len(leaves) - MAX_TABLE_ROWS} more leaves"
        text(cols[0], y + 11, more, size=11, fill=greys[1])
        y += ROW_PX
    return y + 6
