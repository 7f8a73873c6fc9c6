// The thumbnail atlas of the DOM grid: every block's heatmap packed into one paletted image
// behind a blob: URL, which each block shows as its CSS background (one decode for all blocks).
import { rampLUT } from "../../shared/colors";
import type { Thumb } from "../stats";

export interface ThumbPack {
  width: number;
  height: number;
  /** Top-left pixel of each thumbnail in the atlas (tiles carry a 1 px replicated border). */
  at: Map<number, [number, number]>;
}

/** Shelf packing of thumbnails into one image, each tile with a 1 px border (filled with its
 *  edge by paletteBmp) so scaled, pixelated sampling never bleeds into a neighbour. */
export function packThumbs(thumbs: Map<number, Thumb>, maxW = 2048): ThumbPack {
  const at = new Map<number, [number, number]>();
  let x = 0;
  let y = 0;
  let shelf = 0;
  let width = 0;
  thumbs.forEach((t, k) => {
    const w = t.cols + 2;
    const h = t.rows + 2;
    if (x > 0 && x + w > maxW) {
      x = 0;
      y += shelf;
      shelf = 0;
    }
    at.set(k, [x + 1, y + 1]);
    x += w;
    width = Math.max(width, x);
    shelf = Math.max(shelf, h);
  }); // forEach, not for-of: no entry pair per thumbnail
  return { width, height: y + shelf, at };
}

/** Every thumbnail in one 8-bit BMP (the thumbnails' bytes are already indices into the
 *  viridis ramp, which becomes the palette) behind a blob: URL: a quarter of the bytes of an
 *  RGBA image, filled by row copies. Positions are packThumbs's (each tile with a 1 px border
 *  copied from its edge, so that scaled sampling never bleeds into a neighbour). Null where
 *  blob URLs are unavailable (tests) or there is nothing to pack. */
export function paletteAtlas(thumbs: Map<number, Thumb>, pack?: ThumbPack): { url: string } | null {
  const U = typeof URL !== "undefined" ? URL : null;
  if (!thumbs.size || !U || typeof U.createObjectURL !== "function" || typeof Blob === "undefined")
    return null;
  const bytes = paletteBmp(thumbs, pack);
  try {
    return { url: U.createObjectURL(new Blob([bytes], { type: "image/bmp" })) };
  } catch {
    return null;
  }
}

/** The BMP file of paletteAtlas (exported for tests). `pack`: packThumbs(thumbs), when the
 *  caller has it. */
export function paletteBmp(thumbs: Map<number, Thumb>, pack = packThumbs(thumbs)): Uint8Array<ArrayBuffer> {
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
  // Byte by byte, not a subarray a row and for-of over the map: this runs as a page first draws
  // its thumbnails, in unoptimised code, where those were 180 KB of garbage at 256 devices.
  thumbs.forEach((t, k) => {
    const at = pack.at.get(k)!;
    const { rows, cols, data } = t;
    for (let r = -1; r <= rows; r++) {
      const sr = Math.min(rows - 1, Math.max(0, r)) * cols;
      const o = head + (at[1] + r) * stride + at[0];
      for (let c = 0; c < cols; c++) buf[o + c] = data[sr + c];
      buf[o - 1] = data[sr];
      buf[o + cols] = data[sr + cols - 1];
    }
  });
  return buf;
}
