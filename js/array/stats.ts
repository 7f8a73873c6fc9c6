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
  if (stats.status !== "ready") return null;
  const shp = stats.thumb_shapes?.[b];
  const dv = asDataView(stats.thumbs);
  if (!shp || !dv || shp[0] <= 0 || shp[1] <= 0) return null;
  const [rows, cols] = shp;
  const off = stats.thumb_offsets?.[b] ?? -1;
  if (off < 0 || off + rows * cols > dv.byteLength) return null;
  const src = new Uint8Array(dv.buffer, dv.byteOffset + off, rows * cols);
  const td = stats.thumbs_dims ?? [];
  const same = td.length === viewDims.length && td.every((d, i) => d === viewDims[i]);
  if (same || viewDims.length < 2) return { rows, cols, data: src };
  if (td.length === 2 && td[0] === viewDims[1] && td[1] === viewDims[0]) {
    const t = new Uint8Array(rows * cols);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = src[r * cols + c];
    return { rows: cols, cols: rows, data: t };
  }
  return null;
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
