// Two bitmap fonts for labels on the grid canvas, written straight into its pixels: no font
// lookup, no text shaping, the same crisp digits in every browser, and a 3×5 face small enough
// to label 3-digit ids in 14 px blocks. Only the characters of device labels exist
// ("12", "0,4", "0–3 ×4").

export interface PixelFont {
  readonly name: string;
  /** Glyph cell in font pixels; `adv` = w + 1 (one pixel between characters). */
  readonly w: number;
  readonly h: number;
  readonly adv: number;
  readonly glyphs: ReadonlyMap<string, Uint8Array>;
}

function face(name: string, w: number, h: number, rows: Record<string, string[]>): PixelFont {
  const glyphs = new Map<string, Uint8Array>();
  for (const [ch, lines] of Object.entries(rows)) {
    const g = new Uint8Array(w * h);
    lines.forEach((line, y) => {
      for (let x = 0; x < w; x++) g[y * w + x] = line[x] === "#" ? 1 : 0;
    });
    glyphs.set(ch, g);
  }
  return { name, w, h, adv: w + 1, glyphs };
}

/** 5×7, the classic character-LCD digits. */
export const FONT_5X7 = face("5x7", 5, 7, {
  "0": [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
  "1": ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
  "2": [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
  "3": ["#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."],
  "4": ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
  "5": ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
  "6": ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
  "7": ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
  "8": [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
  "9": [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
  ",": [".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."],
  "–": [".....", ".....", ".....", "#####", ".....", ".....", "....."],
  "×": [".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "....."],
  " ": [".....", ".....", ".....", ".....", ".....", ".....", "....."],
});

/** 3×5, for blocks too small for 5×7. */
export const FONT_3X5 = face("3x5", 3, 5, {
  "0": ["###", "#.#", "#.#", "#.#", "###"],
  "1": [".#.", "##.", ".#.", ".#.", "###"],
  "2": ["###", "..#", "###", "#..", "###"],
  "3": ["###", "..#", ".##", "..#", "###"],
  "4": ["#.#", "#.#", "###", "..#", "..#"],
  "5": ["###", "#..", "###", "..#", "###"],
  "6": ["###", "#..", "###", "#.#", "###"],
  "7": ["###", "..#", ".#.", ".#.", ".#."],
  "8": ["###", "#.#", "###", "#.#", "###"],
  "9": ["###", "#.#", "###", "..#", "###"],
  ",": ["...", "...", "...", ".#.", "#.."],
  "–": ["...", "...", "###", "...", "..."],
  "×": ["...", "#.#", ".#.", "#.#", "..."],
  " ": ["...", "...", "...", "...", "..."],
});

/** The fonts tried for canvas labels, largest first. */
export const PIXEL_FONTS: readonly PixelFont[] = [FONT_5X7, FONT_3X5];

/** Whether `font` has every character of `text`. */
function canWrite(font: PixelFont, text: string): boolean {
  for (const ch of text) if (!font.glyphs.has(ch)) return false;
  return true;
}

/** Width of `text` in font pixels (no trailing gap); Infinity when a character is missing, so
 *  that such a label never "fits". */
export function pixelTextWidth(font: PixelFont, text: string): number {
  if (!canWrite(font, text)) return Infinity;
  const n = [...text].length;
  return n ? n * font.adv - 1 : 0;
}

/** Write `text` into RGBA pixels `px` (a Uint32Array over a `pw`-wide ImageData) with its top
 *  left at device pixel (x0, y0), each font pixel `scale` device pixels, in colour `ink` (a pixel
 *  value). Pixels outside [0, pw) × [0, ph) are skipped. */
export function writeText(
  px: Uint32Array,
  pw: number,
  ph: number,
  font: PixelFont,
  text: string,
  x0: number,
  y0: number,
  scale: number,
  ink: number,
): void {
  let x = x0;
  for (const ch of text) {
    const g = font.glyphs.get(ch);
    if (g) {
      for (let gy = 0; gy < font.h; gy++) {
        for (let gx = 0; gx < font.w; gx++) {
          if (!g[gy * font.w + gx]) continue;
          for (let sy = 0; sy < scale; sy++) {
            const y = y0 + gy * scale + sy;
            if (y < 0 || y >= ph) continue;
            const row = y * pw;
            for (let sx = 0; sx < scale; sx++) {
              const xx = x + gx * scale + sx;
              if (xx >= 0 && xx < pw) px[row + xx] = ink;
            }
          }
        }
      }
    }
    x += font.adv * scale;
  }
}

/** Blend a rectangle of `px` towards white by `alpha` (the chip behind a label on stripes or a
 *  thumbnail). Works on either byte order: every channel moves towards 255, alpha stays 255. */
export function lighten(
  px: Uint32Array,
  pw: number,
  ph: number,
  x0: number,
  y0: number,
  w: number,
  h: number,
  alpha: number,
): void {
  const keep = 1 - alpha;
  const add = 255 * alpha;
  for (let y = Math.max(0, y0); y < Math.min(ph, y0 + h); y++) {
    const row = y * pw;
    for (let x = Math.max(0, x0); x < Math.min(pw, x0 + w); x++) {
      const v = px[row + x];
      const a = Math.round((v & 255) * keep + add);
      const b = Math.round(((v >>> 8) & 255) * keep + add);
      const c = Math.round(((v >>> 16) & 255) * keep + add);
      const d = Math.round(((v >>> 24) & 255) * keep + add);
      px[row + x] = (a | (b << 8) | (c << 16) | (d << 24)) >>> 0;
    }
  }
}
