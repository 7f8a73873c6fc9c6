// The array pane: the blocks of the two drawn dimensions at the current slice of the others.
//
// The pane keeps the scene (scene.ts) and hands the drawing to a layer by size: up to
// CANVAS_THRESHOLD visible blocks the DOM layer, above it the canvas layer. Both draw the geometry
// (blocks, colours, labels, ticks) inside the `shardwidget:render` measure; the thumbnails'
// pixels follow in finishData(), a microtask later and before the browser paints
// (`shardwidget:thumbs`). Mouse events are delegated to the grid element (set up once, whatever
// it draws); the keyboard is keyboard.ts, the dimension and slice controls view_bar.ts.
import type { Layout, Stats } from "../../wire";
import { locate, selectGrid } from "../blocks";
import { poolText, thumbReader } from "../stats";
import { formatNumber } from "../../shared/text";
import { blockTooltip } from "../labels";
import { mark, measure } from "../../shared/dom";
import { CanvasLayer, CANVAS_THUMB_MIN } from "./canvas_layer";
import { DomLayer } from "./dom_layer";
import { gridGap, gridGeometry, HOST_PAD, thumbInset, tracks, type GridGeometry } from "./geometry";
import { GridKeyboard } from "./keyboard";
import { emptyScene, type GridScene } from "./scene";
import { ViewBar } from "./view_bar";

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

export class ArrayPane {
  readonly el: HTMLElement;
  private bar: ViewBar;
  private host: HTMLElement;
  private wrap: HTMLElement;
  /** Axis titles and tick labels (one HTML string, replaced only when it changes). */
  private axes: HTMLElement;
  /** The blocks (DOM) or the canvas; one tab stop for the keyboard, kept across renders. */
  private grid: HTMLElement;
  /** Announces the block under the keyboard cursor. */
  private live: HTMLElement;
  private scene: GridScene;
  private dom: DomLayer;
  private canvas: CanvasLayer;
  private axesHtml = "";
  private gridHtml = "";
  private gridBox = "";
  /** The block last under the mouse on the canvas (-2: none yet). */
  private lastHit = -2;
  /** The heatmap's colour bar (hidden while no thumbnail is drawn). */
  private legend: HTMLElement;

  constructor(
    doc: Document,
    private readonly cb: GridCallbacks,
  ) {
    this.scene = emptyScene((id) => cb.colorOf(id));
    this.el = doc.createElement("section");
    this.el.className = "sw-array";
    this.el.setAttribute("aria-label", "array blocks");
    this.bar = new ViewBar(doc, cb);
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
    this.legend = doc.createElement("div");
    this.legend.className = "sw-heat-legend";
    this.legend.hidden = true;
    this.el.append(this.bar.el, this.host, this.legend, this.live);
    this.dom = new DomLayer(doc, this.scene, this.grid);
    this.canvas = new CanvasLayer(doc, this.scene, this.el);
    this.listen();
    new GridKeyboard(this.grid, this.live, this.scene, {
      hoverBlock: (k) => cb.hoverBlock(k),
      clickBlock: (k) => cb.clickBlock(k),
      showCursor: () => this.showCursor(),
      focused: () => this.canvas.forgetAccent(),
    });
  }

  // ---- mouse (delegated: set up once, whatever the grid draws) --------------------------------

  private blockOf(target: EventTarget | null, exact: boolean): number | null {
    return this.canvas.canvas ? null : this.dom.blockOf(target, exact);
  }

  private canvasPoint(ev: MouseEvent): number {
    const cv = this.canvas.canvas;
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
        if (!e.title && this.scene.layout) e.title = blockTooltip(this.scene.layout, k);
        this.cb.hoverBlock(k);
      },
      true,
    );
    g.addEventListener(
      "mouseleave",
      (ev) => {
        const cv = this.canvas.canvas;
        if (this.blockOf(ev.target, true) !== null) this.cb.hoverBlock(null);
        else if (cv && ev.target === cv) {
          this.lastHit = -2;
          this.cb.hoverBlock(null);
        }
      },
      true,
    );
    g.addEventListener("mousemove", (ev) => {
      const cv = this.canvas.canvas;
      if (!cv || ev.target !== cv) return;
      const k = this.canvasPoint(ev);
      if (k !== this.lastHit) {
        this.lastHit = k;
        cv.title = k >= 0 && this.scene.layout ? blockTooltip(this.scene.layout, k) : "";
        this.cb.hoverBlock(k >= 0 ? k : null);
      }
    });
    g.addEventListener("click", (ev) => {
      const k = this.canvas.canvas ? this.canvasPoint(ev) : (this.blockOf(ev.target, false) ?? -1);
      if (k < 0) return;
      this.scene.cursor = k;
      this.cb.clickBlock(k);
    });
  }

  /** Draw the keyboard cursor where it is now (or nowhere without keyboard focus). */
  private showCursor(): void {
    this.grid.classList.toggle("sw-kbd", this.scene.kbd);
    if (this.canvas.canvas) this.canvas.draw();
    else this.dom.showCursor();
  }

  // ---- rendering --------------------------------------------------------------------------

  /** Redraw the grid for new input. The geometry (blocks, colours, labels, ticks) is drawn now;
   *  the thumbnails' pixels follow in finishData() (called at the end of the current task). */
  /** Whether the last update draws thumbnails (and the heatmap's colour bar). */
  get heatmapShown(): boolean {
    return this.scene.thumbs.size > 0;
  }

  update(inp: GridInput): void {
    mark("shardwidget:grid-start");
    const { layout, stats, viewDims, slice } = inp;
    const scene = this.scene;
    scene.colorOf = inp.colorOf ?? ((id) => this.cb.colorOf(id));
    if (this.host.parentNode !== this.el)
      this.el.replaceChildren(this.bar.el, this.host, this.legend, this.live);
    scene.layout = layout;
    this.bar.update(layout, viewDims, slice);
    const sel = selectGrid(layout, viewDims, slice);
    // The host's padding leaves room for the focus ring.
    const geom = gridGeometry(layout, sel, inp.width - 2 * HOST_PAD, inp.maxHeight);
    scene.geom = geom;
    this.lastHit = -2;

    // Thumbnails of the blocks big enough to show one (their pixels are drawn later).
    scene.thumbs = new Map();
    this.dom.setThumbsSource(stats, viewDims);
    const thumbOf = stats ? thumbReader(stats, viewDims) : null;
    if (thumbOf) {
      const { xs, ys } = geom;
      const visible = sel.visible;
      // An indexed loop: a first render runs it cold, where for-of allocates at each step.
      for (let i = 0; i < visible.length; i++) {
        const k = visible[i];
        const r = sel.pos.row(k);
        const c = sel.pos.col(k);
        const w = xs[c + 1] - xs[c];
        const h = ys[r + 1] - ys[r];
        const fits = geom.canvas
          ? w >= CANVAS_THUMB_MIN && h >= CANVAS_THUMB_MIN
          : thumbInset(w, h, layout.blocks[k].d.length) > 0;
        if (!fits) continue;
        const t = thumbOf(k);
        if (t) scene.thumbs.set(k, t);
      }
    }

    this.updateLegend(layout, stats, viewDims);
    const axesHtml = this.dom.axesMarkup(layout, geom);
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
    const html = geom.canvas ? canvasMarkup(geom) : this.dom.markup(layout, geom);
    if (html !== this.gridHtml) {
      this.dom.releaseAtlas();
      this.grid.innerHTML = html;
      this.gridHtml = html;
      this.dom.replaced(false);
    }
    if (geom.canvas) this.dom.replaced(true);
    this.canvas.reset(geom.canvas ? (this.grid.firstElementChild as HTMLCanvasElement) : null);
    if (scene.cursor !== null && !sel.pos.has(scene.cursor)) scene.cursor = null;
    scene.dataPending = true;
    queueMicrotask(() => this.finishData());
    this.applyHighlight();
    this.showCursor();
    measure("shardwidget:grid", "shardwidget:grid-start");
  }

  /** The heatmap's colour bar under the grid (shown while thumbnails are): the value range,
   *  and that each pixel is a pooled mean. */
  private updateLegend(layout: Layout, stats: Stats | null, viewDims: number[]): void {
    const first = this.scene.thumbs.entries().next();
    if (first.done || !stats) {
      this.legend.hidden = true;
      this.legend.replaceChildren();
      return;
    }
    const [k, t] = first.value;
    const pool = poolText(layout, k, t, viewDims);
    const doc = this.legend.ownerDocument;
    const span = (cls: string, text: string) => {
      const e = doc.createElement("span");
      e.className = cls;
      e.textContent = text;
      return e;
    };
    const pooled = pool !== null;
    this.legend.replaceChildren(
      span("sw-heat-title", "heatmap"),
      span("sw-num", formatNumber(stats.vmin)),
      span("sw-rampbar", ""),
      span("sw-num", formatNumber(stats.vmax)),
      span("sw-heat-pool", pooled ? `· each pixel ${pool}` : "· every value"),
    );
    this.legend.title = pooled
      ? "Thumbnails are pooled means: a spike or a fine pattern inside a pixel's patch is averaged " +
        "away. Pin a block to compare its pixels with its min and max."
      : "Each thumbnail pixel is one element of the block.";
    this.legend.hidden = false;
  }

  /** Draw what the geometry does not need: the thumbnails' pixels. Runs once after each
   *  update(), before the browser paints; measured as `shardwidget:thumbs`. */
  finishData(): void {
    const scene = this.scene;
    if (!scene.dataPending) return;
    scene.dataPending = false;
    if (scene.thumbs.size === 0) return;
    mark("shardwidget:thumbs-start");
    if (this.canvas.canvas) this.canvas.finishData();
    else if (!this.dom.finishData(this.gridHtml)) return;
    measure("shardwidget:thumbs", "shardwidget:thumbs-start");
  }

  /** Highlight: `related` blocks (hovered / held by a hovered device), `found` (device search),
   *  `pinned`. `dim` fades the other blocks. */
  setHighlight(related: Set<number>, found: Set<number>, pinned: number | null, dim: boolean): void {
    this.scene.hl = { related, found, pinned, dim };
    this.applyHighlight();
  }

  private applyHighlight(): void {
    if (this.canvas.canvas) this.canvas.draw();
    else this.dom.highlight();
  }

  dispose(): void {
    this.scene.dataPending = false;
    this.dom.releaseAtlas();
  }

  /** Visible block elements (DOM mode). */
  blockElements(): Map<number, HTMLElement> {
    return this.canvas.canvas ? new Map() : this.dom.blockElements();
  }

  /** The viewport top (px) of block k as drawn, or null when it is not on show. */
  blockTop(k: number): number | null {
    const g = this.scene.geom;
    const p = g?.sel.pos.get(k);
    if (!g || !p) return null;
    return this.grid.getBoundingClientRect().top + g.ys[p[0]];
  }

  isCanvas(): boolean {
    return this.canvas.canvas !== null;
  }

  /** The block under the keyboard cursor (null when none). */
  cursorBlock(): number | null {
    return this.scene.cursor;
  }

  /** The block under grid-local point (x, y), or -1. */
  hitTest(x: number, y: number): number {
    const g = this.scene.geom;
    if (!g) return -1;
    const c = locate(g.xs, x);
    const r = locate(g.ys, y);
    if (c < 0 || r < 0) return -1;
    return g.sel.cells[r * g.sel.colRanges.length + c];
  }
}

/** The canvas of a grid drawn on one (CanvasLayer), sized for the device pixel ratio. */
function canvasMarkup(geom: GridGeometry): string {
  const dpr = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
  return (
    `<canvas class="sw-canvas" aria-hidden="true" width="${Math.round(geom.width * dpr)}"` +
    ` height="${Math.round(geom.height * dpr)}"` +
    ` style="width:${geom.width}px;height:${geom.height}px"></canvas>`
  );
}
