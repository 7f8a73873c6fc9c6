// Label fitting: pick the longest candidate that fits; never cut a label in the middle.
import type { Layout } from "../wire";
import { formatHalfOpen, formatRange, textWidth } from "../shared/text";

/** The first candidate whose estimated width fits in `maxWidth` px (and whose line fits in
 *  `maxHeight`), or "" when none does. Candidates are whole strings, never truncated. */
export function fitLabel(
  candidates: string[],
  maxWidth: number,
  fontPx = 12,
  maxHeight = Infinity,
): string {
  // Indexed: called once a block on a first render, in cold code, where for-of allocates.
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i];
    if (c !== "" && labelFits(c, maxWidth, fontPx, maxHeight)) return c;
  }
  return "";
}

/** Whether `text` fits in `maxWidth` px at `fontPx` with its line in `maxHeight` (fitLabel's
 *  test of one candidate). */
export function labelFits(text: string, maxWidth: number, fontPx = 12, maxHeight = Infinity): boolean {
  return maxHeight >= fontPx + 2 && textWidth(text, fontPx) <= maxWidth;
}

/** Compress sorted ids into runs: [0,1,2,3,8] -> "0–3,8". */
export function compressIds(ids: number[]): string {
  const s = [...new Set(ids)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < s.length) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    if (j - i >= 2) parts.push(`${s[i]}–${s[j]}`);
    else for (let k = i; k <= j; k++) parts.push(String(s[k]));
    i = j + 1;
  }
  return parts.join(",");
}

/** Candidate labels for a block held by `ids`, longest first: "0,4" / "0–3 ×4" / "×4".
 *  With `badge` (a separate ×N badge is shown) the count-only forms are left out. */
export function deviceLabelCandidates(ids: number[], badge = false): string[] {
  if (ids.length === 0) return ["–"];
  if (ids.length === 1) return [String(ids[0])];
  const n = ids.length;
  const out: string[] = [];
  const sorted = [...ids].sort((a, b) => a - b).join(",");
  const comp = compressIds(ids);
  // Runs ("0–15 ×16") read faster than long lists: they come first when they are shorter.
  if (comp.length < sorted.length) out.push(badge ? comp : `${comp} ×${n}`);
  if (n <= 16) out.push(ids.join(","));
  if (n <= 16 && sorted !== ids.join(",")) out.push(sorted);
  if (!badge) out.push(`×${n}`);
  return [...new Set(out)];
}

/** Full tooltip text for a device set. */
function deviceListText(ids: number[]): string {
  if (ids.length === 1) return `device ${ids[0]}`;
  return `devices ${ids.join(", ")} (×${ids.length})`;
}

/** Candidates for an index-range label: "0:2048" / "0" (start only, like an axis tick). */
export function rangeLabelCandidates(r: [number, number]): string[] {
  return [formatRange(r), String(r[0])];
}

/** A typeface for canvas labels: the width of a text and the height of a line, in px. */
export interface LabelFace {
  width(text: string): number;
  height: number;
}

/** A compact label for a block of `maxWidth`×`maxHeight` px held by `ids`, for the canvas: the
 *  longest whole candidate of deviceLabelCandidates (device id, run, ×N count) in the first face
 *  of `faces` where one fits with a pixel to spare above and below; null when none fits (the
 *  block then has its text on hover only). Never a cut string. */
export function canvasLabel(
  ids: number[],
  maxWidth: number,
  maxHeight: number,
  faces: readonly LabelFace[],
): { text: string; face: number } | null {
  if (maxWidth <= 0) return null;
  const cands = ids.length === 1 ? [String(ids[0])] : deviceLabelCandidates(ids);
  for (let i = 0; i < faces.length; i++) {
    const f = faces[i];
    if (maxHeight < f.height + 2) continue;
    for (const c of cands) if (c !== "" && f.width(c) <= maxWidth) return { text: c, face: i };
  }
  return null;
}

/** A block's tooltip: its index ranges, then its devices. */
export function blockTooltip(layout: Layout, k: number): string {
  const b = layout.blocks[k];
  const ranges = b.i.map((r, d) => `dim ${d} ${formatHalfOpen(r)}`).join(", ");
  return `${ranges}\n${deviceListText(b.d)}`;
}
