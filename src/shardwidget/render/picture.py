"""Pictures for slides and papers: ``view.to_svg()`` (a standalone SVG, no browser) and
``view.to_png(path)``, drawn like the live view.

An array view's picture: the header (type, spec, memory kind, mesh), the grid of blocks over two
array dimensions with its rulers (each block's index range, which dimension is sharded over
which axes), each block in its holder's colour (stripes for copies) around its heatmap, with
the holders' ids; the mesh of devices; and the legend (:mod:`shardwidget.render.legend`) with the
heatmap's colour bar. A function view's: every input and output leaf's layout, the collectives
XLA inserted, and memory per device.

Device colours come from :mod:`shardwidget.render.colors` (the live renderer's rule) and the heatmap
ramp is the renderer's viridis, so a picture matches the widget. Other dimensions of an N-d array
show their first block position, as the static snapshot (:mod:`shardwidget.render.snapshot`) does.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..model.gspmd import CUSTOM
from ..model.layout import Layout, layout_of_sharding
from ..model.summary import Summary
from ..model.units import fmt_bytes
from .colors import HEAT_LUT, VIRIDIS, text_color_on
from .legend import MARKS, legend_of
from .png import png_data_uri
from .scene import MAX_STRIPES, ArrayScene, SceneBlock, array_scene
from .text import EMPTY, holder_candidates

if TYPE_CHECKING:
    from ..trace.hlo import Collective
    from ..trace.result import TraceResult

# Named fonts first: cairosvg takes the first family it knows, where a browser would take
# system-ui; DejaVu is on Debian, Menlo / Helvetica on macOS, Consolas / Arial on Windows.
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"
MAX_HEAT_PIXELS = 1 << 16  # of one block's heatmap image, after the upscale below
FG, FG2, FG3 = "#1f2328", "#57606a", "#8c959f"
MAX_TITLES = 1024
"""Beyond this many blocks the grid is one raster image and blocks get no hover text."""


def _wrap(text: str, width_px: float, size: float = 11.5) -> list[str]:
    """text in lines of at most width_px (a sans-serif character is about 0.56 em wide)."""
    return textwrap.wrap(text, max(12, int(width_px / (size * 0.56)))) or [""]


_LUT = np.asarray(HEAT_LUT, np.uint8)


class Svg:
    """An SVG being drawn: elements and shared definitions (stripe patterns, gradients)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.defs: list[str] = []
        self._patterns: dict[tuple[str, ...], str] = {}

    def text(
        self,
        x: float,
        y: float,
        s: str,
        size: float = 12,
        anchor: str = "start",
        fill: str = FG,
        mono: bool = False,
        weight: str = "normal",
        down: bool = False,
    ) -> None:
        """Text at (x, y); ``down``: turned to read downwards (a vertical axis's title)."""
        tr = f' transform="rotate(90 {x:.1f} {y:.1f})"' if down else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-family="{MONO if mono else SANS}" font-weight="{weight}" fill="{fill}"{tr}>'
            f"{html.escape(s)}</text>"
        )

    def rect(self, x: float, y: float, w: float, h: float, fill: str, extra: str = "") -> None:
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(0.0, w):.1f}" height="{max(0.0, h):.1f}" '
            f'fill="{fill}"{extra}/>'
        )

    def stripes(self, colors: Sequence[str]) -> str:
        """A fill of diagonal stripes, one per colour (the live grid's copies)."""
        key = tuple(colors)
        if key not in self._patterns:
            pid = f"sw-stripes-{len(self._patterns)}"
            k, band = len(colors), 6
            rects = "".join(
                f'<rect x="{i * band}" y="0" width="{band}" height="{k * band}" fill="{c}"/>'
                for i, c in enumerate(colors)
            )
            self.defs.append(
                f'<pattern id="{pid}" patternUnits="userSpaceOnUse" width="{k * band}" '
                f'height="{k * band}" patternTransform="rotate(45)">{rects}</pattern>'
            )
            self._patterns[key] = f"url(#{pid})"
        return self._patterns[key]

    def done(self, width: float, height: float, label: str) -> str:
        defs = f"<defs>{''.join(self.defs)}</defs>" if self.defs else ""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'width="{math.ceil(width)}" height="{math.ceil(height)}" '
            f'viewBox="0 0 {math.ceil(width)} {math.ceil(height)}" role="img" '
            f'aria-label="{html.escape(label)}"><title>{html.escape(label)}</title>'
            f'<rect width="100%" height="100%" fill="#ffffff"/>{defs}{"".join(self.parts)}</svg>'
        )


# ------------------------------------------------------------------------------ array views
def array_svg(
    lay: Layout,
    summary: Summary | None = None,
    view_dims: Sequence[int] = (),
    *,
    width: int = 760,
    n_devices: int | None = None,
) -> str:
    """The picture of an array view: header, grid with rulers, mesh, legend (see the module)."""
    return scene_svg(array_scene(lay, summary, view_dims, n_devices=n_devices), width=width)


def scene_svg(scene: ArrayScene, *, width: int = 760) -> str:
    """An array scene as one standalone SVG (what every static surface of an array view shows)."""
    lay = scene.layout
    svg = Svg()
    y = header(svg, scene, 12, 20, width)
    mesh_w = min(260, width // 3)
    grid_w = width - mesh_w - 40
    gh = grid(svg, scene, 12, y + 8, grid_w, 420)
    mh = mesh(svg, lay, width - mesh_w - 8, y + 8, mesh_w, scene.color_of)
    y += 8 + max(gh, mh) + 16
    y = legend(svg, scene, 12, y, width - 24)
    return svg.done(width, y + 8, f"{lay.typeof} {lay.spec_text} {lay.memory_kind}".strip())


def header(svg: Svg, scene: ArrayScene, x: float, y: float, width: float = 760) -> float:
    """The type, spec and memory kind, then the mesh and sizes; returns the y below."""
    lay = scene.layout
    svg.text(x, y, scene.title, size=14, mono=True, weight="bold")
    if lay.mesh is not None:
        axes = " × ".join(
            f"{n}={s}" + (" (explicit)" if t == "explicit" else "")
            for n, s, t in zip(
                lay.mesh.axis_names, lay.mesh.axis_sizes, lay.mesh.axis_types, strict=False
            )
        )
        mesh_text = f"mesh {axes} · "
    else:
        mesh_text = f"{lay.sharding_type}{f' ({CUSTOM})' if lay.custom else ''} · "
    lines = _wrap(mesh_text + scene.facts.line(), width - 2 * x, 12)
    partial = lay.partial_note.split("; ") if lay.partial else []  # a line each: they are long
    notes = [n for n in (EMPTY if lay.empty else "", *partial) if n]
    lines += [part for n in notes for part in _wrap(n, width - 2 * x, 12)]
    for i, part in enumerate(lines):  # the notes say what the grid alone does not
        svg.text(x, y + 18 + 16 * i, part, fill=FG2)
    return y + 26 + 16 * (len(lines) - 1)


def grid(svg: Svg, scene: ArrayScene, x0: float, y0: float, width: float, max_h: float) -> float:
    """The blocks over two dimensions with their rulers; returns the height drawn."""
    lay, r, c, shown = scene.layout, scene.row, scene.col, scene.blocks
    rn = max(1, lay.shape[r]) if r is not None else 1
    cn = max(1, lay.shape[c]) if c is not None else 1
    cols = sorted({b.index[c] for b in shown}) if c is not None else []
    rows = sorted({b.index[r] for b in shown}) if r is not None else []
    row_chars = max((len(f"{a}:{z}") for a, z in rows), default=0)
    left, top = (round(24 + 6.1 * row_chars) if r is not None else 0), 30
    gw = width - left
    gh = min(max_h, max(48.0, gw * rn / cn)) if r is not None else 56.0
    if r is not None and gw * rn / cn > max_h:  # tall: narrower, keeping the array's aspect
        gw = max(48.0, gh * cn / rn)
    # An empty array (a drawn dimension of size 0) has no aspect to keep: a strip of its blocks.
    empty_r, empty_c = r is not None and lay.shape[r] == 0, c is not None and lay.shape[c] == 0
    if empty_r or empty_c:
        gh = min(gh, 96.0)
    gx, gy = x0 + left, y0 + top
    if c is not None:
        svg.text(gx, y0 + 10, scene.col_title + " →", size=11, fill=FG2)
    # The row title reads downwards from the grid's top: a short grid (a wide or an empty array)
    # still reserves its length (about 6.5 px a character at 11 px), so nothing below covers it.
    title_h = 0.0
    if r is not None:
        row_title = scene.row_title + " →"
        svg.text(x0 + 4, gy, row_title, size=11, fill=FG2, down=True)
        title_h = len(row_title) * 6.5 + 6
    _rulers(svg, cols, rows, cn, rn, gx, gy, gw, gh)
    # Many blocks: their rectangles as one raster image (4096 rects were ~480 KiB of SVG), and
    # no hover text (an image map of thousands of areas helps nobody).
    raster = (
        np.full((max(1, round(gh)), max(1, round(gw)), 3), 255, np.uint8)
        if len(shown) > MAX_TITLES
        else None
    )
    for b in shown:
        # along a dimension of size 0 each block is drawn whole (the layout, without elements)
        y1, y2 = b.index[r] if r is not None and not empty_r else (0, 1)
        x1, x2 = b.index[c] if c is not None and not empty_c else (0, 1)
        bx, bw = gx + x1 / cn * gw, (x2 - x1) / cn * gw
        by, bh = gy + y1 / rn * gh, (y2 - y1) / rn * gh
        if raster is not None:
            _fill(raster, bx - gx, by - gy, bw, bh, b.colors[0])
            if b.thumb is not None and scene.heat is not None:
                _fill_heat(raster, bx - gx, by - gy, bw, bh, _heat_rgb(b.thumb, scene.heat))
        _block(svg, lay, b, bx, by, bw, bh, scene.heat, raster is None)
    if raster is not None:
        svg.parts.insert(
            0,
            f'<image class="blocks" x="{gx:.1f}" y="{gy:.1f}" width="{raster.shape[1]}" '
            f'height="{raster.shape[0]}" preserveAspectRatio="none" '
            'style="image-rendering:pixelated" '
            f'xlink:href="{png_data_uri(raster)}"/>',
        )
    if not scene.others:
        return top + max(gh, title_h)
    svg.text(
        gx,
        gy + gh + 13,
        f"showing the first block along the other dimensions ({scene.others})",
        size=10,
        fill=FG3,
    )
    return top + max(gh + 16, title_h)


def _rulers(
    svg: Svg,
    cols: list[tuple[int, int]],
    rows: list[tuple[int, int]],
    cn: int,
    rn: int,
    gx: float,
    gy: float,
    gw: float,
    gh: float,
) -> None:
    """Ruler labels: every k-th range (one k for the ruler, from its longest label and its
    narrowest range), so that no two overlap."""
    col_step = _every(
        6.1 * max((len(f"{a}:{z}") for a, z in cols), default=0) + 6,
        min(((z - a) / cn * gw for a, z in cols), default=1.0),
        len(cols),
    )
    row_step = _every(13, min(((z - a) / rn * gh for a, z in rows), default=1.0), len(rows))
    for k, (a, z) in enumerate(cols):
        if k % col_step == 0:
            mid = gx + (a + z) / 2 / cn * gw
            svg.text(mid, gy - 5, f"{a}:{z}", size=10, anchor="middle", mono=True, fill=FG2)
    for k, (a, z) in enumerate(rows):
        if k % row_step == 0:
            mid = gy + (a + z) / 2 / rn * gh + 4
            svg.text(gx - 4, mid, f"{a}:{z}", size=10, anchor="end", mono=True, fill=FG2)


def _fill(img: np.ndarray, x: float, y: float, w: float, h: float, color: str) -> None:
    """Paint a block into a raster of the grid, with a white line at its right and bottom edges
    where it is at least 3 px wide / tall (as the rectangles' white stroke)."""
    x0, y0 = round(x), round(y)
    x1, y1 = max(x0 + 1, round(x + w)), max(y0 + 1, round(y + h))
    rgb = [int(color[k : k + 2], 16) for k in (1, 3, 5)]
    img[y0 : y1 - (1 if y1 - y0 >= 3 else 0), x0 : x1 - (1 if x1 - x0 >= 3 else 0)] = rgb


def _heat_rgb(thumb: np.ndarray, heat: tuple[float, float]) -> np.ndarray:
    """A heatmap on the picture's one scale as viridis RGB; non-finite pixels at the low end."""
    lo, hi = heat
    q = (thumb - lo) * (255.0 / (hi - lo)) if hi > lo else np.full(thumb.shape, 128.0)
    q = np.where(np.isfinite(q), q, 0.0)
    return _LUT[np.clip(np.rint(q), 0, 255).astype(np.uint8)]


def _fill_heat(img: np.ndarray, x: float, y: float, w: float, h: float, px: np.ndarray) -> None:
    """Paint a block's heatmap into the grid's raster, inside a 1 px ring of its colour (and
    the white edge :func:`_fill` leaves), stretched nearest-neighbour to the block's pixels."""
    x0, y0 = round(x) + 1, round(y) + 1
    x1, y1 = max(round(x) + 1, round(x + w)) - 2, max(round(y) + 1, round(y + h)) - 2
    bh, bw = y1 - y0, x1 - x0
    if bh < 2 or bw < 2:
        return
    rows = np.arange(bh) * px.shape[0] // bh
    cols = np.arange(bw) * px.shape[1] // bw
    img[y0:y1, x0:x1] = px[rows[:, None], cols]


def _every(need: float, have: float, n: int) -> int:
    """Label every k-th of n equal slots of ``have`` px when a label needs ``need`` px."""
    return max(1, min(n, math.ceil(need / max(have, 1e-9))))


def _block(
    svg: Svg,
    lay: Layout,
    b: SceneBlock,
    x: float,
    y: float,
    w: float,
    h: float,
    heat: tuple[float, float] | None,
    rect: bool = True,
) -> None:
    """One block: its holder's colour (stripes for copies), its heatmap inside, its holders;
    its hover title. ``rect=False``: the colour is in the grid's raster already (no title)."""
    devices, colors, thumb = b.devices, list(b.colors), b.thumb
    fill = colors[0] if len(colors) == 1 else svg.stripes(colors)
    if rect:
        svg.parts.append(f'<g class="block"><title>{html.escape(b.title)}</title>')
        svg.rect(x, y, w, h, fill, ' stroke="#ffffff" stroke-width="1"')
    inset = min(6.0, w / 6, h / 6) if len(devices) == 1 else min(8.0, w / 5, h / 5)
    drawn = thumb is not None and heat is not None and w > 2 * inset + 2 and h > 2 * inset + 2
    if drawn and rect:  # (in a raster the heatmap is painted into it: one image, not 4096)
        assert thumb is not None and heat is not None
        px = _heat_rgb(thumb, heat)
        # Each value as a square of pixels: converters that smooth images (cairosvg ignores
        # image-rendering) then blur only the squares' edges, not the whole heatmap.
        rows, cols = px.shape[:2]
        rep = int(min(16, (w - 2 * inset) / cols, (h - 2 * inset) / rows))
        rep = max(1, min(rep, math.isqrt(MAX_HEAT_PIXELS // max(1, rows * cols))))
        if rep > 1:
            px = np.repeat(np.repeat(px, rep, axis=0), rep, axis=1)
        # a white ring keeps the heatmap's colours apart from the holder's colour around it
        svg.rect(x + inset - 1, y + inset - 1, w - 2 * inset + 2, h - 2 * inset + 2, "#ffffff")
        svg.parts.append(
            f'<image x="{x + inset:.1f}" y="{y + inset:.1f}" width="{w - 2 * inset:.1f}" '
            f'height="{h - 2 * inset:.1f}" preserveAspectRatio="none" '
            f'style="image-rendering:pixelated" xlink:href="{png_data_uri(px)}"/>'
        )
    k = len(devices)
    badge = k > MAX_STRIPES and w >= 30 and h >= 34  # drawn below, as the widget's ×N badge
    label, size = _fit_label(devices, w - 4, h, "Σ " if lay.partial else "", badge)
    if label:
        lw, lh = 0.62 * size * len(label) + 4, size + 4
        svg.rect(
            x + w / 2 - lw / 2, y + h / 2 - lh / 2, lw, lh, "#ffffff", ' rx="2" fill-opacity="0.85"'
        )
        svg.text(
            x + w / 2,
            y + h / 2 + size * 0.36,
            label,
            size=round(size, 1),
            anchor="middle",
            mono=True,
            weight="bold",
        )
    if badge:
        svg.text(
            x + w - 4,
            y + h - 5,
            f"×{k}",
            size=10,
            anchor="end",
            mono=True,
            fill=text_color_on(colors[0]),
            weight="bold",
        )
    if rect:
        svg.parts.append("</g>")


def _fit_label(
    devices: tuple[int, ...], w: float, h: float, prefix: str = "", badge: bool = False
) -> tuple[str, float]:
    """The holders' label and a font size (6 to 11 px) that fit w × h, from the widget's
    candidates (:func:`~shardwidget.render.text.holder_candidates`:
    "0,4", "0–3 ×4", "×4"): the first
    that fits in 11 px, else the first that fits in a smaller font; "" when none fits.
    ``prefix``: "Σ " for the holders of an unreduced block's partial sums (tried first, then
    the bare labels). ``badge``: a separate ×N badge is drawn, so no count-only label."""
    holders = holder_candidates(devices, badge)
    cands = [prefix + c for c in holders] + holders if prefix else holders

    def size_of(label: str) -> float:
        return min(11.0, (w - 4) / (0.62 * max(1, len(label))), h - 4)

    for floor in (11.0, 6.0):
        for c in cands:
            if size_of(c) >= floor:
                return c, size_of(c)
    return "", 0


def mesh(
    svg: Svg, lay: Layout, x0: float, y0: float, width: float, color_of: Callable[[int], str]
) -> float:
    """The devices in mesh order (rows: every axis but the last), each in its colour."""
    if lay.mesh is not None:
        names, sizes, ids = lay.mesh.axis_names, lay.mesh.axis_sizes, lay.mesh.device_ids
        title = "Mesh " + " × ".join(f"{n}={s}" for n, s in zip(names, sizes, strict=False))
    else:
        names, sizes, ids = (), (len(lay.devices),), tuple(d.id for d in lay.devices)
        title = f"Devices ({len(ids)})"
    cols = sizes[-1] if sizes else 1
    rows = max(1, math.prod(sizes[:-1]))
    cell = max(1.0, min(36.0, (width - 24) / cols, 360 / rows))
    gap = 2.0 if cell >= 10 else cell / 6  # small cells: a hairline between them
    svg.text(x0, y0 + 10, title, size=12, weight="bold", fill=FG2)
    top, left = 30, 18
    if names:
        svg.text(x0 + left, y0 + top - 5, f"{names[-1]}={sizes[-1]} →", size=10, fill=FG2)
        if len(names) > 1:
            lab = " × ".join(f"{n}={s}" for n, s in zip(names[:-1], sizes[:-1], strict=False))
            svg.text(x0 + 4, y0 + top, lab + " →", size=10, fill=FG2, down=True)
    holding = set(lay.device_block)
    for i, d in enumerate(ids):
        cx, cy = x0 + left + (i % cols) * cell, y0 + top + (i // cols) * cell
        col = color_of(d) if d in holding else "#eeeeee"
        svg.rect(cx, cy, cell - gap, cell - gap, col, ' rx="2"' if cell >= 10 else "")
        if cell >= 14:
            svg.text(
                cx + (cell - gap) / 2,
                cy + (cell - gap) / 2 + 4,
                str(d),
                size=min(11, cell / 2.6),
                anchor="middle",
                mono=True,
                fill=text_color_on(col),
                weight="bold",
            )
    return top + rows * cell


def legend(svg: Svg, scene: ArrayScene, x0: float, y0: float, width: float) -> float:
    """The legend: replication in words, what each mark means, the heatmap's colour bar."""
    lay, lg, heat = scene.layout, scene.legend, scene.heat
    svg.text(x0, y0 + 10, "Legend", size=12, weight="bold", fill=FG2)
    y = y0 + 28
    for line in lg.replication:
        for i, part in enumerate(_wrap(line, width - 24)):
            svg.text(x0 + (8 if i == 0 else 18), y, f"• {part}" if i == 0 else part, size=11.5)
            y += 16
    y = _marks(svg, lg.marks, x0, y + 4, width)
    if lay.partial:  # no heatmap, so no colour bar: the inner heatmap mark says why
        return y
    gid = "sw-ramp"
    stops = "".join(f'<stop offset="{i / 8:.3f}" stop-color="rgb{VIRIDIS[i]}"/>' for i in range(9))
    svg.defs.append(f'<linearGradient id="{gid}">{stops}</linearGradient>')
    y += 4
    svg.text(x0 + 8, y + 9, "heatmap", size=11.5, weight="bold")
    if heat is None:
        svg.text(x0 + 120, y + 9, "no values (statistics unavailable)", size=11.5, fill=FG3)
        return y + 18
    lo, hi = (f"{v:.6g}" for v in heat)
    svg.text(x0 + 120, y + 9, lo, size=11, mono=True, fill=FG2)
    bx = x0 + 120 + 7 * len(lo) + 6
    svg.rect(bx, y, 160, 11, f"url(#{gid})", ' rx="2"')
    svg.text(bx + 166, y + 9, hi, size=11, mono=True, fill=FG2)
    return y + 18


def _marks(svg: Svg, items: Sequence[tuple[str, str]], x0: float, y: float, width: float) -> float:
    """What each mark means, one per line (wrapped); returns the y below."""
    for mark, meaning in items:
        svg.text(x0 + 8, y, mark, size=11.5, weight="bold")
        for part in _wrap(meaning, width - 120):
            svg.text(x0 + 120, y, part, size=11.5, fill=FG2)
            y += 16
    return y


def marks(svg: Svg, x0: float, y0: float, width: float) -> float:
    """The function picture's legend: what the marks mean (its grids carry no heatmap)."""
    svg.text(x0, y0 + 10, "Legend", size=12, weight="bold", fill=FG2)
    items = [(m, t) for m, t in MARKS if m != "inner heatmap"]
    return _marks(svg, items, x0, y0 + 28, width)


# ------------------------------------------------------------------------------ function views
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
        import jax

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
        words = _wrap(" · ".join(legend_of(lay).replication), col_w, 10.5)
        for j, part in enumerate(words):
            svg.text(x, y + 27 + 13 * j, part, size=10.5, fill=FG2)
        top = 22 + 13 * len(words)
        h = top + grid(svg, array_scene(lay, n_devices=n_devices), x, y + top, col_w, 200)
        row_h = max(row_h, h)
    y += row_h + 24
    y = _collectives(svg, res, 12, y, width - 24)
    if res.memory:
        mem = " · ".join(f"{k} {fmt_bytes(v)}" for k, v in res.memory.items() if v)
        for part in _wrap(f"Memory per device: {mem}", width - 24):
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
            f"result {c.dtype}"
            f"[{','.join(map(str, c.shape))}]"
        )
        for i, part in enumerate(_wrap(line, width - 8)):
            svg.text(x + (8 if i == 0 else 18), y, part, size=11.5)
            y += 16
        for part in _wrap(f"why: {c.cause.text}", width - 18) if c.cause is not None else []:
            svg.text(x + 18, y, part, size=11, fill=FG3)
            y += 15
    if len(res.collectives) > 24:
        svg.text(x + 8, y, f"… and {len(res.collectives) - 24} more", size=11.5, fill=FG3)
        y += 16
    return y
