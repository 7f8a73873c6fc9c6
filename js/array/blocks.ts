// Block selection for the array pane: which blocks are visible in the current slice, and where.
import type { Block, Layout } from "../wire";

/** The dims actually drawn: [] for 0-d, [c] for 1-d, [r, c] otherwise (falls back to [0, 1]). */
export function effectiveViewDims(ndim: number, viewDims: number[] | null | undefined): number[] {
  if (ndim <= 0) return [];
  if (ndim === 1) return [0];
  const v = viewDims ?? [];
  if (
    v.length === 2 &&
    v.every((d) => Number.isInteger(d) && d >= 0 && d < ndim) &&
    v[0] !== v[1]
  ) {
    return [v[0], v[1]];
  }
  return [0, 1];
}

/** The dims that get a slider. */
export function sliderDims(ndim: number, viewDims: number[]): number[] {
  const out: number[] = [];
  for (let d = 0; d < ndim; d++) if (!viewDims.includes(d)) out.push(d);
  return out;
}

export interface GridSelection {
  /** Drawn dims: rowDim = -1 for 0-d / 1-d arrays (a single pseudo row), colDim = -1 for 0-d. */
  rowDim: number;
  colDim: number;
  rowRanges: [number, number][];
  colRanges: [number, number][];
  /** cells[r * nCols + c] = block index, or -1 when no block covers it (should not happen). */
  cells: Int32Array;
  /** Visible block indices (in layout order). */
  visible: number[];
  /** Position of each visible block: block index -> [row, col]. */
  pos: BlockPositions;
}

/** Where each visible block sits in the grid: block index -> [row, col] (two typed arrays rather
 *  than a Map of pairs: a 4096-block grid builds it in one pass without allocating). */
export class BlockPositions {
  private rows: Int32Array;
  private cols: Int32Array;
  constructor(nBlocks: number) {
    this.rows = new Int32Array(nBlocks).fill(-1);
    this.cols = new Int32Array(nBlocks);
  }
  set(k: number, rc: [number, number]): void {
    this.rows[k] = rc[0];
    this.cols[k] = rc[1];
  }
  setAt(k: number, r: number, c: number): void {
    this.rows[k] = r;
    this.cols[k] = c;
  }
  has(k: number): boolean {
    return k >= 0 && k < this.rows.length && this.rows[k] >= 0;
  }
  get(k: number): [number, number] | undefined {
    return this.has(k) ? [this.rows[k], this.cols[k]] : undefined;
  }
  row(k: number): number {
    return this.has(k) ? this.rows[k] : -1;
  }
  col(k: number): number {
    return this.has(k) ? this.cols[k] : -1;
  }
}

function intersectsSlice(b: Block, slice: number[], dims: number[]): boolean {
  for (const d of dims) {
    const s = slice[d] ?? 0;
    const r = b.i[d];
    if (!r) continue;
    if (!(r[0] <= s && s < r[1])) return false;
  }
  return true;
}

/** Distinct ranges sorted by (start, stop), and each item's position among them. Ranges are
 *  keyed by one number (start * (extent + 1) + stop) where that stays exact, else by text. */
function rangeIndex(
  rs: [number, number][],
  extent: number,
): { ranges: [number, number][]; at: Int32Array } {
  const n = rs.length;
  const at = new Int32Array(n);
  const m = extent + 1;
  if (m * m < Number.MAX_SAFE_INTEGER) {
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = rs[i][0] * m + rs[i][1];
    const sorted = keys.slice().sort();
    const index = new Map<number, number>();
    const ranges: [number, number][] = [];
    for (let i = 0; i < n; i++) {
      const k = sorted[i];
      if (i > 0 && k === sorted[i - 1]) continue;
      index.set(k, ranges.length);
      const a = Math.floor(k / m);
      ranges.push([a, k - a * m]);
    }
    for (let i = 0; i < n; i++) at[i] = index.get(keys[i])!;
    return { ranges, at };
  }
  const key = (r: [number, number]) => `${r[0]}:${r[1]}`;
  const seen = new Map<string, [number, number]>();
  for (const r of rs) if (!seen.has(key(r))) seen.set(key(r), r);
  const ranges = [...seen.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const index = new Map<string, number>();
  ranges.forEach((r, i) => index.set(key(r), i));
  for (let i = 0; i < n; i++) at[i] = index.get(key(rs[i]))!;
  return { ranges, at };
}

/** Select the blocks visible for `viewDims` at index `slice[d]` of every other dim. */
export function selectGrid(layout: Layout, viewDims: number[], slice: number[]): GridSelection {
  const ndim = layout.shape.length;
  const rowDim = viewDims.length === 2 ? viewDims[0] : -1;
  const colDim = viewDims.length >= 1 ? viewDims[viewDims.length - 1] : -1;
  const others = sliderDims(ndim, viewDims);
  const visible: number[] = [];
  const blocks = layout.blocks;
  for (let k = 0; k < blocks.length; k++) {
    if (others.length === 0 || intersectsSlice(blocks[k], slice, others)) visible.push(k);
  }
  const whole = (d: number): [number, number] => (d >= 0 ? [0, layout.shape[d]] : [0, 1]);
  const one = whole(-1);
  const extent = (d: number) => (d >= 0 ? layout.shape[d] : 1);
  const rowOf: [number, number][] = new Array(visible.length);
  const colOf: [number, number][] = new Array(visible.length);
  for (let i = 0; i < visible.length; i++) {
    const b = blocks[visible[i]];
    rowOf[i] = rowDim >= 0 ? b.i[rowDim] : one;
    colOf[i] = colDim >= 0 ? b.i[colDim] : one;
  }
  const rows = rangeIndex(rowOf, extent(rowDim));
  const cols = rangeIndex(colOf, extent(colDim));
  const rowRanges = rows.ranges;
  const colRanges = cols.ranges;
  if (rowRanges.length === 0) rowRanges.push(whole(rowDim));
  if (colRanges.length === 0) colRanges.push(whole(colDim));
  const nC = colRanges.length;
  const cells = new Int32Array(rowRanges.length * nC).fill(-1);
  const pos = new BlockPositions(blocks.length);
  for (let i = 0; i < visible.length; i++) {
    const k = visible[i];
    const r = rows.at[i];
    const c = cols.at[i];
    if (cells[r * nC + c] < 0) cells[r * nC + c] = k;
    pos.setAt(k, r, c);
  }
  return { rowDim, colDim, rowRanges, colRanges, cells, visible, pos };
}

export type CursorKey =
  | "ArrowLeft"
  | "ArrowRight"
  | "ArrowUp"
  | "ArrowDown"
  | "Home"
  | "End"
  | "PageUp"
  | "PageDown";

const CURSOR_KEYS = new Set<string>([
  "ArrowLeft",
  "ArrowRight",
  "ArrowUp",
  "ArrowDown",
  "Home",
  "End",
  "PageUp",
  "PageDown",
]);

export function isCursorKey(key: string): key is CursorKey {
  return CURSOR_KEYS.has(key);
}

/**
 * Keyboard movement over the grid's cells (`cells[r * nCols + c]` = block or -1): where the
 * cursor at (r, c) goes for `key`. Arrows step to the next cell in that direction that holds a
 * block other than the current one (and stay put at the edge); Home / End go to the first / last
 * block of the row, or of the whole grid with `ctrl`; PageUp / PageDown move `page` rows.
 * Returns [row, col].
 */
export function moveCursor(
  cells: Int32Array | number[],
  nCols: number,
  r: number,
  c: number,
  key: CursorKey,
  ctrl = false,
  page = 8,
): [number, number] {
  const nRows = nCols > 0 ? Math.floor(cells.length / nCols) : 0;
  if (nRows === 0 || nCols === 0) return [r, c];
  r = Math.max(0, Math.min(nRows - 1, r));
  c = Math.max(0, Math.min(nCols - 1, c));
  const at = (rr: number, cc: number) => cells[rr * nCols + cc];
  const here = at(r, c);
  const step = (dr: number, dc: number, maxSteps = Infinity): [number, number] => {
    let rr = r;
    let cc = c;
    let best: [number, number] = [r, c];
    for (let n = 0; n < maxSteps; ) {
      rr += dr;
      cc += dc;
      if (rr < 0 || rr >= nRows || cc < 0 || cc >= nCols) break;
      const k = at(rr, cc);
      if (k < 0) continue;
      if (k === here) continue;
      best = [rr, cc];
      n++;
    }
    return best;
  };
  const firstIn = (rr: number, from: number, dir: 1 | -1): number => {
    for (let cc = from; cc >= 0 && cc < nCols; cc += dir) if (at(rr, cc) >= 0) return cc;
    return -1;
  };
  switch (key) {
    case "ArrowLeft":
      return step(0, -1, 1);
    case "ArrowRight":
      return step(0, 1, 1);
    case "ArrowUp":
      return step(-1, 0, 1);
    case "ArrowDown":
      return step(1, 0, 1);
    case "PageUp":
      return step(-1, 0, page);
    case "PageDown":
      return step(1, 0, page);
    case "Home":
    case "End": {
      const dir = key === "Home" ? 1 : -1;
      const rowsToTry = ctrl
        ? Array.from({ length: nRows }, (_, i) => (dir === 1 ? i : nRows - 1 - i))
        : [r];
      for (const rr of rowsToTry) {
        const cc = firstIn(rr, dir === 1 ? 0 : nCols - 1, dir);
        if (cc >= 0) return [rr, cc];
      }
      return [r, c];
    }
  }
}

/**
 * Split `total` px among items proportionally to `sizes`, each at least `minPx` (reduced when
 * the items cannot all get it). Returns integer boundaries: offsets.length = sizes.length + 1,
 * offsets[0] = 0, offsets[n] = total.
 */
export function allocate(sizes: number[], total: number, minPx: number): number[] {
  const n = sizes.length;
  if (n === 0) return [0];
  const min = Math.min(minPx, total / n);
  const w = sizes.map((s) => Math.max(0, s));
  let sum = w.reduce((a, b) => a + b, 0);
  if (sum <= 0) {
    w.fill(1);
    sum = n;
  }
  const fixed = new Array<boolean>(n).fill(false);
  const len = new Array<number>(n).fill(0);
  for (let iter = 0; iter <= n; iter++) {
    let nFixed = 0;
    let rest = 0;
    for (let i = 0; i < n; i++) {
      if (fixed[i]) nFixed++;
      else rest += w[i];
    }
    const free = total - nFixed * min;
    let changed = false;
    for (let i = 0; i < n; i++) {
      if (fixed[i]) {
        len[i] = min;
        continue;
      }
      len[i] = rest > 0 ? (free * w[i]) / rest : free / (n - nFixed);
      if (len[i] < min) {
        fixed[i] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  const offsets = [0];
  let acc = 0;
  for (let i = 0; i < n; i++) {
    acc += len[i];
    offsets.push(i === n - 1 ? total : Math.round(acc));
  }
  return offsets;
}

/** Index i with offsets[i] <= x < offsets[i+1], or -1. */
export function locate(offsets: number[], x: number): number {
  const n = offsets.length - 1;
  if (n <= 0 || x < offsets[0] || x >= offsets[n]) return -1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** device id -> indices of the blocks it holds. */
export function blocksByDevice(layout: Layout): Map<number, number[]> {
  const m = new Map<number, number[]>();
  // Indexed loops: a first render runs this cold, where for-of allocates an iterator and a
  // result at each step.
  const blocks = layout.blocks;
  for (let k = 0; k < blocks.length; k++) {
    const d = blocks[k].d;
    for (let i = 0; i < d.length; i++) {
      const l = m.get(d[i]);
      if (l) l.push(k);
      else m.set(d[i], [k]);
    }
  }
  return m;
}
