// The grid's geometry: how big it is drawn, where each row and column of blocks goes, which
// tick labels fit along the axes. Pure functions of the layout, the selection and the room.
import type { Layout } from "../../wire";
import { allocate, type GridSelection } from "../blocks";
import { rangeLabelCandidates } from "../labels";
import { textWidth } from "../../shared/text";
import { entryAxes } from "../../shared/spec";

/** Above this many visible blocks the grid is drawn on one <canvas>. */
export const CANVAS_THRESHOLD = 256;
export const MAX_GRID_WIDTH = 720;
export const MAX_GRID_HEIGHT = 460;
export const LABEL_FONT = 12;
export const SMALL_FONT = 10;
const TICK_FONT = 11;
/** Padding (px) of .sw-grid-host (shared/styles.ts). */
export const HOST_PAD = 4;


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

/** Mesh axes of size 1 split nothing: a dimension over only those is not split (the legend's
 *  "y has size 1: not split"). The names of such axes, when every axis of dim d is one. */
function sizeOneAxes(layout: Layout, axes: string[]): string[] {
  const m = layout.mesh;
  if (!m || axes.length === 0) return [];
  const size = (a: string) => m.axis_sizes[m.axis_names.indexOf(a)];
  return axes.every((a) => size(a) === 1) ? axes : [];
}

export function dimTitle(layout: Layout, d: number): string {
  const axes = entryAxes(layout.spec[d]);
  const ones = sizeOneAxes(layout, axes);
  const by = ones.length
    ? ` · not split (${ones.join(", ")} ${ones.length > 1 ? "have" : "has"} size 1)`
    : axes.length
      ? ` · sharded over ${axes.join("+")}`
      : " · not sharded";
  return `dim ${d} (${layout.shape[d]})${by}`;
}

/** The axis title that fits `room` px along the axis (arrow included), from the full
 *  "dim 0 (8) · sharded over x" down to "dim 0": a rotated title in a short 3-D slice is never
 *  cut mid-word ("sharded ove"). The full text goes in the tooltip. */
export function dimTitleFitting(layout: Layout, d: number, room: number): string {
  const axes = entryAxes(layout.spec[d]);
  const over = axes.join("+");
  const full = dimTitle(layout, d);
  const cands = sizeOneAxes(layout, axes).length
    ? [full, `dim ${d} · not split`, `dim ${d}`]
    : axes.length
      ? [full, `dim ${d} · over ${over}`, `dim ${d} · ${over}`, `dim ${d}`]
      : [full, `dim ${d} · not sharded`, `dim ${d}`];
  // Titles are 11 px in the UI font: ~0.6 em a character is a safe upper bound.
  for (const c of cands) if (textWidth(`${c} →`, 11) <= room) return c;
  return `${d}`;
}

const replicatedFrame = (n: number): number => (n > 1 ? 7 : 4);

/** The frame (px) of the block's colour around the thumbnail of a DOM block of `w`×`h` px held
 *  by `holders` devices (wider for stripes), or 0 when no thumbnail fits. */
export function thumbInset(w: number, h: number, holders: number): number {
  if (w < 18 || h < 18) return 0;
  const inset = Math.max(replicatedFrame(holders), Math.min(14, Math.round(Math.min(w, h) * 0.12)));
  return w - 2 * inset >= 6 && h - 2 * inset >= 6 ? inset : 0;
}

/** The white gap (px) right of and below each DOM block: 1 when every block is at least 6 px. */
export function gridGap(g: GridGeometry): number {
  for (let i = 0; i + 1 < g.xs.length; i++) if (g.xs[i + 1] - g.xs[i] < 6) return 0;
  for (let i = 0; i + 1 < g.ys.length; i++) if (g.ys[i + 1] - g.ys[i] < 6) return 0;
  return 1;
}

/** CSS grid tracks for offsets: "repeat(4, 45px)" or "44px 45px …". */
export function tracks(offsets: number[]): string {
  const sizes: number[] = [];
  for (let i = 0; i + 1 < offsets.length; i++) sizes.push(offsets[i + 1] - offsets[i]);
  if (sizes.every((v) => v === sizes[0])) return `repeat(${sizes.length}, ${sizes[0]}px)`;
  return sizes.map((v) => `${v}px`).join(" ");
}
