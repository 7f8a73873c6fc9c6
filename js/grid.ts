// Array pane: the blocks of the two drawn dims at the current slice of the others.
import type { Layout, Stats } from "./types";
import { allocate, locate, selectGrid, sliderDims, type GridSelection } from "./blocks";
import { blockBackground, textColorOn } from "./colors";
import { deviceLabelCandidates, deviceListText, fitLabel, rangeLabelCandidates } from "./labels";
import {
  blockThumb,
  thumbAtlas,
  thumbAtlasCanvas,
  thumbCanvas,
  type Thumb,
  type ThumbAtlas,
} from "./stats";
import { formatHalfOpen, textWidth } from "./text";
import { entryAxes } from "./spec";

/** Above this many visible blocks the grid is drawn on one <canvas>. */
export const CANVAS_THRESHOLD = 256;
export const MAX_GRID_WIDTH = 720;
const MAX_GRID_HEIGHT = 460;
const LABEL_FONT = 12;
const SMALL_FONT = 10;
const TICK_FONT = 11;

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
export function gridGeometry(layout: Layout, sel: GridSelection, avail: number): GridGeometry {
  const canvas = sel.visible.length > CANVAS_THRESHOLD;
  const rowLabelW = Math.max(
    0,
    ...sel.rowRanges.map((r) => textWidth(`${r[0]}:${r[1]}`, TICK_FONT)),
  );
  const hasRows = sel.rowDim >= 0;
  const gutterLeft = hasRows ? 18 + rowLabelW + 6 : 0;
  const gutterTop = sel.colDim >= 0 ? 34 : 0;
  let gw = Math.max(80, Math.min(avail, MAX_GRID_WIDTH + gutterLeft) - gutterLeft);
  let gh: number;
  const nR = sel.rowRanges.length;
  const nC = sel.colRanges.length;
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
    if (gh > MAX_GRID_HEIGHT) {
      gh = MAX_GRID_HEIGHT;
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
  void nC;
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
  const out: Tick[] = [];
  const end = offsets[offsets.length - 1];
  let free = 0;
  ranges.forEach((r, i) => {
    const t = rangeLabelCandidates(r)[1];
    const w = need(t);
    if (offsets[i] >= free && offsets[i] + w <= end + slack) {
      out.push({ text: t, full: false, at: offsets[i], span: w, index: i });
      free = offsets[i] + w + gap;
    }
  });
  return out;
}

/** Column ticks (labels laid out horizontally). */
export function axisTicks(ranges: [number, number][], offsets: number[], fontPx = TICK_FONT): Tick[] {
  return ticks(ranges, offsets, (t) => textWidth(t, fontPx), 8, 4);
}

/** Row ticks: one line each, so a label needs a line height along the axis. */
export function axisTicksVertical(ranges: [number, number][], offsets: number[]): Tick[] {
  const lineH = 14;
  return ticks(ranges, offsets, () => lineH, 4, 0, 2);
}

function dimTitle(layout: Layout, d: number): string {
  const axes = entryAxes(layout.spec[d]);
  const by = axes.length ? ` · sharded over ${axes.join("+")}` : " · not sharded";
  return `dim ${d} (${layout.shape[d]})${by}`;
}

const replicatedFrame = (n: number): number => (n > 1 ? 7 : 4);

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function blockTooltip(layout: Layout, k: number): string {
  const b = layout.blocks[k];
  const ranges = b.i.map((r, d) => `dim ${d} ${formatHalfOpen(r)}`).join(", ");
  return `${ranges}\n${deviceListText(b.d)}`;
}

export class ArrayPane {
  readonly el: HTMLElement;
  private bar: HTMLElement;
  private host: HTMLElement;
  private blockEls = new Map<number, HTMLElement>();
  private geom: GridGeometry | null = null;
  private layout: Layout | null = null;
  private canvasEl: HTMLCanvasElement | null = null;
  private base: HTMLCanvasElement | null = null;
  private thumbs = new Map<number, Thumb>();
  private atlas: ThumbAtlas | null = null;
  private hl: { related: Set<number>; found: Set<number>; pinned: number | null; dim: boolean } = {
    related: new Set(),
    found: new Set(),
    pinned: null,
    dim: false,
  };
  private barKey = "";

  constructor(
    private readonly doc: Document,
    private readonly cb: GridCallbacks,
  ) {
    this.el = doc.createElement("section");
    this.el.className = "sw-array";
    this.el.setAttribute("aria-label", "array blocks");
    this.bar = doc.createElement("div");
    this.bar.className = "sw-viewbar";
    this.host = doc.createElement("div");
    this.host.className = "sw-grid-host";
    this.el.append(this.bar, this.host);
  }

  /** Rebuild the grid (and the view bar when the dims change). */
  update(inp: GridInput): void {
    const { layout, stats, viewDims, slice } = inp;
    this.layout = layout;
    this.updateBar(layout, viewDims, slice);
    const sel = selectGrid(layout, viewDims, slice);
    const geom = gridGeometry(layout, sel, inp.width);
    this.geom = geom;
    this.thumbs.clear();
    this.revokeThumbs();
    if (stats && stats.status === "ready") {
      for (const k of sel.visible) {
        const t = blockThumb(stats, k, viewDims);
        if (t) this.thumbs.set(k, t);
      }
    }
    if (!geom.canvas) this.atlas = thumbAtlas(this.thumbs);
    this.blockEls.clear();
    this.canvasEl = null;
    this.base = null;
    const doc = this.doc;
    const wrap = doc.createElement("div");
    wrap.className = "sw-grid-wrap";
    wrap.style.width = `${geom.gutterLeft + geom.width}px`;
    wrap.style.height = `${geom.gutterTop + geom.height}px`;

    // Axis titles and tick labels.
    if (sel.colDim >= 0) {
      const t = doc.createElement("div");
      t.className = "sw-axis-title sw-axis-title-col";
      t.style.left = `${geom.gutterLeft}px`;
      t.style.width = `${geom.width}px`;
      t.textContent = dimTitle(layout, sel.colDim) + " →";
      wrap.append(t);
      for (const tk of axisTicks(sel.colRanges, geom.xs)) {
        const l = doc.createElement("div");
        l.className = tk.full ? "sw-tick sw-tick-col" : "sw-tick sw-tick-col sw-tick-start";
        l.style.left = `${geom.gutterLeft + tk.at}px`;
        l.style.width = `${tk.full ? tk.span : tk.span + 2}px`;
        l.textContent = tk.text;
        l.title = `dim ${sel.colDim} ${formatHalfOpen(sel.colRanges[tk.index])}`;
        wrap.append(l);
      }
    }
    if (sel.rowDim >= 0) {
      const t = doc.createElement("div");
      t.className = "sw-axis-title sw-axis-title-row";
      t.style.top = `${geom.gutterTop}px`;
      t.style.height = `${geom.height}px`;
      t.textContent = dimTitle(layout, sel.rowDim) + " →";
      wrap.append(t);
      const rowTicks = axisTicksVertical(sel.rowRanges, geom.ys);
      for (const tk of rowTicks) {
        const l = doc.createElement("div");
        l.className = tk.full ? "sw-tick sw-tick-row" : "sw-tick sw-tick-row sw-tick-start";
        l.style.top = `${geom.gutterTop + tk.at}px`;
        l.style.height = `${tk.full ? tk.span : 14}px`;
        l.style.width = `${geom.gutterLeft - 22}px`;
        l.style.left = "16px";
        l.textContent = tk.text;
        l.title = `dim ${sel.rowDim} ${formatHalfOpen(sel.rowRanges[tk.index])}`;
        wrap.append(l);
      }
    }

    const grid = doc.createElement("div");
    grid.className = "sw-grid";
    grid.style.left = `${geom.gutterLeft}px`;
    grid.style.top = `${geom.gutterTop}px`;
    grid.style.width = `${geom.width}px`;
    grid.style.height = `${geom.height}px`;
    wrap.append(grid);
    if (geom.canvas) this.buildCanvas(grid, geom);
    else this.buildDom(grid, geom, layout);
    this.host.replaceChildren(wrap);
    this.applyHighlight();
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

  /** The blocks as one HTML string (one parse, no per-property style writes) with the events
   *  handled on the grid: capture listeners see each block's mouseenter / mouseleave / focus /
   *  blur, which do not bubble. */
  private buildDom(grid: HTMLElement, geom: GridGeometry, layout: Layout): void {
    const doc = this.doc;
    const { sel, xs, ys } = geom;
    const nC = sel.colRanges.length;
    const focusable = sel.visible.length <= 64;
    const html: string[] = [];
    const keys: number[] = [];
    const fallback = new Map<number, { thumb: Thumb; style: string }>();
    for (const k of sel.visible) {
      const [r, c] = sel.pos.get(k)!;
      if (sel.cells[r * nC + c] !== k) continue;
      const b = layout.blocks[k];
      const x = xs[c];
      const y = ys[r];
      const w = xs[c + 1] - x;
      const h = ys[r + 1] - y;
      const gap = w >= 6 && h >= 6 ? 1 : 0;
      const colors = b.d.slice(0, 8).map((id) => this.cb.colorOf(id));
      const replicated = b.d.length > 1;
      const title = blockTooltip(layout, k);
      let open =
        `<div class="sw-block${replicated ? " sw-replicated" : ""}" data-block="${k}"` +
        ` style="left:${x}px;top:${y}px;width:${Math.max(1, w - gap)}px;` +
        `height:${Math.max(1, h - gap)}px;background:${blockBackground(colors)}"` +
        ` title="${esc(title)}"`;
      if (focusable)
        open += ` tabindex="0" role="button" aria-label="${esc(title.replace("\n", "; "))}"`;
      html.push(open, ">");
      const thumb = this.thumbs.get(k);
      // The frame around a thumbnail shows the device colour(s); wider for stripes.
      const inset =
        w >= 18 && h >= 18
          ? Math.max(replicatedFrame(b.d.length), Math.min(14, Math.round(Math.min(w, h) * 0.12)))
          : 0;
      const hasThumb = !!thumb && inset > 0 && w - 2 * inset >= 6 && h - 2 * inset >= 6;
      if (thumb && hasThumb) {
        const tw = Math.max(1, w - gap - 2 * inset);
        const th = Math.max(1, h - gap - 2 * inset);
        const box = `left:${inset}px;top:${inset}px;width:${tw}px;height:${th}px`;
        const p = this.atlas?.at.get(k);
        if (this.atlas && p) {
          const sx = tw / thumb.cols;
          const sy = th / thumb.rows;
          html.push(
            `<div class="sw-thumb" style="${box};background-image:url(&quot;${this.atlas.url}&quot;);` +
              `background-size:${this.atlas.width * sx}px ${this.atlas.height * sy}px;` +
              `background-position:${-p[0] * sx}px ${-p[1] * sy}px"></div>`,
          );
        } else {
          fallback.set(k, { thumb, style: box });
        }
      }
      const badge = b.d.length > 8;
      let labelText = fitLabel(deviceLabelCandidates(b.d, badge), w - 8, LABEL_FONT, h - 2);
      let small = false;
      if (!labelText) {
        labelText = fitLabel(deviceLabelCandidates(b.d, badge), w - 4, SMALL_FONT, h);
        small = labelText !== "";
      }
      let badgeHtml = "";
      if (badge) {
        const bt = `×${b.d.length}`;
        const room = labelText ? h - 2 >= 2 * (LABEL_FONT + 6) : true;
        if (textWidth(bt, SMALL_FONT) + 6 <= w && h >= SMALL_FONT + 4 && room)
          badgeHtml = `<span class="sw-badge">${bt}</span>`;
      }
      if (labelText) {
        const chip = replicated || hasThumb;
        const cls = `sw-label${chip ? " sw-chip" : ""}${small ? " sw-small" : ""}`;
        const color = chip ? "" : ` style="color:${textColorOn(colors[0])}"`;
        html.push(`<span class="${cls}"${color}>${esc(labelText)}</span>`);
      }
      html.push(badgeHtml, "</div>");
      keys.push(k);
    }
    grid.innerHTML = html.join("");
    const els = grid.children;
    for (let i = 0; i < keys.length; i++) {
      const e = els[i] as HTMLElement;
      const k = keys[i];
      this.blockEls.set(k, e);
      const fb = fallback.get(k);
      if (fb) {
        const cv = thumbCanvas(doc, fb.thumb);
        if (cv) {
          cv.setAttribute("style", fb.style);
          e.prepend(cv);
        }
      }
    }
    const blockOf = (ev: Event): number | null => {
      const t = ev.target as HTMLElement | null;
      if (!t || !t.classList || !t.classList.contains("sw-block")) return null;
      const k = Number(t.dataset.block);
      return this.blockEls.get(k) === t ? k : null;
    };
    const enter = (ev: Event) => {
      const k = blockOf(ev);
      if (k !== null) this.cb.hoverBlock(k);
    };
    const leave = (ev: Event) => {
      if (blockOf(ev) !== null) this.cb.hoverBlock(null);
    };
    grid.addEventListener("mouseenter", enter, true);
    grid.addEventListener("mouseleave", leave, true);
    grid.addEventListener("focus", enter, true);
    grid.addEventListener("blur", leave, true);
    const blockAbove = (ev: Event): number | null => {
      const t = ev.target as HTMLElement | null;
      const e = t && typeof t.closest === "function" ? t.closest<HTMLElement>(".sw-block") : null;
      if (!e) return null;
      const k = Number(e.dataset.block);
      return this.blockEls.get(k) === e ? k : null;
    };
    grid.addEventListener("click", (ev) => {
      const k = blockAbove(ev);
      if (k !== null) this.cb.clickBlock(k);
    });
    grid.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      const k = blockAbove(ev);
      if (k === null) return;
      ev.preventDefault();
      this.cb.clickBlock(k);
    });
  }

  private buildCanvas(grid: HTMLElement, geom: GridGeometry): void {
    const cv = this.doc.createElement("canvas");
    cv.className = "sw-canvas";
    const dpr = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
    cv.width = Math.round(geom.width * dpr);
    cv.height = Math.round(geom.height * dpr);
    cv.style.width = `${geom.width}px`;
    cv.style.height = `${geom.height}px`;
    cv.setAttribute("role", "img");
    cv.setAttribute(
      "aria-label",
      `${geom.sel.visible.length} blocks; hover for details, click to pin`,
    );
    let last = -2;
    cv.addEventListener("mousemove", (ev) => {
      const rect = cv.getBoundingClientRect();
      const k = this.hitTest(ev.clientX - rect.left, ev.clientY - rect.top);
      if (k !== last) {
        last = k;
        cv.title = k >= 0 && this.layout ? blockTooltip(this.layout, k) : "";
        this.cb.hoverBlock(k >= 0 ? k : null);
      }
    });
    cv.addEventListener("mouseleave", () => {
      last = -2;
      this.cb.hoverBlock(null);
    });
    cv.addEventListener("click", (ev) => {
      const rect = cv.getBoundingClientRect();
      const k = this.hitTest(ev.clientX - rect.left, ev.clientY - rect.top);
      if (k >= 0) this.cb.clickBlock(k);
    });
    grid.append(cv);
    this.canvasEl = cv;
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

  /** The blocks (colours, thumbnails, labels) drawn once per layout on an offscreen canvas;
   *  highlight changes only compose it (faded where dimmed) and stroke outlines. */
  private drawBase(g: GridGeometry, layout: Layout, pw: number, ph: number): HTMLCanvasElement | null {
    const base = this.doc.createElement("canvas");
    base.width = pw;
    base.height = ph;
    let ctx: CanvasRenderingContext2D | null = null;
    try {
      ctx = base.getContext("2d");
    } catch {
      ctx = null;
    }
    if (!ctx || typeof ctx.fillRect !== "function") return null;
    const dpr = pw / Math.max(1, g.width);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.imageSmoothingEnabled = false;
    const { sel, xs, ys } = g;
    const nC = sel.colRanges.length;
    const atlas = thumbAtlasCanvas(this.doc, this.thumbs);
    ctx.font = `${SMALL_FONT}px ui-monospace, SFMono-Regular, Menlo, monospace`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let r = 0; r < sel.rowRanges.length; r++) {
      for (let c = 0; c < nC; c++) {
        const k = sel.cells[r * nC + c];
        if (k < 0) continue;
        const b = layout.blocks[k];
        const x = xs[c];
        const y = ys[r];
        const w = xs[c + 1] - x;
        const h = ys[r + 1] - y;
        const gap = w >= 6 && h >= 6 ? 1 : 0;
        const bw = Math.max(1, w - gap);
        const bh = Math.max(1, h - gap);
        const cols = b.d.slice(0, 8).map((id) => this.cb.colorOf(id));
        if (cols.length <= 1) {
          ctx.fillStyle = cols[0] ?? "#ccc";
          ctx.fillRect(x, y, bw, bh);
        } else {
          ctx.save();
          ctx.beginPath();
          ctx.rect(x, y, bw, bh);
          ctx.clip();
          const sw = 4;
          for (let s = -bh, i = 0; s < bw + bh; s += sw, i++) {
            ctx.fillStyle = cols[i % cols.length];
            ctx.beginPath();
            ctx.moveTo(x + s, y);
            ctx.lineTo(x + s + sw, y);
            ctx.lineTo(x + s + sw + bh, y + bh);
            ctx.lineTo(x + s + bh, y + bh);
            ctx.closePath();
            ctx.fill();
          }
          ctx.restore();
        }
        const t = this.thumbs.get(k);
        const at = atlas?.at.get(k);
        if (t && at && bw >= 12 && bh >= 12) {
          ctx.drawImage(atlas!.canvas, at[0], at[1], t.cols, t.rows, x + 2, y + 2, bw - 4, bh - 4);
        }
        const label = fitLabel(deviceLabelCandidates(b.d), bw - 2, SMALL_FONT, bh);
        if (label) {
          ctx.fillStyle = t ? "#ffffff" : textColorOn(cols[0] ?? "#cccccc");
          ctx.fillText(label, x + bw / 2, y + bh / 2 + 0.5);
        }
      }
    }
    return base;
  }

  private drawCanvas(): void {
    const cv = this.canvasEl;
    const g = this.geom;
    const layout = this.layout;
    if (!cv || !g || !layout) return;
    let ctx: CanvasRenderingContext2D | null = null;
    try {
      ctx = cv.getContext("2d");
    } catch {
      ctx = null;
    }
    if (!ctx || typeof ctx.fillRect !== "function") return;
    if (!this.base) this.base = this.drawBase(g, layout, cv.width, cv.height);
    const base = this.base;
    if (!base) return;
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
      ctx!.strokeStyle = color;
      ctx!.lineWidth = lw;
      ctx!.strokeRect(xs[c] + lw / 2, ys[r] + lw / 2, xs[c + 1] - xs[c] - lw, ys[r + 1] - ys[r] - lw);
    };
    for (const k of this.hl.related) outline(k, "#111", 2);
    for (const k of this.hl.found) outline(k, "#e11", 3);
    if (this.hl.pinned !== null) outline(this.hl.pinned, "#111", 3);
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
    const grid = this.host.querySelector(".sw-grid");
    grid?.classList.toggle("sw-dimming", this.hl.dim);
    for (const [k, e] of this.blockEls) {
      e.classList.toggle("sw-hl", this.hl.related.has(k));
      e.classList.toggle("sw-found", this.hl.found.has(k));
      e.classList.toggle("sw-pinned", this.hl.pinned === k);
    }
  }

  dispose(): void {
    this.revokeThumbs();
  }

  private revokeThumbs(): void {
    if (this.atlas) {
      try {
        URL.revokeObjectURL(this.atlas.url);
      } catch {
        /* ignore */
      }
    }
    this.atlas = null;
  }

  /** Visible block elements (DOM mode). */
  blockElements(): Map<number, HTMLElement> {
    return this.blockEls;
  }

  isCanvas(): boolean {
    return this.canvasEl !== null;
  }
}

/** Row ticks: full labels when every band is tall enough, else start-only ticks without overlap. */
