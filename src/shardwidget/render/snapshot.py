"""A static picture of a layout (HTML + inline SVG, no script) for places with no widget manager:
GitHub, nbviewer, ``jupyter nbconvert --to html``, a notebook reopened without its kernel, and
``view.snapshot()``. It goes into the display bundle as text/html.

It shows what the live grid shows: the drawn dimensions as axes (with the mesh axes they are
split over and the index where each block starts), every block in its holder's colour with the
holders written on it, the per-block heatmap thumbnails (viridis, one scale for all blocks, with
its colour bar), and a ``<title>`` per block (hover: index ranges, holders, statistics).

Device colours come from :mod:`shardwidget.render.colors`, the live renderer's rule, so a device
has the same colour here as in the widget. The grid shows the first block position along non-drawn
dimensions.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..model.gspmd import CUSTOM
from ..model.layout import Block, Layout
from ..model.units import fmt_bytes
from .colors import HEAT_LUT, color_scheme, text_color_on
from .png import encode_rgb
from .text import EMPTY, holder_candidates

MAX_TITLES = 1024
"""Beyond this many blocks the grid is one raster image and blocks get no hover text (as SVG
rectangles with titles, 4096 blocks were ~1 MB)."""

LEFT, TOP, BOTTOM = 64, 34, 34  # margins: row axis and ticks, column axis and ticks, colour bar
TITLE_CHAR_PX = 6.5  # a rough width of one character of an 11 px axis title


_LUT = np.asarray(HEAT_LUT, np.uint8)


def png_data_uri(rgb: np.ndarray) -> str:
    """An RGB uint8 image (rows, cols, 3) as a data: URI of a PNG (no imaging library needed)."""
    return "data:image/png;base64," + base64.b64encode(encode_rgb(rgb)).decode("ascii")


def _thumb(stats: Mapping[str, Any] | None, b: int, dims: tuple[int, ...]) -> np.ndarray | None:
    """Block b's heatmap (uint8, rows x cols over the drawn dims) from a wire ``_stats``."""
    if not stats or stats.get("status") != "ready" or not stats.get("thumbs"):
        return None
    shapes, offs = stats.get("thumb_shapes") or [], stats.get("thumb_offsets") or []
    if b >= len(shapes) or b >= len(offs) or offs[b] < 0 or min(shapes[b]) <= 0:
        return None
    rows, cols = int(shapes[b][0]), int(shapes[b][1])
    buf = bytes(stats["thumbs"])
    if offs[b] + rows * cols > len(buf):
        return None
    t = np.frombuffer(buf, np.uint8, rows * cols, offs[b]).reshape(rows, cols)
    td = tuple(stats.get("thumbs_dims") or ())
    if td == dims or len(dims) < 2:
        return t
    if len(td) == 2 and td == dims[::-1]:
        return t.T
    return None


def _fill(img: np.ndarray, x: float, y: float, w: float, h: float, color: str) -> None:
    """Paint a block into a raster of the grid, with a white line at its right and bottom edges
    where it is at least 3 px wide / tall (as the SVG rectangles' white stroke)."""
    x0, y0 = round(x), round(y)
    x1, y1 = max(x0 + 1, round(x + w)), max(y0 + 1, round(y + h))
    rgb = [int(color[k : k + 2], 16) for k in (1, 3, 5)]
    img[y0 : y1 - (1 if y1 - y0 >= 3 else 0), x0 : x1 - (1 if x1 - x0 >= 3 else 0)] = rgb


def _title(lay: Layout, b: Block, row: list[float] | None) -> str:
    rng = ", ".join(f"[{a}:{e})" for a, e in b.index)
    s = f"{rng} · shard {tuple(e - a for a, e in b.index)} on device"
    s += f"{'s' if len(b.devices) > 1 else ''} {', '.join(map(str, b.devices))}"
    if row:
        s += f"\nmin {row[0]:.4g} · max {row[1]:.4g} · mean {row[2]:.4g} · std {row[3]:.4g}"
        if row[4] or row[5]:
            s += f" · {int(row[4])} NaN · {int(row[5])} Inf"
    return s


def _axis_text(lay: Layout, d: int) -> str:
    axes = lay.spec[d] if lay.spec is not None and d < len(lay.spec) else ()
    return f"sharded over {'+'.join(axes)}" if axes else "not sharded"


def _ticks(starts: list[int], n: int, length: float, horizontal: bool, at: float) -> list[str]:
    """Index labels where blocks start (and the end), skipping those that would overlap."""
    out: list[str] = []
    end = -1e9  # where the last label ends (its right edge, or its bottom)
    for v in [*sorted(set(starts)), n]:
        pos = v / max(1, n) * length
        size = 6.2 * len(str(v)) if horizontal else 11.0  # the label's extent along the axis
        anchor = "end" if v == n else "start" if v == 0 else "middle"
        lo = pos - (size if anchor == "end" else size / 2 if anchor == "middle" else 0)
        if not horizontal:
            lo = pos - (size if v == n else 0)
        if lo < end + 4:
            continue
        end = lo + size
        if horizontal:
            out.append(
                f'<text x="{LEFT + pos:.1f}" y="{at:.1f}" font-size="10" fill="#555" '
                f'text-anchor="{anchor}">{v}</text>'
            )
        else:
            out.append(
                f'<text x="{at:.1f}" y="{TOP + pos:.1f}" font-size="10" fill="#555" '
                f'text-anchor="end" dominant-baseline="{"auto" if v == n else "hanging"}">'
                f"{v}</text>"
            )
    return out


def svg(
    lay: Layout,
    view_dims: tuple[int, ...] = (),
    width: int = 480,
    n_devices: int | None = None,
    stats: Mapping[str, Any] | None = None,
) -> str:
    """The grid as one standalone SVG (axes, index ticks, blocks in their holders' colours with
    the holders written on them, heatmap thumbnails and their colour bar, a hover title per block).
    ``stats``: the view's wire statistics (``_stats``), for the thumbnails; ``n_devices``: the
    kernel's device count (default ``jax.device_count()``), which the colours depend on."""
    nd = len(lay.shape)
    dims = tuple(view_dims) if view_dims else ((0, 1) if nd >= 2 else (0,) if nd else ())
    r = dims[0] if len(dims) == 2 else None
    c = dims[-1] if dims else None
    other = [d for d in range(nd) if d not in dims]
    first = {d: min(b.index[d] for b in lay.blocks) for d in other}
    shown = [(i, b) for i, b in enumerate(lay.blocks) if all(b.index[d] == first[d] for d in other)]
    rn = lay.shape[r] if r is not None else 1
    cn = lay.shape[c] if c is not None else 1
    if r is None:
        height = 48
    elif rn > cn:  # tall: keep the array's aspect within a width x width box
        height, width = width, max(120, round(width * cn / rn))
    else:
        height = max(40, round(width * rn / max(1, cn)))
    # The row axis's title reads downwards beside the strip: a short strip (a wide or an empty
    # array) gets a taller canvas so the title is not cut (about 6.5 px a character at 11 px).
    row_title = f"dim {r} → · {_axis_text(lay, r)}" if r is not None else ""
    title_h = round(len(row_title) * TITLE_CHAR_PX) + 8 if r is not None else 0
    if r is not None and (rn == 0 or cn == 0):
        height = max(height, title_h)  # empty: the one block drawn whole, no aspect to keep
    if n_devices is None:
        import jax

        n_devices = jax.device_count()
    ids = [*(lay.mesh.device_ids if lay.mesh else ()), *(d.id for d in lay.devices)]
    color_of = color_scheme(n_devices, ids)
    rows = (stats or {}).get("blocks") or []
    heat = stats is not None and stats.get("status") == "ready" and bool(stats.get("thumbs"))
    parts: list[str] = []
    # Many blocks: their rectangles as one raster image (4096 rects were ~480 KiB of SVG).
    raster = (
        np.full((max(1, round(height)), max(1, round(width)), 3), 255, np.uint8)
        if len(shown) > MAX_TITLES
        else None
    )
    for i, b in shown:
        # A dimension of size 0 (an empty array) has one block position: drawn whole.
        y0, y1 = b.index[r] if r is not None and rn else (0, 1)
        x0, x1 = b.index[c] if c is not None and cn else (0, 1)
        x, w = LEFT + x0 / max(1, cn) * width, (x1 - x0) / max(1, cn) * width
        y, h = TOP + y0 / max(1, rn) * height, (y1 - y0) / max(1, rn) * height
        color = color_of(b.devices[0])
        row = rows[i] if i < len(rows) else None
        title = (
            f"<title>{html.escape(_title(lay, b, row))}</title>" if len(shown) <= MAX_TITLES else ""
        )
        if raster is not None:
            _fill(raster, x - LEFT, y - TOP, w, h, color)
        else:
            parts.append(
                f'<g class="block"><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
                f'height="{h:.1f}" fill="{color}" stroke="#fff" stroke-width="1"/>'
            )
        t = _thumb(stats, i, dims) if heat else None
        inset = 3 if w > 12 and h > 12 else 0
        if t is not None and inset:
            parts.append(
                f'<image x="{x + inset:.1f}" y="{y + inset:.1f}" width="{w - 2 * inset:.1f}" '
                f'height="{h - 2 * inset:.1f}" preserveAspectRatio="none" '
                f'style="image-rendering:pixelated" href="{png_data_uri(_LUT[t])}"/>'
            )
        chars = max(1, int(w // 7))
        # The widget's labels ("0,4", "0–3 ×4", "×4"); unreduced: "Σ 0,4", the holders hold
        # partials of a sum, not copies. The first that fits, or none.
        holders = holder_candidates(b.devices)
        cands = [f"Σ {c}" for c in holders] + holders if lay.partial else holders
        label = next((c for c in cands if len(c) <= chars), "") if h >= 12 else ""
        if label:
            lw = min(w - 2, 7 * len(label) + 6)
            parts.append(
                f'<rect x="{x + w / 2 - lw / 2:.1f}" y="{y + h / 2 - 8:.1f}" width="{lw:.1f}" '
                f'height="16" rx="3" fill="{color}"/>'
                f'<text x="{x + w / 2:.1f}" y="{y + h / 2:.1f}" font-size="11" '
                f'text-anchor="middle" dominant-baseline="central" fill="{text_color_on(color)}" '
                f'font-family="monospace">{html.escape(label)}</text>'
            )
        if raster is None:
            parts.append(f"{title}</g>")
    if raster is not None:
        parts.insert(
            0,
            f'<image class="blocks" x="{LEFT}" y="{TOP}" width="{raster.shape[1]}" '
            f'height="{raster.shape[0]}" href="{png_data_uri(raster)}"/>',
        )
    axes: list[str] = []
    if c is not None:
        axes.append(
            f'<text x="{LEFT + width / 2:.1f}" y="12" font-size="11" text-anchor="middle" '
            f'fill="#333">dim {c} → · {html.escape(_axis_text(lay, c))}</text>'
        )
        starts = [b.index[c][0] for _, b in shown]
        axes += _ticks(starts, cn, width, True, TOP - 6)
    if r is not None:
        cx, cy = 12, TOP + max(height, title_h) / 2
        axes.append(  # rotated clockwise: it reads downwards and its arrow points down
            f'<text x="{cx}" y="{cy:.1f}" font-size="11" text-anchor="middle" fill="#333" '
            f'transform="rotate(90 {cx} {cy:.1f})">{html.escape(row_title)}</text>'
        )
        starts = [b.index[r][0] for _, b in shown]
        axes += _ticks(starts, rn, height, False, LEFT - 4)
    bar = _colour_bar(stats, TOP + height + 10, width) if heat else ""
    total_h = TOP + max(height + (BOTTOM if heat else 6), title_h + 6)
    total_w = LEFT + max(width, 400 if heat else 0) + 8  # the colour bar fits under a tall grid
    head = html.escape(_headline(lay))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
        f'viewBox="0 0 {total_w} {total_h}" role="img" aria-label="{head}" '
        'font-family="system-ui,sans-serif">' + "".join(axes) + "".join(parts) + bar + "</svg>"
    )


def embed(svg_text: str) -> str:
    """An SVG as HTML that survives sanitizers: an ``<img>`` of it (a data: URI) with an image map
    whose areas carry each block's hover title. JupyterLab's sanitizer (a notebook it does not
    trust) drops inline ``<svg>`` and ``<style>`` but keeps the text inside them, which reads
    as a jumble; an image keeps the picture whole."""
    import uuid
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg_text)
    areas = []
    for g in root.iter(f"{ns}g"):
        rect, title = g.find(f"{ns}rect"), g.find(f"{ns}title")
        if rect is None or title is None or not title.text:
            continue
        x, y = float(rect.get("x", 0)), float(rect.get("y", 0))
        w, h = float(rect.get("width", 0)), float(rect.get("height", 0))
        t = html.escape(title.text)
        areas.append(
            f'<area shape="rect" coords="{x:.0f},{y:.0f},{x + w:.0f},{y + h:.0f}" title="{t}" '
            f'alt="{t}">'
        )
    name = f"shardwidget-map-{uuid.uuid4().hex[:12]}"
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg_text.encode()).decode("ascii")
    label = html.escape(root.get("aria-label", "layout"))
    return (
        f'<img class="shardwidget-picture" src="{uri}" width="{root.get("width")}" '
        f'height="{root.get("height")}" alt="{label}" usemap="#{name}" '
        'style="max-width:none">' + (f'<map name="{name}">{"".join(areas)}</map>' if areas else "")
    )


def _colour_bar(stats: Mapping[str, Any] | None, y: float, width: int) -> str:
    """The heatmap's scale: the ramp from vmin to vmax, labelled."""
    if not stats:
        return ""
    lo, hi = float(stats.get("vmin", 0.0)), float(stats.get("vmax", 0.0))
    w = 160
    ramp = png_data_uri(_LUT[np.arange(256, dtype=np.uint8)][None])
    return (
        f'<text x="{LEFT}" y="{y + 9:.1f}" font-size="10" fill="#555">heatmap (pooled means)'
        "</text>"
        f'<text x="{LEFT + 180}" y="{y + 9:.1f}" font-size="10" fill="#555" '
        f'text-anchor="end">{lo:.4g}</text>'
        f'<image x="{LEFT + 184}" y="{y:.1f}" width="{w}" height="12" preserveAspectRatio="none" '
        f'href="{ramp}"/>'
        f'<text x="{LEFT + 188 + w}" y="{y + 9:.1f}" font-size="10" fill="#555">{hi:.4g}</text>'
    )


def _headline(lay: Layout) -> str:
    return (
        f"{lay.typeof} · {lay.sharding_type}"
        + (f" · {lay.spec_text}" if lay.spec_text else f" · {CUSTOM}" if lay.custom else "")
        + f" · {lay.memory_kind}"
    )


def render(
    lay: Layout,
    view_dims: tuple[int, ...] = (),
    width: int = 480,
    n_devices: int | None = None,
    stats: Mapping[str, Any] | None = None,
    error: str = "",
) -> str:
    """The layout as HTML with an inline SVG (no script): a headline (type, sharding, spec,
    memory kind), the mesh, ``error`` when the view shows one, the picture (:func:`svg`) and a
    line of figures. ``n_devices``: the kernel's device count (default: ``jax.device_count()``),
    which the colours depend on, as in the live widget."""
    nd = len(lay.shape)
    dims = tuple(view_dims) if view_dims else ((0, 1) if nd >= 2 else (0,) if nd else ())
    other = [d for d in range(nd) if d not in dims]
    mesh = (
        "mesh "
        + " · ".join(
            f"{n}={s}" for n, s in zip(lay.mesh.axis_names, lay.mesh.axis_sizes, strict=True)
        )
        if lay.mesh is not None
        else f"{lay.n_devices} device{'s' if lay.n_devices > 1 else ''}"
    )
    info = html.escape(
        f"{len(lay.blocks)} blocks of {lay.shard_shape} on {lay.n_devices} devices · replication "
        f"{lay.replication} · {fmt_bytes(lay.bytes_per_device)} per device"
        + (f" · first block along dims {other}" if other else "")
        + (f" · {EMPTY}" if lay.empty else "")
        + (f" · {lay.partial_note}" if lay.partial else "")
    )
    err = (
        '<div class="shardwidget-error" role="alert" style="color:#b00020;margin:2px 0">'
        f"⚠ {html.escape(error)}</div>"
        if error
        else ""
    )
    return (
        '<div class="shardwidget-snapshot" style="font-family:system-ui,sans-serif;'
        'font-size:12px;line-height:1.4">'
        f'<div><b style="font-family:monospace">{html.escape(_headline(lay))}</b></div>'
        f"<div>{html.escape(mesh)}</div>{err}"
        + f"<div>{embed(svg(lay, view_dims, width, n_devices, stats))}</div>"
        + f"<div>{info}</div></div>"
    )


class Snapshot:
    """A view frozen at one moment, for narrative notebooks and course pages: ``view.snapshot()``.

    It displays as the static picture (HTML + SVG; hover a block for its ranges, holders and
    statistics) and prints as the terminal text, both taken when it was made: later changes to
    the view do not reach it. It holds strings only (no arrays, no widget).

    Attributes:
        html: the picture, as text/html.
        text: the terminal text (``repr(view)`` when it was made).
    """

    __slots__ = ("html", "text")

    def __init__(self, html: str, text: str) -> None:
        self.html = html
        self.text = text

    def _repr_html_(self) -> str:
        return self.html

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": self.html}

    def __repr__(self) -> str:
        return self.text
