// Array pane: the blocks of the two drawn dims at the current slice of the others.
//
// Two ways to draw, by size (CANVAS_THRESHOLD): up to 256 visible blocks, DOM blocks built as one
// HTML string and placed by CSS grid tracks (labels are real text); above, one <canvas> written
// as pixels (colours, stripes, thumbnails and labels in a bitmap font, pixelfont.ts), with
// highlights composed over an offscreen copy. Both draw the geometry (blocks, colours, labels,
// ticks) inside the `shardwidget:render` measure; the thumbnails' pixels follow in finishData(),
// a microtask later and before the browser paints (`shardwidget:thumbs`).
//
// Keyboard: the grid element is one tab stop (role=application) with a roving cursor over the
// cells (moveCursor in blocks.ts): arrows, Home/End (Ctrl: whole grid), PageUp/PageDown, Enter or
// Space pins the block (the grid keeps the focus; the view's Escape unpins). The cursor shows as
// an outline (DOM) or a ring drawn on the canvas, in the theme's accent, only under keyboard
// focus; a polite live region reads out the block under it.
import type { Layout, Stats } from "../wire";
import {
  allocate,
  isCursorKey,
  locate,
  moveCursor,
  selectGrid,
  sliderDims,
  type GridSelection,
} from "./blocks";
import { blockBackground, rampLUT, textColorOn } from "../shared/colors";
import {
  canvasLabel,
  deviceLabelCandidates,
  deviceListText,
  fitLabel,
  rangeLabelCandidates,
} from "./labels";
import {
  blockThumb,
  packThumbs,
  thumbCanvas,
  type Thumb,
} from "./stats";
import { formatHalfOpen, textWidth } from "../shared/text";
import { lighten, PIXEL_FONTS, pixelTextWidth, writeText } from "../shared/pixelfont";
import { entryAxes } from "../shared/spec";
import { mark, measure } from "../shared/dom";

/** Above this many visible blocks the grid is drawn on one <canvas>. */
export const CANVAS_THRESHOLD = 256;
export const MAX_GRID_WIDTH = 720;
const MAX_GRID_HEIGHT = 460;
const LABEL_FONT = 12;
const SMALL_FONT = 10;
const TICK_FONT = 11;
/** Padding (px) of .sw-grid-host (styles.ts). */
const HOST_PAD = 4;


function context2d(cv: HTMLCanvasElement): CanvasRenderingContext2D | null {
  let ctx: CanvasRenderingContext2D | null = null;
  try {
    ctx = cv.getContext("2d");
  } catch {
    ctx = null;
  }
  return ctx && typeof ctx.fillRect === "function" ? ctx : null;
}

export interface GridCallbacks {
  colorOf(id: number): string;
  hoverBlock(k: number | null): void;
  clickBlock(k: number): void;
  setViewDims(dims: number[]): void;
  setSlice(dim: number, index: number): void;
}

export interface GridInput {
  layout: Layout;
  stats: Stats | null;
  viewDims: number[];
  slice: number[];
  width: number;
  /** The tallest the grid may be drawn (px); MAX_GRID_HEIGHT when absent. */
  maxHeight?: number;
  /** Device colours for this render (else the callbacks' colorOf). */
  colorOf?: (id: number) => string;
}

export interface GridGeometry {
  sel: GridSelection;
  gutterLeft: number;
  gutterTop: number;
  width: number;
  height: number;
  xs: number[];
  ys: number[];
  canvas: boolean;
}

/** Pixel geometry of the grid for a selection and an available width. */
export function gridGeometry(
  layout: Layout,
  sel: GridSelection,
  avail: number,
  maxHeight = MAX_GRID_HEIGHT,
): GridGeometry {
  // The row gutter holds "a:b" labels when every row is tall enough for one, else start-only
  // ticks: size it for the labels that will be drawn.
  const fullW = Math.max(0, ...sel.rowRanges.map((r) => textWidth(`${r[0]}:${r[1]}`, TICK_FONT)));
  const g = geometryFor(layout, sel, avail, fullW, maxHeight);
  if (sel.rowDim < 0 || rowsTakeFullLabels(g.ys)) return g;
  const startW = Math.max(0, ...sel.rowRanges.map((r) => textWidth(String(r[0]), TICK_FONT)));
  const h = geometryFor(layout, sel, avail, startW, maxHeight);
  return rowsTakeFullLabels(h.ys) ? g : h;
}

const ROW_LINE = 14;

function rowsTakeFullLabels(ys: number[]): boolean {
  for (let i = 0; i + 1 < ys.length; i++) if (ys[i + 1] - ys[i] < ROW_LINE) return false;
  return true;
}

function geometryFor(
  layout: Layout,
  sel: GridSelection,
  avail: number,
  rowLabelW: number,
  maxHeight: number,
): GridGeometry {
  const canvas = sel.visible.length > CANVAS_THRESHOLD;
  const hasRows = sel.rowDim >= 0;
  const gutterLeft = hasRows ? 18 + rowLabelW + 6 : 0;
  const gutterTop = sel.colDim >= 0 ? 34 : 0;
  let gw = Math.max(80, Math.min(avail, MAX_GRID_WIDTH + gutterLeft) - gutterLeft);
  let gh: number;
  const nR = sel.rowRanges.length;
  if (sel.colDim < 0) {
    gw = Math.min(gw, 160);
    gh = 72;
  } else if (!hasRows) {
    gh = 64;
  } else {
    const rl = layout.shape[sel.rowDim] || 1;
    const cl = layout.shape[sel.colDim] || 1;
    const aspect = Math.max(0.2, Math.min(2, rl / cl));
    gh = gw * aspect;
    if (gh > maxHeight) {
      gh = maxHeight;
      gw = Math.max(Math.min(gw, gh / aspect), Math.min(gw, 240));
    }
  }
  const minPx = canvas ? 2 : 8;
  gh = Math.max(gh, Math.min(nR * minPx, 900));
  gw = Math.round(gw);
  gh = Math.round(gh);
  const xs = allocate(
    sel.colRanges.map((r) => r[1] - r[0]),
    gw,
    minPx,
  );
  const ys = allocate(
    sel.rowRanges.map((r) => r[1] - r[0]),
    gh,
    minPx,
  );
  return { sel, gutterLeft, gutterTop, width: gw, height: gh, xs, ys, canvas };
}

type Tick = { text: string; full: boolean; at: number; span: number; index: number };

/** Which tick labels to show along an axis: full "a:b" centred when every one fits its block,
 *  else start-only ticks placed greedily without overlap. `need(text)` is the room a label takes
 *  along the axis (its width for columns, a line height for rows); `gap` separates short ticks. */
function ticks(
  ranges: [number, number][],
  offsets: number[],
  need: (text: string) => number,
  gap: number,
  fullPad: number,
  slack = 0,
): Tick[] {
  const span = (i: number) => offsets[i + 1] - offsets[i];
  if (ranges.every((r, i) => need(rangeLabelCandidates(r)[0]) + fullPad <= span(i))) {
    return ranges.map((r, i) => ({
      text: rangeLabelCandidates(r)[0],
      full: true,
      at: offsets[i],
      span: span(i),
      index: i,
    }));
  }
  // Start labels on every k-th boundary, k the smallest power of two at which none overlap: an
  // even stride reads as a scale (0, 256, 512, …), where greedy packing skips irregularly.
  const end = offsets[offsets.length - 1];
  const labels = ranges.map((r) => rangeLabelCandidates(r)[1]);
  const widths = labels.map((t) => need(t));
  const strided = (k: number): Tick[] | null => {
    const out: Tick[] = [];
    let free = 0;
    for (let i = 0; i < ranges.length; i += k) {
      if (offsets[i] < free) return null;
      if (offsets[i] + widths[i] > end + slack) break; // the last label may not fit at the end
      out.push({ text: labels[i], full: false, at: offsets[i], span: widths[i], index: i });
      free = offsets[i] + widths[i] + gap;
    }
    return out;
  };
  for (let k = 1; k < ranges.length; k *= 2) {
    const out = strided(k);
    if (out) return out;
  }
  return strided(ranges.length) ?? [];
}

/** Column ticks (labels laid out horizontally). */
export function axisTicks(ranges: [number, number][], offsets: number[], fontPx = TICK_FONT): Tick[] {
  return ticks(ranges, offsets, (t) => textWidth(t, fontPx), 8, 4);
}

/** Row ticks: one line each, so a label needs a line height along the axis. */
export function axisTicksVertical(ranges: [number, number][], offsets: number[]): Tick[] {
  return ticks(ranges, offsets, () => ROW_LINE, 4, 0, 2);
}

function dimTitle(layout: Layout, d: number): string {
  const axes = entryAxes(layout.spec[d]);
  const by = axes.length ? ` · sharded over ${axes.join("+")}` : " · not sharded";
  return `dim ${d} (${layout.shape[d]})${by}`;
}

const replicatedFrame = (n: number): number => (n > 1 ? 7 : 4);

const SPECIAL = /[&<>"]/;

function esc(s: string): string {
  if (!SPECIAL.test(s)) return s;
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function blockTooltip(layout: Layout, k: number): string {
  const b = layout.blocks[k];
  const ranges = b.i.map((r, d) => `dim ${d} ${formatHalfOpen(r)}`).join(", ");
  return `${ranges}\n${deviceListText(b.d)}`;
}

/** The frame (px) of the block's colour around the thumbnail of a DOM block of `w`×`h` px held
 *  by `holders` devices (wider for stripes), or 0 when no thumbnail fits. */
function thumbInset(w: number, h: number, holders: number): number {
  if (w < 18 || h < 18) return 0;
  const inset = Math.max(replicatedFrame(holders), Math.min(14, Math.round(Math.min(w, h) * 0.12)));
  return w - 2 * inset >= 6 && h - 2 * inset >= 6 ? inset : 0;
}

/** How far a label's chip lightens what it covers on the canvas: enough for dark text, little
 *  enough that the thumbnail and the block's colour still show through. */
const CHIP_ALPHA = 0.62;

/** Width (CSS px) of one holder's stripe in a replicated block on the canvas. */
const STRIPE_PX = 4;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The smallest block (px) that shows a thumbnail on the canvas. */
const CANVAS_THUMB_MIN = 12;

/** The white gap (px) right of and below each DOM block: 1 when every block is at least 6 px. */
function gridGap(g: GridGeometry): number {
  for (let i = 0; i + 1 < g.xs.length; i++) if (g.xs[i + 1] - g.xs[i] < 6) return 0;
  for (let i = 0; i + 1 < g.ys.length; i++) if (g.ys[i + 1] - g.ys[i] < 6) return 0;
  return 1;
}

/** CSS grid tracks for offsets: "repeat(4, 45px)" or "44px 45px …". */
function tracks(offsets: number[]): string {
  const sizes: number[] = [];
  for (let i = 0; i + 1 < offsets.length; i++) sizes.push(offsets[i + 1] - offsets[i]);
  if (sizes.every((v) => v === sizes[0])) return `repeat(${sizes.length}, ${sizes[0]}px)`;
  return sizes.map((v) => `${v}px`).join(" ");
}

/** Every thumbnail in one 8-bit BMP (the thumbnails' bytes are already indices into the
 *  viridis ramp, which becomes the palette) behind a blob: URL: a quarter of the bytes of an
 *  RGBA image, filled by row copies. Positions are packThumbs's (each tile with a 1 px border
 *  copied from its edge, so that scaled sampling never bleeds into a neighbour). Null where
 *  blob URLs are unavailable (tests) or there is nothing to pack. */
export function paletteAtlas(thumbs: Map<number, Thumb>): { url: string } | null {
  const U = typeof URL !== "undefined" ? URL : null;
  if (!thumbs.size || !U || typeof U.createObjectURL !== "function" || typeof Blob === "undefined")
    return null;
  const bytes = paletteBmp(thumbs);
  try {
    return { url: U.createObjectURL(new Blob([bytes], { type: "image/bmp" })) };
  } catch {
    return null;
  }
}

/** The BMP file of paletteAtlas (exported for tests). */
export function paletteBmp(thumbs: Map<number, Thumb>): Uint8Array<ArrayBuffer> {
  const pack = packThumbs(thumbs);
  const { width, height } = pack;
  const stride = (width + 3) & ~3;
  const head = 14 + 40 + 256 * 4;
  const buf = new Uint8Array(head + stride * height);
  const dv = new DataView(buf.buffer);
  buf[0] = 0x42; // "BM"
  buf[1] = 0x4d;
  dv.setUint32(2, buf.length, true);
  dv.setUint32(10, head, true); // pixel data offset
  dv.setUint32(14, 40, true); // BITMAPINFOHEADER
  dv.setInt32(18, width, true);
  dv.setInt32(22, -height, true); // negative: rows top-down
  dv.setUint16(26, 1, true);
  dv.setUint16(28, 8, true); // 8 bits per pixel, paletted
  dv.setUint32(34, stride * height, true);
  dv.setUint32(46, 256, true); // colours used
  const lut = rampLUT();
  for (let v = 0; v < 256; v++) {
    buf[54 + v * 4] = lut[v * 4 + 2];
    buf[54 + v * 4 + 1] = lut[v * 4 + 1];
    buf[54 + v * 4 + 2] = lut[v * 4];
  }
  for (const [k, t] of thumbs) {
    const [x0, y0] = pack.at.get(k)!;
    for (let r = -1; r <= t.rows; r++) {
      const sr = Math.min(t.rows - 1, Math.max(0, r)) * t.cols;
      const o = head + (y0 + r) * stride + x0;
      buf.set(t.data.subarray(sr, sr + t.cols), o);
      buf[o - 1] = t.data[sr];
      buf[o + t.cols] = t.data[sr + t.cols - 1];
    }
  }
  return buf;
}

type Highlight = { related: Set<number>; found: Set<number>; pinned: number | null; dim: boolean };

export class ArrayPane {
  readonly el: HTMLElement;
  private bar: HTMLElement;
  private host: HTMLElement;
  private wrap: HTMLElement;
  /** Axis titles and tick labels (one HTML string, replaced only when it changes). */
  private axes: HTMLElement;
  /** The blocks (DOM) or the canvas; one tab stop for the keyboard, kept across renders. */
  private grid: HTMLElement;
  /** Announces the block under the keyboard cursor. */
  private live: HTMLElement;
  private geom: GridGeometry | null = null;
  private layout: Layout | null = null;
  private canvasEl: HTMLCanvasElement | null = null;
  private base: HTMLCanvasElement | null = null;
  /** DOM mode: grid.children[i] draws block keys[i]; index is the inverse. */
  private keys: number[] = [];
  private index = new Map<number, number>();
  /** DOM mode: blocks that carry a highlight class. */
  private marked = new Set<number>();
  private axesHtml = "";
  private gridHtml = "";
  private gridBox = "";
  private thumbs = new Map<number, Thumb>();
  private atlasUrl: string | null = null;
  /** What the thumbnails were taken from (stats object, drawn dims), and what the atlas was. */
  private thumbsOf: [Stats, string] | null = null;
  private atlasOf: [Stats, string] | null = null;
  private atlasHtml = "";
  private dataPending = false;
  private textColors = new Map<string, string>();
  private pixels = new Map<string, number | null>();
  /** The canvas label font (index in PIXEL_FONTS; past the end: none) for the current geometry;
   *  -1: not chosen yet. */
  private canvasFont = -1;
  /** Whether the visible canvas shows exactly the blocks (no highlight drawn over them). */
  private screenIsBase = false;
  private ramp: Uint32Array | null = null;
  private hl: Highlight = { related: new Set(), found: new Set(), pinned: null, dim: false };
  /** The block under the keyboard cursor, and whether the cursor is shown (keyboard focus). */
  private cursor: number | null = null;
  private kbd = false;
  private pointerDown = false;
  private pinning = false;
  private accent = "";
  private barKey = "";
  /** The block last under the mouse on the canvas (-2: none yet). */
  private lastHit = -2;
  private colorOf: (id: number) => string;

  constructor(
    private readonly doc: Document,
    private readonly cb: GridCallbacks,
  ) {
    this.colorOf = (id) => cb.colorOf(id);
    this.el = doc.createElement("section");
    this.el.className = "sw-array";
    this.el.setAttribute("aria-label", "array blocks");
    this.bar = doc.createElement("div");
    this.bar.className = "sw-viewbar";
    this.host = doc.createElement("div");
    this.host.className = "sw-grid-host";
    this.wrap = doc.createElement("div");
    this.wrap.className = "sw-grid-wrap";
    this.axes = doc.createElement("div");
    this.axes.className = "sw-axes";
    this.grid = doc.createElement("div");
    this.grid.className = "sw-grid";
    this.grid.tabIndex = 0;
    this.grid.setAttribute("role", "application");
    this.grid.setAttribute("aria-roledescription", "block grid");
    this.live = doc.createElement("div");
    this.live.className = "sw-visually-hidden";
    this.live.setAttribute("role", "status");
    this.live.setAttribute("aria-live", "polite");
    this.live.setAttribute("aria-atomic", "true");
    this.wrap.append(this.axes, this.grid);
    this.host.append(this.wrap);
    this.el.append(this.bar, this.host, this.live);
    this.listen();
  }

  // ---- events (delegated: set up once, whatever the grid draws) ------------------------------

  private blockOf(target: EventTarget | null, exact: boolean): number | null {
    const t = target as HTMLElement | null;
    if (!t || this.canvasEl) return null;
    const e = exact
      ? t.classList?.contains("sw-block")
        ? t
        : null
      : typeof t.closest === "function"
        ? t.closest<HTMLElement>(".sw-block")
        : null;
    if (!e || e.parentElement !== this.grid) return null;
    const k = Number(e.dataset.block);
    return this.index.has(k) ? k : null;
  }

  private canvasPoint(ev: MouseEvent): number {
    const cv = this.canvasEl;
    if (!cv) return -1;
    const rect = cv.getBoundingClientRect();
    return this.hitTest(ev.clientX - rect.left, ev.clientY - rect.top);
  }

  private listen(): void {
    const g = this.grid;
    // Blocks: mouseenter / mouseleave do not bubble; a capture listener on the grid sees them.
    g.addEventListener(
      "mouseenter",
      (ev) => {
        const k = this.blockOf(ev.target, true);
        if (k === null) return;
        // The tooltip text is made when first needed, not for every block of every render.
        const e = ev.target as HTMLElement;
        if (!e.title && this.layout) e.title = blockTooltip(this.layout, k);
        this.cb.hoverBlock(k);
      },
      true,
    );
    g.addEventListener(
      "mouseleave",
      (ev) => {
        if (this.blockOf(ev.target, true) !== null) this.cb.hoverBlock(null);
        else if (this.canvasEl && ev.target === this.canvasEl) {
          this.lastHit = -2;
          this.cb.hoverBlock(null);
        }
      },
      true,
    );
    g.addEventListener("mousemove", (ev) => {
      const cv = this.canvasEl;
      if (!cv || ev.target !== cv) return;
      const k = this.canvasPoint(ev);
      if (k !== this.lastHit) {
        this.lastHit = k;
        cv.title = k >= 0 && this.layout ? blockTooltip(this.layout, k) : "";
        this.cb.hoverBlock(k >= 0 ? k : null);
      }
    });
    g.addEventListener("click", (ev) => {
      const k = this.canvasEl ? this.canvasPoint(ev) : (this.blockOf(ev.target, false) ?? -1);
      if (k < 0) return;
      this.cursor = k;
      this.cb.clickBlock(k);
    });
    const down = () => {
      this.pointerDown = true;
      if (this.kbd) {
        this.kbd = false;
        this.showCursor();
      }
    };
    g.addEventListener("mousedown", down);
    g.addEventListener("focus", () => {
      if (this.pinning) return;
      this.kbd = !this.pointerDown;
      this.pointerDown = false;
      this.accent = ""; // read the theme's accent again (it may have changed since)
      if (!this.kbd) return;
      if (this.cursor === null || !this.geom?.sel.pos.has(this.cursor)) this.cursor = this.startBlock();
      this.moveTo(this.cursor);
    });
    g.addEventListener("blur", () => {
      this.pointerDown = false;
      if (this.pinning) return;
      const was = this.kbd;
      this.kbd = false;
      this.showCursor();
      if (was) this.cb.hoverBlock(null);
    });
    g.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  /** Where the cursor starts: the pinned block when it is drawn, else the first block. */
  private startBlock(): number | null {
    const g = this.geom;
    if (!g) return null;
    if (this.hl.pinned !== null && g.sel.pos.has(this.hl.pinned)) return this.hl.pinned;
    for (const k of g.sel.cells) if (k >= 0) return k;
    return null;
  }

  private onKey(ev: KeyboardEvent): void {
    const g = this.geom;
    if (!g || ev.altKey) return;
    if (ev.key === "Enter" || ev.key === " ") {
      const k = this.cursor ?? this.startBlock();
      if (k === null) return;
      ev.preventDefault();
      this.kbd = true;
      this.pin(k);
      return;
    }
    if (!isCursorKey(ev.key)) return;
    ev.preventDefault();
    this.kbd = true;
    const cur = this.cursor !== null ? g.sel.pos.get(this.cursor) : undefined;
    if (!cur) {
      this.moveTo(this.startBlock());
      return;
    }
    const nC = g.sel.colRanges.length;
    const [r, c] = moveCursor(g.sel.cells, nC, cur[0], cur[1], ev.key, ev.ctrlKey || ev.metaKey);
    this.moveTo(g.sel.cells[r * nC + c]);
  }

  /** Pin (or unpin) block k from the keyboard: the grid keeps the focus, so the arrows go on
   *  moving the cursor (Escape, handled by the view, unpins). */
  private pin(k: number): void {
    this.cursor = k;
    this.pinning = true;
    try {
      this.cb.clickBlock(k);
      if (this.doc.activeElement !== this.grid) this.grid.focus({ preventScroll: true });
    } finally {
      this.pinning = false;
    }
    this.showCursor();
    this.announce(k, true);
  }

  private moveTo(k: number | null): void {
    if (k === null || k < 0) return;
    this.cursor = k;
    this.showCursor();
    this.announce(k, false);
    this.cb.hoverBlock(k);
  }

  private announce(k: number, pinning: boolean): void {
    const g = this.geom;
    const layout = this.layout;
    const p = g?.sel.pos.get(k);
    if (!g || !layout || !p) return;
    const where =
      g.sel.rowDim >= 0
        ? `row ${p[0] + 1} of ${g.sel.rowRanges.length}, column ${p[1] + 1} of ${g.sel.colRanges.length}`
        : `block ${p[1] + 1} of ${g.sel.colRanges.length}`;
    const pinned = this.hl.pinned === k ? "; pinned" : pinning ? "; unpinned" : "";
    this.live.textContent = `${where}: ${blockTooltip(layout, k).replace("\n", "; ")}${pinned}`;
  }

  /** Draw the keyboard cursor where it is now (or nowhere without keyboard focus). */
  private showCursor(): void {
    this.grid.classList.toggle("sw-kbd", this.kbd);
    if (this.canvasEl) {
      this.drawCanvas();
      return;
    }
    const prev = this.grid.querySelector(".sw-cursor");
    const e = this.kbd && this.cursor !== null ? this.blockEl(this.cursor) : null;
    if (prev && prev !== e) prev.classList.remove("sw-cursor");
    e?.classList.add("sw-cursor");
  }

  // ---- rendering --------------------------------------------------------------------------

  /** Redraw the grid for new input. The geometry (blocks, colours, labels, ticks) is drawn now;
   *  the thumbnails' pixels follow in finishData() (called at the end of the current task). */
  update(inp: GridInput): void {
    mark("shardwidget:grid-start");
    const { layout, stats, viewDims, slice } = inp;
    this.colorOf = inp.colorOf ?? ((id) => this.cb.colorOf(id));
    if (this.host.parentNode !== this.el) this.el.replaceChildren(this.bar, this.host, this.live);
    this.layout = layout;
    this.updateBar(layout, viewDims, slice);
    const sel = selectGrid(layout, viewDims, slice);
    // The host's padding leaves room for the focus ring.
    const geom = gridGeometry(layout, sel, inp.width - 2 * HOST_PAD, inp.maxHeight);
    this.geom = geom;
    this.lastHit = -2;

    // Thumbnails of the blocks big enough to show one (their pixels are drawn later).
    this.thumbs = new Map();
    this.thumbsOf = stats ? [stats, viewDims.join(",")] : null;
    if (stats && stats.status === "ready") {
      const { xs, ys } = geom;
      for (const k of sel.visible) {
        const r = sel.pos.row(k);
        const c = sel.pos.col(k);
        const w = xs[c + 1] - xs[c];
        const h = ys[r + 1] - ys[r];
        const fits = geom.canvas
          ? w >= CANVAS_THUMB_MIN && h >= CANVAS_THUMB_MIN
          : thumbInset(w, h, layout.blocks[k].d.length) > 0;
        if (!fits) continue;
        const t = blockThumb(stats, k, viewDims);
        if (t) this.thumbs.set(k, t);
      }
    }

    const axesHtml = this.axesMarkup(layout, geom);
    if (axesHtml !== this.axesHtml) {
      this.axes.innerHTML = axesHtml;
      this.axesHtml = axesHtml;
    }
    let box =
      `left:${geom.gutterLeft}px;top:${geom.gutterTop}px;` +
      `width:${geom.width}px;height:${geom.height}px`;
    if (!geom.canvas)
      box += `;grid-template-columns:${tracks(geom.xs)};grid-template-rows:${tracks(geom.ys)}`;
    if (box !== this.gridBox) {
      this.wrap.style.cssText =
        `width:${geom.gutterLeft + geom.width}px;height:${geom.gutterTop + geom.height}px`;
      const atlas = this.grid.style.getPropertyValue("--sw-atlas");
      this.grid.style.cssText = box;
      if (atlas) this.grid.style.setProperty("--sw-atlas", atlas);
      this.gridBox = box;
    }
    this.grid.classList.toggle("sw-grid-dom", !geom.canvas);
    if (geom.canvas) this.grid.classList.remove("sw-dimming"); // the canvas dims itself
    this.grid.classList.toggle("sw-gap", !geom.canvas && gridGap(geom) > 0);
    const nR = sel.rowRanges.length;
    const nC = sel.colRanges.length;
    const shape = sel.rowDim >= 0 ? `${nR} rows × ${nC} columns` : `${nC} columns`;
    this.grid.setAttribute(
      "aria-label",
      `${sel.visible.length} ${sel.visible.length === 1 ? "block" : "blocks"} in ${shape}. ` +
        "Arrow keys move between blocks, Home and End go to the ends of a row, " +
        "Enter pins a block's details, Escape unpins.",
    );
    let html: string;
    if (geom.canvas) {
      const dpr = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
      html =
        `<canvas class="sw-canvas" aria-hidden="true" width="${Math.round(geom.width * dpr)}"` +
        ` height="${Math.round(geom.height * dpr)}"` +
        ` style="width:${geom.width}px;height:${geom.height}px"></canvas>`;
    } else {
      html = this.blocksMarkup(layout, geom);
    }
    if (html !== this.gridHtml) {
      this.releaseAtlas();
      this.grid.innerHTML = html;
      this.gridHtml = html;
      this.marked.clear();
    }
    this.base = null;
    this.screenIsBase = false;
    this.canvasFont = -1;
    if (geom.canvas) {
      this.canvasEl = this.grid.firstElementChild as HTMLCanvasElement;
      this.keys = [];
      this.index.clear();
    } else {
      this.canvasEl = null;
    }
    if (this.cursor !== null && !sel.pos.has(this.cursor)) this.cursor = null;
    this.dataPending = true;
    queueMicrotask(() => this.finishData());
    this.applyHighlight();
    this.showCursor();
    measure("shardwidget:grid", "shardwidget:grid-start");
  }

  /** Draw what the geometry does not need: the thumbnails' pixels (one atlas image). Runs once
   *  after each update(), before the browser paints; measured as `shardwidget:thumbs`. */
  finishData(): void {
    if (!this.dataPending) return;
    this.dataPending = false;
    if (this.thumbs.size === 0) return;
    // DOM: the same thumbnails in the same places (a redraw for another reason) keep the image.
    const a = this.atlasOf;
    const b = this.thumbsOf;
    const same = !!a && !!b && a[0] === b[0] && a[1] === b[1] && this.atlasHtml === this.gridHtml;
    if (!this.canvasEl && this.atlasUrl && same) return;
    mark("shardwidget:thumbs-start");
    if (this.canvasEl) {
      const g = this.geom;
      const layout = this.layout;
      if (g && layout) {
        if (this.base) {
          this.paintBase(this.base, g, layout, true);
          this.drawCanvas();
        } else if (this.screenIsBase) {
          this.paintBase(this.canvasEl, g, layout, true);
        }
      }
    } else {
      const atlas = paletteAtlas(this.thumbs);
      this.releaseAtlas();
      this.atlasOf = this.thumbsOf;
      this.atlasHtml = this.gridHtml;
      if (atlas) {
        this.atlasUrl = atlas.url;
        this.grid.style.setProperty("--sw-atlas", `url("${atlas.url}")`);
      } else {
        // No blob URLs (tests): one small canvas per thumbnail.
        for (const [k, t] of this.thumbs) {
          const e = this.blockEl(k);
          if (!e || !e.classList.contains("sw-has-thumb")) continue;
          const cv = thumbCanvas(this.doc, t);
          if (!cv) continue;
          cv.className = "sw-thumb-canvas";
          const holder = e.querySelector(".sw-thumb");
          if (holder) holder.replaceChildren(cv);
          else e.prepend(cv);
        }
      }
    }
    measure("shardwidget:thumbs", "shardwidget:thumbs-start");
  }

  private releaseAtlas(): void {
    if (!this.atlasUrl) return;
    try {
      URL.revokeObjectURL(this.atlasUrl);
    } catch {
      /* ignore */
    }
    this.atlasUrl = null;
    this.grid.style.removeProperty("--sw-atlas");
  }

  private axesMarkup(layout: Layout, geom: GridGeometry): string {
    const { sel } = geom;
    const out: string[] = [];
    if (sel.colDim >= 0) {
      out.push(
        `<div class="sw-axis-title sw-axis-title-col" style="left:${geom.gutterLeft}px;width:${geom.width}px">` +
          `${esc(dimTitle(layout, sel.colDim))} →</div>`,
      );
      for (const tk of axisTicks(sel.colRanges, geom.xs)) {
        const cls = tk.full ? "sw-tick sw-tick-col" : "sw-tick sw-tick-col sw-tick-start";
        out.push(
          `<div class="${cls}" style="left:${geom.gutterLeft + tk.at}px;width:${tk.full ? tk.span : tk.span + 2}px"` +
            ` title="dim ${sel.colDim} ${formatHalfOpen(sel.colRanges[tk.index])}">${tk.text}</div>`,
        );
      }
    }
    if (sel.rowDim >= 0) {
      out.push(
        `<div class="sw-axis-title sw-axis-title-row" style="top:${geom.gutterTop}px;height:${geom.height}px">` +
          `${esc(dimTitle(layout, sel.rowDim))} →</div>`,
      );
      for (const tk of axisTicksVertical(sel.rowRanges, geom.ys)) {
        const cls = tk.full ? "sw-tick sw-tick-row" : "sw-tick sw-tick-row sw-tick-start";
        out.push(
          `<div class="${cls}" style="top:${geom.gutterTop + tk.at}px;height:${tk.full ? tk.span : 14}px;` +
            `width:${geom.gutterLeft - 22}px;left:16px"` +
            ` title="dim ${sel.rowDim} ${formatHalfOpen(sel.rowRanges[tk.index])}">${tk.text}</div>`,
        );
      }
    }
    return out.join("");
  }

  private textOn(color: string): string {
    let t = this.textColors.get(color);
    if (t === undefined) {
      t = textColorOn(color);
      this.textColors.set(color, t);
    }
    return t;
  }

  /** The blocks as one HTML string: one parse, laid out by the grid's CSS tracks (no per-block
   *  positions), each block styled by its colour only. A single holder's block shows its
   *  thumbnail as its own background (atlas image in CSS var --sw-atlas, pixels supplied by
   *  finishData()) inside a border of its colour; a replicated block's stripes frame a
   *  thumbnail box. */
  private blocksMarkup(layout: Layout, geom: GridGeometry): string {
    const { sel, xs, ys } = geom;
    const nC = sel.colRanges.length;
    const html: string[] = [];
    const keys: number[] = [];
    this.index.clear();
    const pack = this.thumbs.size ? packThumbs(this.thumbs) : null;
    const gap = gridGap(geom);
    let child = 0;
    for (let r = 0; r < sel.rowRanges.length; r++) {
      const h = ys[r + 1] - ys[r];
      for (let c = 0; c < nC; c++) {
        const k = sel.cells[r * nC + c];
        if (k < 0) {
          html.push('<i class="sw-hole"></i>');
          child++;
          continue;
        }
        const w = xs[c + 1] - xs[c];
        const b = layout.blocks[k];
        const n = b.d.length;
        const replicated = n > 1;
        const color0 = n ? this.colorOf(b.d[0]) : "#cccccc";
        const thumb = this.thumbs.get(k);
        const at = thumb && pack?.at.get(k);
        // The frame around a thumbnail shows the device colour(s); wider for stripes.
        const inset = at ? thumbInset(w, h, n) : 0;
        const tw = Math.max(1, w - gap - 2 * inset);
        const th = Math.max(1, h - gap - 2 * inset);
        const atlasPlace = () => {
          const sx = tw / thumb!.cols;
          const sy = th / thumb!.rows;
          return (
            `background-size:${pack!.width * sx}px ${pack!.height * sy}px;` +
            `background-position:${-at![0] * sx}px ${-at![1] * sy}px`
          );
        };
        let cls = "sw-block";
        let style: string;
        let inner = "";
        if (at) cls += " sw-has-thumb";
        if (replicated) {
          cls += " sw-replicated";
          style = `background:${blockBackground(b.d.slice(0, 8).map((id) => this.colorOf(id)))}`;
          if (at) inner = `<div class="sw-thumb" style="inset:${inset}px;${atlasPlace()}"></div>`;
        } else if (at) {
          cls += " sw-t";
          style = `border-width:${inset}px;border-color:${color0};background-color:${color0};${atlasPlace()}`;
        } else {
          style = `background:${color0}`;
        }
        html.push(`<div class="${cls}" data-block="${k}" style="${style}">`, inner);
        const badge = n > 8;
        const cands = replicated ? deviceLabelCandidates(b.d, badge) : [String(b.d[0] ?? "–")];
        let labelText = fitLabel(cands, w - 8, LABEL_FONT, h - 2);
        let small = false;
        if (!labelText) {
          labelText = fitLabel(cands, w - 4, SMALL_FONT, h);
          small = labelText !== "";
        }
        if (labelText) {
          const ink =
            replicated || at
              ? " sw-chip"
              : this.textOn(color0) === "#ffffff"
                ? " sw-ink-light"
                : " sw-ink-dark";
          html.push(`<span class="sw-label${ink}${small ? " sw-small" : ""}">${esc(labelText)}</span>`);
        }
        if (badge) {
          const bt = `×${n}`;
          const room = labelText ? h - 2 >= 2 * (LABEL_FONT + 6) : true;
          if (textWidth(bt, SMALL_FONT) + 6 <= w && h >= SMALL_FONT + 4 && room)
            html.push(`<span class="sw-badge">${bt}</span>`);
        }
        html.push("</div>");
        this.index.set(k, child++);
        keys.push(k);
      }
    }
    this.keys = keys;
    return html.join("");
  }

  private blockEl(k: number): HTMLElement | null {
    const i = this.index.get(k);
    if (i === undefined) return null;
    const e = this.grid.children[i] as HTMLElement | undefined;
    return e ?? null;
  }

  /** The block under grid-local point (x, y), or -1. */
  hitTest(x: number, y: number): number {
    const g = this.geom;
    if (!g) return -1;
    const c = locate(g.xs, x);
    const r = locate(g.ys, y);
    if (c < 0 || r < 0) return -1;
    return g.sel.cells[r * g.sel.colRanges.length + c];
  }

  /** A "#rrggbb" colour as one RGBA pixel of a Uint32Array over ImageData; null for other forms. */
  private pixel(color: string): number | null {
    let v = this.pixels.get(color);
    if (v === undefined) {
      v = null;
      if (/^#[0-9a-f]{6}$/i.test(color)) {
        const n = parseInt(color.slice(1), 16);
        const r = (n >> 16) & 255;
        const g = (n >> 8) & 255;
        const b = n & 255;
        v = LITTLE_ENDIAN ? ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((n << 8) | 255) >>> 0;
      }
      this.pixels.set(color, v);
    }
    return v;
  }

  /** The blocks drawn as pixels (one putImageData): colours, stripes, with `withThumbs` the
   *  thumbnails inside a frame of the block's colour, and labels in a bitmap font. Highlight
   *  changes only compose this (faded where dimmed) and stroke outlines. */
  private paintBase(
    target: HTMLCanvasElement,
    g: GridGeometry,
    layout: Layout,
    withThumbs: boolean,
  ): boolean {
    const ctx = context2d(target);
    if (!ctx) return false;
    const pw = target.width;
    const ph = target.height;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.globalAlpha = 1;
    ctx.imageSmoothingEnabled = false;
    const dpr = pw / Math.max(1, g.width);
    const { sel, xs, ys } = g;
    const nC = sel.colRanges.length;
    const nR = sel.rowRanges.length;
    let img: ImageData | null = null;
    try {
      img = ctx.createImageData(pw, ph);
    } catch {
      img = null;
    }
    if (!img) return false;
    const px = new Uint32Array(img.data.buffer);
    const rest: number[] = []; // blocks drawn with fillRect (colours that are not #rrggbb)
    // Pixel columns and rows of each block: [x0, x1) × [y0, y1), a 1 px gap after blocks >= 6 px.
    const bx0 = new Int32Array(nC);
    const bx1 = new Int32Array(nC);
    for (let c = 0; c < nC; c++) {
      const w = xs[c + 1] - xs[c];
      bx0[c] = Math.min(pw, Math.round(xs[c] * dpr));
      bx1[c] = Math.max(bx0[c] + 1, Math.min(pw, Math.round((xs[c + 1] - (w >= 6 ? 1 : 0)) * dpr)));
    }
    const by0 = new Int32Array(nR);
    const by1 = new Int32Array(nR);
    for (let r = 0; r < nR; r++) {
      const h = ys[r + 1] - ys[r];
      by0[r] = Math.min(ph, Math.round(ys[r] * dpr));
      by1[r] = Math.max(by0[r] + 1, Math.min(ph, Math.round((ys[r + 1] - (h >= 6 ? 1 : 0)) * dpr)));
    }
    // One pixel row per block row, copied down the block's height.
    const line = new Uint32Array(pw);
    for (let r = 0; r < nR; r++) {
      line.fill(0);
      const striped: number[] = [];
      for (let c = 0; c < nC; c++) {
        const k = sel.cells[r * nC + c];
        if (k < 0) continue;
        const d = layout.blocks[k].d;
        if (d.length > 1) {
          striped.push(c);
          continue;
        }
        const v = this.pixel(d.length ? this.colorOf(d[0]) : "#cccccc");
        if (v === null) rest.push(k);
        else line.fill(v, bx0[c], bx1[c]);
      }
      for (let y = by0[r]; y < by1[r]; y++) px.set(line, y * pw);
      for (const c of striped) {
        // Diagonal stripes of the holders' colours (as the DOM blocks' gradient).
        const k = sel.cells[r * nC + c];
        const vs = layout.blocks[k].d.slice(0, 8).map((id) => this.pixel(this.colorOf(id)));
        if (vs.some((v) => v === null)) {
          rest.push(k);
          continue;
        }
        const n = vs.length;
        const sw = STRIPE_PX * dpr;
        const x0 = bx0[c];
        const y0 = by0[r];
        for (let y = y0; y < by1[r]; y++) {
          const row = y * pw;
          for (let x = x0; x < bx1[c]; x++) px[row + x] = vs[Math.floor((x - x0 + (y - y0)) / sw) % n]!;
        }
      }
    }
    if (withThumbs) this.writeThumbs(px, pw, ph, bx0, bx1, by0, by1, dpr);
    this.writeLabels(px, pw, ph, g, layout, bx0, bx1, by0, by1, dpr);
    ctx.putImageData(img, 0, 0);
    if (rest.length) {
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      for (const k of rest) {
        const [r, c] = sel.pos.get(k)!;
        const d = layout.blocks[k].d;
        ctx.fillStyle = d.length ? this.colorOf(d[0]) : "#cccccc";
        ctx.fillRect(bx0[c] / dpr, by0[r] / dpr, (bx1[c] - bx0[c]) / dpr, (by1[r] - by0[r]) / dpr);
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
    }
    return true;
  }

  /** Each thumbnail scaled (nearest value) into its block, inside a frame of the block's colour. */
  private writeThumbs(
    px: Uint32Array,
    pw: number,
    ph: number,
    bx0: Int32Array,
    bx1: Int32Array,
    by0: Int32Array,
    by1: Int32Array,
    dpr: number,
  ): void {
    const g = this.geom;
    if (!g || this.thumbs.size === 0) return;
    if (!this.ramp) {
      const lut = rampLUT();
      this.ramp = new Uint32Array(256);
      for (let v = 0; v < 256; v++) {
        const hex = `#${[lut[v * 4], lut[v * 4 + 1], lut[v * 4 + 2]].map((x) => x.toString(16).padStart(2, "0")).join("")}`;
        this.ramp[v] = this.pixel(hex) ?? 0;
      }
    }
    const ramp = this.ramp;
    const frame = Math.max(1, Math.round(2 * dpr));
    for (const [k, t] of this.thumbs) {
      const p = g.sel.pos.get(k);
      if (!p) continue;
      const [r, c] = p;
      const x0 = bx0[c] + frame;
      const y0 = by0[r] + frame;
      const tw = bx1[c] - frame - x0;
      const th = by1[r] - frame - y0;
      if (tw <= 0 || th <= 0) continue;
      const cols = new Int32Array(tw);
      for (let x = 0; x < tw; x++) cols[x] = Math.min(t.cols - 1, Math.floor((x * t.cols) / tw));
      for (let y = 0; y < th && y0 + y < ph; y++) {
        const sr = Math.min(t.rows - 1, Math.floor((y * t.rows) / th)) * t.cols;
        const row = (y0 + y) * pw + x0;
        for (let x = 0; x < tw && x0 + x < pw; x++) px[row + x] = ramp[t.data[sr + cols[x]]];
      }
    }
  }

  /** Compact labels in the blocks, where they fit whole (never cut): the device id, a run like
   *  "0–3 ×4", or a ×N count, in one bitmap font for the whole grid (the one of PIXEL_FONTS that
   *  labels the most blocks; mixed sizes read as noise). Over stripes and thumbnails they sit on
   *  a light chip. */
  private writeLabels(
    px: Uint32Array,
    pw: number,
    ph: number,
    g: GridGeometry,
    layout: Layout,
    bx0: Int32Array,
    bx1: Int32Array,
    by0: Int32Array,
    by1: Int32Array,
    dpr: number,
  ): void {
    const { sel } = g;
    const nC = sel.colRanges.length;
    const nR = sel.rowRanges.length;
    const scale = Math.max(1, Math.round(dpr));
    // Room and text sizes in device pixels.
    const faces = PIXEL_FONTS.map((f) => ({
      width: (t: string) => pixelTextWidth(f, t) * scale,
      height: f.h * scale,
    }));
    const room = (r: number, c: number): [number, number] => [
      bx1[c] - bx0[c] - 2 * scale,
      by1[r] - by0[r],
    ];
    if (this.canvasFont < 0) {
      const counts = faces.map(() => 0);
      const smallest = faces[faces.length - 1].height + 2;
      for (let r = 0; r < nR; r++) {
        if (by1[r] - by0[r] < smallest) continue;
        for (let c = 0; c < nC; c++) {
          const k = sel.cells[r * nC + c];
          if (k < 0) continue;
          const [w, h] = room(r, c);
          const ids = layout.blocks[k].d;
          for (let i = 0; i < faces.length; i++) if (canvasLabel(ids, w, h, [faces[i]])) counts[i]++;
        }
      }
      let best = 0;
      for (let i = 1; i < counts.length; i++) if (counts[i] > counts[best]) best = i;
      this.canvasFont = counts[best] > 0 ? best : PIXEL_FONTS.length;
    }
    const font = PIXEL_FONTS[this.canvasFont];
    if (!font) return;
    const face = faces[this.canvasFont];
    const dark = this.pixel("#111111")!;
    const black = this.pixel("#000000")!;
    const white = this.pixel("#ffffff")!;
    for (let r = 0; r < nR; r++) {
      if (by1[r] - by0[r] < face.height + 2) continue;
      for (let c = 0; c < nC; c++) {
        const k = sel.cells[r * nC + c];
        if (k < 0) continue;
        const [w, h] = room(r, c);
        const b = layout.blocks[k];
        const fit = canvasLabel(b.d, w, h, [face]);
        if (!fit) continue;
        const tw = face.width(fit.text);
        const x = bx0[c] + Math.floor((bx1[c] - bx0[c] - tw) / 2);
        const y = by0[r] + Math.floor((by1[r] - by0[r] - face.height) / 2);
        let ink: number;
        if (this.thumbs.has(k) || b.d.length > 1) {
          lighten(px, pw, ph, x - scale, y - scale, tw + 2 * scale, face.height + 2 * scale, CHIP_ALPHA);
          ink = dark;
        } else {
          ink = this.textOn(this.colorOf(b.d[0])) === "#ffffff" ? white : black;
        }
        writeText(px, pw, ph, font, fit.text, x, y, scale, ink);
      }
    }
  }

  private drawCanvas(): void {
    const cv = this.canvasEl;
    const g = this.geom;
    const layout = this.layout;
    if (!cv || !g || !layout) return;
    const ctx = context2d(cv);
    if (!ctx) return;
    const plain =
      !this.hl.dim &&
      this.hl.related.size === 0 &&
      this.hl.found.size === 0 &&
      this.hl.pinned === null &&
      !(this.kbd && this.cursor !== null);
    if (!this.base) {
      // Nothing marked (a new layout's first draw): the blocks go straight onto the screen; the
      // offscreen copy that highlights compose from is made when first needed.
      if (plain && !this.screenIsBase) this.screenIsBase = this.paintBase(cv, g, layout, false);
      if (plain && this.screenIsBase) return;
      const b = this.doc.createElement("canvas");
      b.width = cv.width;
      b.height = cv.height;
      if (this.screenIsBase) {
        const bctx = context2d(b);
        if (!bctx) return;
        bctx.drawImage(cv, 0, 0);
        this.base = b;
      } else {
        this.base = this.paintBase(b, g, layout, !this.dataPending) ? b : null;
      }
    }
    const base = this.base;
    if (!base) return;
    this.screenIsBase = plain;
    const dpr = cv.width / Math.max(1, g.width);
    const { sel, xs, ys } = g;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, cv.width, cv.height);
    if (this.hl.dim) {
      ctx.globalAlpha = 0.3;
      ctx.drawImage(base, 0, 0);
      ctx.globalAlpha = 1;
      for (const k of this.hl.related) {
        const p = sel.pos.get(k);
        if (!p) continue;
        const [r, c] = p;
        const x0 = Math.floor(xs[c] * dpr);
        const y0 = Math.floor(ys[r] * dpr);
        const w = Math.ceil(xs[c + 1] * dpr) - x0;
        const h = Math.ceil(ys[r + 1] * dpr) - y0;
        if (w <= 0 || h <= 0) continue;
        ctx.clearRect(x0, y0, w, h);
        ctx.drawImage(base, x0, y0, w, h, x0, y0, w, h);
      }
    } else {
      ctx.drawImage(base, 0, 0);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.globalAlpha = 1;
    const outline = (k: number, color: string, lw: number) => {
      const p = sel.pos.get(k);
      if (!p) return;
      const [r, c] = p;
      ctx.strokeStyle = color;
      ctx.lineWidth = lw;
      ctx.strokeRect(xs[c] + lw / 2, ys[r] + lw / 2, xs[c + 1] - xs[c] - lw, ys[r + 1] - ys[r] - lw);
    };
    for (const k of this.hl.related) outline(k, "#111", 2);
    for (const k of this.hl.found) outline(k, "#e11", 3);
    if (this.hl.pinned !== null) outline(this.hl.pinned, "#111", 3);
    if (this.kbd && this.cursor !== null && sel.pos.has(this.cursor)) {
      // The keyboard cursor: the theme's accent, with a light inner line to stand out on any
      // block colour; drawn around the block so that small blocks stay visible.
      // Around small blocks the ring keeps a size that the eye finds (at least 14 px).
      const [r, c] = sel.pos.get(this.cursor)!;
      const cx = (xs[c] + xs[c + 1] - 1) / 2;
      const cy = (ys[r] + ys[r + 1] - 1) / 2;
      const hw = Math.max((xs[c + 1] - xs[c]) / 2 + 1, 7);
      const hh = Math.max((ys[r + 1] - ys[r]) / 2 + 1, 7);
      const x0 = Math.max(1.5, cx - hw);
      const y0 = Math.max(1.5, cy - hh);
      const x1 = Math.min(g.width - 1.5, cx + hw);
      const y1 = Math.min(g.height - 1.5, cy + hh);
      ctx.strokeStyle = this.accentColor();
      ctx.lineWidth = 3;
      ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
      ctx.strokeStyle = "#ffffff";
      ctx.lineWidth = 1;
      ctx.strokeRect(x0 + 2, y0 + 2, Math.max(0, x1 - x0 - 4), Math.max(0, y1 - y0 - 4));
    }
  }

  /** The theme's accent colour (JupyterLab's --jp-brand-color1 through --sw-accent). */
  private accentColor(): string {
    if (!this.accent) {
      let v = "";
      try {
        const view = this.doc.defaultView;
        v = view ? view.getComputedStyle(this.el).getPropertyValue("--sw-accent").trim() : "";
      } catch {
        v = "";
      }
      this.accent = v || "#1976d2";
    }
    return this.accent;
  }

  /** Highlight: `related` blocks (hovered / held by a hovered device), `found` (device search),
   *  `pinned`. `dim` fades the other blocks. */
  setHighlight(related: Set<number>, found: Set<number>, pinned: number | null, dim: boolean): void {
    this.hl = { related, found, pinned, dim };
    this.applyHighlight();
  }

  private applyHighlight(): void {
    if (this.canvasEl) {
      this.drawCanvas();
      return;
    }
    this.grid.classList.toggle("sw-dimming", this.hl.dim);
    // Only touch the blocks whose classes can change: those marked now or last time.
    const { related, found, pinned } = this.hl;
    const touch = new Set<number>(this.marked);
    for (const k of related) touch.add(k);
    for (const k of found) touch.add(k);
    if (pinned !== null) touch.add(pinned);
    const marked = new Set<number>();
    for (const k of touch) {
      const e = this.blockEl(k);
      if (!e) continue;
      const a = related.has(k);
      const f = found.has(k);
      const p = pinned === k;
      e.classList.toggle("sw-hl", a);
      e.classList.toggle("sw-found", f);
      e.classList.toggle("sw-pinned", p);
      if (a || f || p) marked.add(k);
    }
    this.marked = marked;
  }

  dispose(): void {
    this.dataPending = false;
    this.releaseAtlas();
  }

  /** Visible block elements (DOM mode). */
  blockElements(): Map<number, HTMLElement> {
    const m = new Map<number, HTMLElement>();
    if (this.canvasEl) return m;
    for (const k of this.keys) {
      const e = this.blockEl(k);
      if (e) m.set(k, e);
    }
    return m;
  }

  isCanvas(): boolean {
    return this.canvasEl !== null;
  }

  /** The block under the keyboard cursor (null when none). */
  cursorBlock(): number | null {
    return this.cursor;
  }

  private updateBar(layout: Layout, viewDims: number[], slice: number[]): void {
    const ndim = layout.shape.length;
    const others = sliderDims(ndim, viewDims);
    const key = JSON.stringify([layout.shape, viewDims, layout.blocks.length, layout.key]);
    if (ndim <= 2) {
      this.bar.replaceChildren();
      this.bar.hidden = true;
      this.barKey = key;
      return;
    }
    this.bar.hidden = false;
    const doc = this.doc;
    if (key !== this.barKey) {
      this.barKey = key;
      const parts: HTMLElement[] = [];
      const mkSel = (which: 0 | 1, labelText: string) => {
        const lab = doc.createElement("label");
        lab.className = "sw-field";
        const span = doc.createElement("span");
        span.textContent = labelText;
        const s = doc.createElement("select");
        s.dataset.key = which === 0 ? "view-rows" : "view-cols";
        for (let d = 0; d < ndim; d++) {
          const o = doc.createElement("option");
          o.value = String(d);
          o.textContent = `dim ${d} (${layout.shape[d]})`;
          s.append(o);
        }
        s.value = String(viewDims[which]);
        s.addEventListener("change", () => {
          const v = Number(s.value);
          const nd = [...viewDims];
          const other = 1 - which;
          if (nd[other] === v) nd[other] = nd[which];
          nd[which] = v;
          this.cb.setViewDims(nd);
        });
        lab.append(span, s);
        return lab;
      };
      const dimsBox = doc.createElement("div");
      dimsBox.className = "sw-viewdims";
      dimsBox.append(mkSel(0, "rows"), mkSel(1, "columns"));
      parts.push(dimsBox);
      for (const d of others) {
        const lab = doc.createElement("label");
        lab.className = "sw-slider";
        const span = doc.createElement("span");
        span.className = "sw-slider-name";
        span.textContent = `dim ${d}`;
        const inp = doc.createElement("input");
        inp.type = "range";
        inp.min = "0";
        inp.max = String(Math.max(0, layout.shape[d] - 1));
        inp.step = "1";
        inp.dataset.key = `slice-${d}`;
        inp.value = String(slice[d] ?? 0);
        inp.setAttribute("aria-label", `index along dim ${d}`);
        const out = doc.createElement("output");
        out.className = "sw-slider-value";
        inp.addEventListener("input", () => this.cb.setSlice(d, Number(inp.value)));
        lab.append(span, inp, out);
        parts.push(lab);
      }
      this.bar.replaceChildren(...parts);
    }
    // Update slider readouts (and values, when changed from outside).
    for (const d of others) {
      const inp = this.bar.querySelector<HTMLInputElement>(`input[data-key="slice-${d}"]`);
      const out = inp?.parentElement?.querySelector("output");
      if (!inp || !out) continue;
      const s = slice[d] ?? 0;
      if (inp.value !== String(s)) inp.value = String(s);
      const blk = layout.blocks.find((b) => b.i[d][0] <= s && s < b.i[d][1]);
      out.textContent = `${s} / ${layout.shape[d]}${blk ? `  ·  block ${formatHalfOpen(blk.i[d])}` : ""}`;
    }
  }
}
