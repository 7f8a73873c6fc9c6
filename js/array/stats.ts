// Accessors for Stats payloads (binary fields arrive as DataView).
import type { Layout, Stats } from "../wire";
import { rampLUT } from "../shared/colors";

/** Accept DataView / ArrayBuffer / typed arrays / number arrays (fake models, other hosts). */
function asDataView(x: unknown): DataView | null {
  if (x == null) return null;
  if (x instanceof DataView) return x;
  if (x instanceof ArrayBuffer) return new DataView(x);
  if (ArrayBuffer.isView(x)) return new DataView(x.buffer, x.byteOffset, x.byteLength);
  if (Array.isArray(x)) return new DataView(new Uint8Array(x as number[]).buffer);
  return null;
}

/** Stats that belong to `layout` (same key), else null. */
export function statsFor(layout: Layout | null, stats: Stats | null | undefined): Stats | null {
  if (!layout || !stats || stats.key !== layout.key) return null;
  return stats;
}

export function isComplex(dtype: string): boolean {
  return dtype.startsWith("complex");
}

export interface BlockValues {
  /** Real parts (or values). */
  re: Float64Array;
  /** Imaginary parts, when complex. */
  im: Float64Array | null;
}

export function blockValues(layout: Layout, stats: Stats, b: number): BlockValues | null {
  if (stats.status !== "ready") return null;
  const off = stats.values_offsets?.[b] ?? -1;
  const dv = asDataView(stats.values);
  if (off < 0 || !dv) return null;
  const n = layout.blocks[b].i.reduce((acc, r) => acc * (r[1] - r[0]), 1);
  const cplx = isComplex(layout.dtype);
  const re = new Float64Array(n);
  const im = cplx ? new Float64Array(n) : null;
  const per = cplx ? 2 : 1;
  for (let k = 0; k < n; k++) {
    const at = (off + k * per) * 8;
    if (at + 8 * per > dv.byteLength) return null;
    re[k] = dv.getFloat64(at, true);
    if (im) im[k] = dv.getFloat64(at + 8, true);
  }
  return { re, im };
}

export interface Thumb {
  rows: number;
  cols: number;
  data: Uint8Array;
}

/** Thumbnail of block b oriented for `viewDims` (transposed when drawn the other way round),
 *  or null when there is none or it was computed over other dims. */
export function blockThumb(stats: Stats, b: number, viewDims: number[]): Thumb | null {
  return thumbReader(stats, viewDims)?.(b) ?? null;
}

/** blockThumb for many blocks of one render: the checks that do not depend on the block made
 *  once. Null when no block has a thumbnail for `viewDims`. */
export function thumbReader(stats: Stats, viewDims: number[]): ((b: number) => Thumb | null) | null {
  if (stats.status !== "ready") return null;
  const dv = asDataView(stats.thumbs);
  if (!dv) return null;
  const td = stats.thumbs_dims ?? [];
  const same = td.length === viewDims.length && td.every((d, i) => d === viewDims[i]);
  const asIs = same || viewDims.length < 2;
  if (!asIs && !(td.length === 2 && td[0] === viewDims[1] && td[1] === viewDims[0])) return null;
  const shapes = stats.thumb_shapes;
  const offsets = stats.thumb_offsets;
  return (b) => {
    const shp = shapes?.[b];
    if (!shp || shp[0] <= 0 || shp[1] <= 0) return null;
    const rows = shp[0]; // indexed, not destructured: unoptimised code (a first render, once a
    const cols = shp[1]; // block) destructures an array through its iterator
    const off = offsets?.[b] ?? -1;
    if (off < 0 || off + rows * cols > dv.byteLength) return null;
    const src = new Uint8Array(dv.buffer, dv.byteOffset + off, rows * cols);
    if (asIs) return { rows, cols, data: src };
    const t = new Uint8Array(rows * cols);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = src[r * cols + c];
    return { rows: cols, cols: rows, data: t };
  };
}

/** RGBA pixels of a thumbnail through the viridis ramp. */
function thumbPixels(t: Thumb): Uint8ClampedArray<ArrayBuffer> {
  const lut = rampLUT();
  const px = new Uint8ClampedArray(t.rows * t.cols * 4);
  for (let k = 0; k < t.data.length; k++) {
    const v = t.data[k] * 4;
    px[k * 4] = lut[v];
    px[k * 4 + 1] = lut[v + 1];
    px[k * 4 + 2] = lut[v + 2];
    px[k * 4 + 3] = 255;
  }
  return px;
}

/** A canvas with the thumbnail at 1 px per value (scaled up by CSS, pixelated). Null without 2-D
 *  canvas support (tests). */
export function thumbCanvas(doc: Document, t: Thumb): HTMLCanvasElement | null {
  const c = doc.createElement("canvas");
  c.width = t.cols;
  c.height = t.rows;
  let ctx: CanvasRenderingContext2D | null = null;
  try {
    ctx = c.getContext("2d");
  } catch {
    ctx = null;
  }
  if (ctx && typeof ctx.putImageData === "function" && typeof ImageData !== "undefined") {
    try {
      ctx.putImageData(new ImageData(thumbPixels(t), t.cols, t.rows), 0, 0);
    } catch {
      /* ignore: still return the (blank) canvas */
    }
  }
  c.className = "sw-thumb";
  return c;
}

/** The block's extent (elements) along the drawn rows and columns: [rows, cols]. */
export function drawnExtent(layout: Layout, b: number, viewDims: number[]): [number, number] {
  const i = layout.blocks[b]?.i ?? [];
  const len = (d: number) => (d >= 0 && i[d] ? i[d][1] - i[d][0] : 1);
  if (viewDims.length >= 2) return [len(viewDims[0]), len(viewDims[1])];
  if (viewDims.length === 1) return [1, len(viewDims[0])];
  return [1, 1];
}

/** Elements pooled into one thumbnail pixel, [rows, cols] (each pixel is their mean). */
export function poolSize(layout: Layout, b: number, t: Thumb, viewDims: number[]): [number, number] {
  const [r, c] = drawnExtent(layout, b, viewDims);
  return [Math.max(1, Math.ceil(r / t.rows)), Math.max(1, Math.ceil(c / t.cols))];
}

/** What one thumbnail pixel of block `b` is, in words: "every value", or "the mean of 128×32
 *  values" (and of the dims not drawn: "… × 4 along dim 0"). null when the pixel is one value. */
export function poolText(layout: Layout, b: number, t: Thumb, viewDims: number[]): string | null {
  const [pr, pc] = poolSize(layout, b, t, viewDims);
  const i = layout.blocks[b]?.i ?? [];
  const others = i
    .map((r, d) => [d, r[1] - r[0]] as const)
    .filter(([d, n]) => !viewDims.includes(d) && n > 1);
  if (pr * pc === 1 && others.length === 0) return null;
  const along = others.map(([d, n]) => ` × ${n} along dim ${d}`).join("");
  return `the mean of ${pr}×${pc} values${along}`;
}

/** Display size (px) of a `rows` × `cols` element block's heatmap in a `maxW` × `maxH` box: the
 *  block's own aspect (a tall 2048×1024 block is drawn tall, whatever the thumbnail's pixel
 *  count), each side at least `minPx`. */
export function heatmapBox(rows: number, cols: number, maxW: number, maxH: number, minPx = 8): [number, number] {
  const a = rows / Math.max(1, cols);
  let w = maxW;
  let h = maxW * a;
  if (h > maxH) {
    h = maxH;
    w = maxH / a;
  }
  return [Math.max(minPx, Math.round(w)), Math.max(minPx, Math.round(h))];
}

/** The value range [lo, hi] of a thumbnail's pooled means (its bytes scaled back by vmin, vmax). */
export function thumbRange(t: Thumb, vmin: number, vmax: number): [number, number] {
  let lo = 255;
  let hi = 0;
  for (const v of t.data) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const span = vmax - vmin;
  return [vmin + (lo / 255) * span, vmin + (hi / 255) * span];
}

/** Whether pooled means hide a block's data: they cover under half of its min…max range (a
 *  spike, a checkerboard, noise averaged away). */
export function meanHides(t: Thumb, vmin: number, vmax: number, bmin: number, bmax: number): boolean {
  const spread = bmax - bmin;
  if (!(spread > 0) || !Number.isFinite(spread)) return false;
  const [lo, hi] = thumbRange(t, vmin, vmax);
  return hi - lo < 0.5 * spread;
}

