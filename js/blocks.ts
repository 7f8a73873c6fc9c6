// Block selection for the array pane: which blocks are visible in the current slice, and where.
import type { Block, Layout } from "./types";

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
  pos: Map<number, [number, number]>;
}

export function intersectsSlice(b: Block, slice: number[], dims: number[]): boolean {
  for (const d of dims) {
    const s = slice[d] ?? 0;
    const r = b.i[d];
    if (!r) continue;
    if (!(r[0] <= s && s < r[1])) return false;
  }
  return true;
}

function rangeKey(r: [number, number]): string {
  return `${r[0]}:${r[1]}`;
}

function distinctSorted(rs: [number, number][]): [number, number][] {
  const m = new Map<string, [number, number]>();
  for (const r of rs) m.set(rangeKey(r), r);
  return [...m.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** Select the blocks visible for `viewDims` at index `slice[d]` of every other dim. */
export function selectGrid(layout: Layout, viewDims: number[], slice: number[]): GridSelection {
  const ndim = layout.shape.length;
  const rowDim = viewDims.length === 2 ? viewDims[0] : -1;
  const colDim = viewDims.length >= 1 ? viewDims[viewDims.length - 1] : -1;
  const others = sliderDims(ndim, viewDims);
  const visible: number[] = [];
  layout.blocks.forEach((b, k) => {
    if (intersectsSlice(b, slice, others)) visible.push(k);
  });
  const whole = (d: number): [number, number] => (d >= 0 ? [0, layout.shape[d]] : [0, 1]);
  const rowOf = (b: Block): [number, number] => (rowDim >= 0 ? b.i[rowDim] : whole(-1));
  const colOf = (b: Block): [number, number] => (colDim >= 0 ? b.i[colDim] : whole(-1));
  const rowRanges = distinctSorted(visible.map((k) => rowOf(layout.blocks[k])));
  const colRanges = distinctSorted(visible.map((k) => colOf(layout.blocks[k])));
  if (rowRanges.length === 0) rowRanges.push(whole(rowDim));
  if (colRanges.length === 0) colRanges.push(whole(colDim));
  const rIdx = new Map(rowRanges.map((r, i) => [rangeKey(r), i]));
  const cIdx = new Map(colRanges.map((r, i) => [rangeKey(r), i]));
  const cells = new Int32Array(rowRanges.length * colRanges.length).fill(-1);
  const pos = new Map<number, [number, number]>();
  for (const k of visible) {
    const b = layout.blocks[k];
    const r = rIdx.get(rangeKey(rowOf(b)))!;
    const c = cIdx.get(rangeKey(colOf(b)))!;
    if (cells[r * colRanges.length + c] < 0) cells[r * colRanges.length + c] = k;
    pos.set(k, [r, c]);
  }
  return { rowDim, colDim, rowRanges, colRanges, cells, visible, pos };
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
  layout.blocks.forEach((b, k) => {
    for (const id of b.d) {
      let l = m.get(id);
      if (!l) m.set(id, (l = []));
      l.push(k);
    }
  });
  return m;
}
