// The memory chart's data, bounded (no DOM): at most MAX_GROUPS top-level groups stacked and in
// the legend (the largest, then one "others"), every device the wire sends (zeros included)
// as a bar, or at thousands of devices bins of consecutive ids (mean stacked by group, min…max
// as a line), and y-axis ticks at round values. Pure, so that 2,500 groups and 65,536 devices
// are summed once per payload.
import type { TreeMemory } from "../wire";

/** Groups stacked and named in the legend; the rest are summed into "others". */
export const MAX_GROUPS = 8;
/** Bars drawn one per device up to this many devices; past it, BINS bins of consecutive ids. */
export const MAX_BARS = 512;
export const BINS = 256;

export interface ChartGroups {
  /** The groups drawn: index into the wire's group_names, or -1 for "others". */
  index: number[];
  names: string[];
  /** rows[k][i]: what drawn group k puts on device i (the wire's order of devices). */
  rows: number[][];
  /** The most any one device holds of each drawn group. */
  most: number[];
  /** Groups summed into "others" (0 when every group is drawn). */
  others: number;
}

/** The groups to draw: every one when there are at most MAX_GROUPS, else the MAX_GROUPS - 1
 *  largest (by the most any device holds of them, then by their sum) and one "others" row. */
export function chartGroups(m: TreeMemory, names: string[], max = MAX_GROUPS): ChartGroups {
  const n = m.ids.length;
  const rows = m.by_group.map((row) => Array.from({ length: n }, (_, i) => row[i] ?? 0));
  const most = rows.map((row) => row.reduce((a, b) => Math.max(a, b), 0));
  if (rows.length <= max) {
    return { index: rows.map((_, g) => g), names: rows.map((_, g) => names[g] ?? `group ${g}`), rows, most, others: 0 };
  }
  const sum = rows.map((row) => row.reduce((a, b) => a + b, 0));
  const order = rows.map((_, g) => g).sort((a, b) => most[b] - most[a] || sum[b] - sum[a] || a - b);
  const keep = order.slice(0, max - 1).sort((a, b) => a - b);
  const kept = new Set(keep);
  const rest = new Array<number>(n).fill(0);
  for (let g = 0; g < rows.length; g++) if (!kept.has(g)) for (let i = 0; i < n; i++) rest[i] += rows[g][i];
  const others = rows.length - keep.length;
  return {
    index: [...keep, -1],
    names: [...keep.map((g) => names[g] ?? `group ${g}`), `${others.toLocaleString()} other groups`],
    rows: [...keep.map((g) => rows[g]), rest],
    most: [...keep.map((g) => most[g]), rest.reduce((a, b) => Math.max(a, b), 0)],
    others,
  };
}

/** One bar: a device, or (summarised) a bin of consecutive devices. */
export interface Bar {
  /** The first and last device id it stands for (the same for one device). */
  first: number;
  last: number;
  /** How many devices it stands for. */
  count: number;
  /** Bytes per drawn group: the device's own, or the bin's mean. */
  stack: number[];
  total: number;
  min: number;
  max: number;
}

/** Totals per device (all groups). */
export function totalsOf(m: TreeMemory): number[] {
  return m.ids.map((_, i) => m.by_group.reduce((s, row) => s + (row[i] ?? 0), 0));
}

/** The bars: one per device (zeros included) up to `maxBars`, else at most `bins` bins of
 *  consecutive devices (in the wire's order). `missing`: devices of the mesh the wire has no id
 *  for (an older kernel sends only devices holding something): empty bars after the rest,
 *  their id -1 (one per device only; in bins they are said in words). */
export function chartBars(m: TreeMemory, g: ChartGroups, missing = 0, maxBars = MAX_BARS, bins = BINS): Bar[] {
  const n = m.ids.length;
  const totals = totalsOf(m);
  const per = n <= maxBars ? 1 : Math.ceil(n / bins);
  const bars: Bar[] = [];
  for (let s = 0; s < n; s += per) {
    const e = Math.min(n, s + per);
    const stack = g.rows.map((row) => {
      let a = 0;
      for (let i = s; i < e; i++) a += row[i];
      return a / (e - s);
    });
    let min = Infinity;
    let max = 0;
    for (let i = s; i < e; i++) {
      min = Math.min(min, totals[i]);
      max = Math.max(max, totals[i]);
    }
    bars.push({ first: m.ids[s], last: m.ids[e - 1], count: e - s, stack, total: stack.reduce((a, b) => a + b, 0), min, max });
  }
  if (per === 1 && n + missing <= maxBars)
    for (let k = 0; k < missing; k++) bars.push({ first: -1, last: -1, count: 1, stack: g.rows.map(() => 0), total: 0, min: 0, max: 0 });
  return bars;
}

/** Round tick values from 0 to the first at or over `top`, about `max` + 1 of them, 0 first. Bytes read best
 *  in whole units (1 MiB, 2 MiB…): steps of 1, 2, 2.5 or 5 × 10^k of the unit the top is in. */
export function yTicks(top: number, max = 4): number[] {
  if (!(top > 0)) return [0];
  const raw = top / max;
  const unit = 1024 ** Math.max(0, Math.floor(Math.log(top) / Math.log(1024)));
  const r = raw / unit;
  const q = 10 ** Math.floor(Math.log10(r));
  const step = unit * q * ([1, 2, 2.5, 5, 10].find((f) => f * q >= r) ?? 10);
  const out: number[] = [];
  for (let k = 0; out.length === 0 || out[out.length - 1] < top * (1 - 1e-9); k++) out.push(k * step);
  return out;
}
