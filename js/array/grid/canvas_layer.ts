// The canvas layer: above CANVAS_THRESHOLD visible blocks the grid is one <canvas> written as
// pixels (colours, stripes, thumbnails and labels in a bitmap font, pixelfont.ts), with the
// highlights composed over an offscreen copy of the blocks.
import type { Layout } from "../../wire";
import { rampLUT, textColorOn } from "../../shared/colors";
import { lighten, PIXEL_FONTS, pixelTextWidth, writeText } from "../../shared/pixelfont";
import { canvasLabel } from "../labels";
import type { GridGeometry } from "./geometry";
import type { GridScene } from "./scene";

function context2d(cv: HTMLCanvasElement): CanvasRenderingContext2D | null {
  let ctx: CanvasRenderingContext2D | null = null;
  try {
    ctx = cv.getContext("2d");
  } catch {
    ctx = null;
  }
  return ctx && typeof ctx.fillRect === "function" ? ctx : null;
}

/** How far a label's chip lightens what it covers on the canvas: enough for dark text, little
 *  enough that the thumbnail and the block's colour still show through. */
const CHIP_ALPHA = 0.62;

/** Width (CSS px) of one holder's stripe in a replicated block on the canvas. */
const STRIPE_PX = 4;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The smallest block (px) that shows a thumbnail on the canvas. */
export const CANVAS_THUMB_MIN = 12;

/** The pixels being written (pw × ph) and the device-pixel spans of the block columns
 *  [bx0, bx1) and rows [by0, by1). */
interface Raster {
  px: Uint32Array;
  pw: number;
  ph: number;
  bx0: Int32Array;
  bx1: Int32Array;
  by0: Int32Array;
  by1: Int32Array;
  dpr: number;
}

/** Device-pixel spans [start, end) of the cells between CSS-px `offsets`, within `limit`: a
 *  1 px gap after cells of 6 px or more. Every span is at least one pixel and inside [0, limit):
 *  cells thinner than a pixel (4096 rows in 900 px) share pixels rather than run off the end. */
export function pixelSpans(offsets: number[], dpr: number, limit: number): [Int32Array, Int32Array] {
  const n = offsets.length - 1;
  const a = new Int32Array(n);
  const b = new Int32Array(n);
  const last = Math.max(0, limit - 1);
  for (let i = 0; i < n; i++) {
    const size = offsets[i + 1] - offsets[i];
    a[i] = Math.min(last, Math.round(offsets[i] * dpr));
    const end = Math.round((offsets[i + 1] - (size >= 6 ? 1 : 0)) * dpr);
    b[i] = Math.min(Math.max(limit, 1), Math.max(a[i] + 1, end));
  }
  return [a, b];
}

export class CanvasLayer {
  /** The visible canvas (null in DOM mode). */
  canvas: HTMLCanvasElement | null = null;
  /** The blocks without highlights, offscreen (made when a highlight first needs it). */
  private base: HTMLCanvasElement | null = null;
  /** Whether the visible canvas shows exactly the blocks (no highlight drawn over them). */
  private screenIsBase = false;
  /** The label font (index in PIXEL_FONTS; past the end: none) for the current geometry;
   *  -1: not chosen yet. */
  private canvasFont = -1;
  private ramp: Uint32Array | null = null;
  private pixels = new Map<string, number | null>();
  private accent = "";

  constructor(
    private readonly doc: Document,
    private readonly scene: GridScene,
    /** The element whose computed style gives the theme's accent. */
    private readonly themed: HTMLElement,
  ) {}

  /** A new geometry: draw on `canvas` (or nothing, in DOM mode) from scratch. */
  reset(canvas: HTMLCanvasElement | null): void {
    this.canvas = canvas;
    this.base = null;
    this.screenIsBase = false;
    this.canvasFont = -1;
  }

  /** Read the theme's accent again on next use (it may have changed). */
  forgetAccent(): void {
    this.accent = "";
  }

  /** The thumbnails' pixels, once the geometry is on screen. */
  finishData(): void {
    const cv = this.canvas;
    const g = this.scene.geom;
    const layout = this.scene.layout;
    if (!cv || !g || !layout) return;
    if (this.base) {
      this.paintBase(this.base, g, layout, true);
      this.draw();
    } else if (this.screenIsBase) {
      this.paintBase(cv, g, layout, true);
    }
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
    const [bx0, bx1] = pixelSpans(xs, dpr, pw);
    const [by0, by1] = pixelSpans(ys, dpr, ph);
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
        const v = this.pixel(d.length ? this.scene.colorOf(d[0]) : "#cccccc");
        if (v === null) rest.push(k);
        else line.fill(v, bx0[c], bx1[c]);
      }
      for (let y = by0[r]; y < by1[r]; y++) px.set(line, y * pw);
      for (const c of striped) {
        // Diagonal stripes of the holders' colours (as the DOM blocks' gradient).
        const k = sel.cells[r * nC + c];
        const vs = layout.blocks[k].d.slice(0, 8).map((id) => this.pixel(this.scene.colorOf(id)));
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
    const raster: Raster = { px, pw, ph, bx0, bx1, by0, by1, dpr };
    if (withThumbs) this.writeThumbs(raster);
    this.writeLabels(raster, g, layout);
    ctx.putImageData(img, 0, 0);
    if (rest.length) {
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      for (const k of rest) {
        const [r, c] = sel.pos.get(k)!;
        const d = layout.blocks[k].d;
        ctx.fillStyle = d.length ? this.scene.colorOf(d[0]) : "#cccccc";
        ctx.fillRect(bx0[c] / dpr, by0[r] / dpr, (bx1[c] - bx0[c]) / dpr, (by1[r] - by0[r]) / dpr);
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
    }
    return true;
  }

  /** Each thumbnail scaled (nearest value) into its block, inside a frame of the block's colour. */
  private writeThumbs({ px, pw, ph, bx0, bx1, by0, by1, dpr }: Raster): void {
    const g = this.scene.geom;
    if (!g || this.scene.thumbs.size === 0) return;
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
    // A white ring between the device colour and the heatmap (as the DOM blocks' inset ring):
    // the ramp's greens and yellows must not run into green and yellow device colours.
    const ring = Math.max(1, Math.round(dpr));
    const white = this.pixel("#ffffff")!;
    for (const [k, t] of this.scene.thumbs) {
      const p = g.sel.pos.get(k);
      if (!p) continue;
      const [r, c] = p;
      const fx0 = bx0[c] + frame;
      const fy0 = by0[r] + frame;
      const fx1 = Math.min(pw, bx1[c] - frame);
      const fy1 = Math.min(ph, by1[r] - frame);
      if (fx1 - fx0 <= 2 * ring + 1 || fy1 - fy0 <= 2 * ring + 1) continue;
      for (let y = fy0; y < fy1; y++) px.fill(white, y * pw + fx0, y * pw + fx1);
      const x0 = fx0 + ring;
      const y0 = fy0 + ring;
      const tw = fx1 - ring - x0;
      const th = fy1 - ring - y0;
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
    { px, pw, ph, bx0, bx1, by0, by1, dpr }: Raster,
    g: GridGeometry,
    layout: Layout,
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
        if (this.scene.thumbs.has(k) || b.d.length > 1) {
          lighten(px, pw, ph, x - scale, y - scale, tw + 2 * scale, face.height + 2 * scale, CHIP_ALPHA);
          ink = dark;
        } else {
          ink = textColorOn(this.scene.colorOf(b.d[0])) === "#ffffff" ? white : black;
        }
        writeText(px, pw, ph, font, fit.text, x, y, scale, ink);
      }
    }
  }

  /** Draw the blocks (from the offscreen copy once there is one) and the highlights over them. */
  draw(): void {
    const cv = this.canvas;
    const g = this.scene.geom;
    const layout = this.scene.layout;
    if (!cv || !g || !layout) return;
    const ctx = context2d(cv);
    if (!ctx) return;
    const plain =
      !this.scene.hl.dim &&
      this.scene.hl.related.size === 0 &&
      this.scene.hl.found.size === 0 &&
      this.scene.hl.pinned === null &&
      !(this.scene.kbd && this.scene.cursor !== null);
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
        this.base = this.paintBase(b, g, layout, !this.scene.dataPending) ? b : null;
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
    if (this.scene.hl.dim) {
      ctx.globalAlpha = 0.3;
      ctx.drawImage(base, 0, 0);
      ctx.globalAlpha = 1;
      for (const k of this.scene.hl.related) {
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
    for (const k of this.scene.hl.related) outline(k, "#111", 2);
    for (const k of this.scene.hl.found) outline(k, "#e11", 3);
    if (this.scene.hl.pinned !== null) outline(this.scene.hl.pinned, "#111", 3);
    if (this.scene.kbd && this.scene.cursor !== null && sel.pos.has(this.scene.cursor)) {
      // The keyboard cursor: the theme's accent, with a light inner line to stand out on any
      // block colour; drawn around the block so that small blocks stay visible.
      // Around small blocks the ring keeps a size that the eye finds (at least 14 px).
      const [r, c] = sel.pos.get(this.scene.cursor)!;
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
        v = view ? view.getComputedStyle(this.themed).getPropertyValue("--sw-accent").trim() : "";
      } catch {
        v = "";
      }
      this.accent = v || "#1976d2";
    }
    return this.accent;
  }
}
