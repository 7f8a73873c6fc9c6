// The rows of the leaf table, as data (no DOM): leaves grouped by their top-level group, in tree
// order or by bytes per device, groups collapsible, filtered by a substring of the path. Pure, so
// that 10,000 leaves are sorted once per change and the table draws only the rows in sight.
import type { TreeWire } from "../wire";

export type SortBy = "tree" | "bytes";

export type Row =
  | { kind: "group"; group: number; name: string; count: number; bytes: number; open: boolean }
  | { kind: "leaf"; leaf: number };

export interface RowOptions {
  sort: SortBy;
  /** Groups folded away (their leaves hidden). */
  closed: ReadonlySet<number>;
  /** Only leaves whose path contains this (case-insensitive); "" for all. */
  filter: string;
}

/** Whether leaf i is replicated and large: the most common sharding mistake. */
export function isLargeReplicated(t: TreeWire, i: number, largeBytes: number): boolean {
  return t.replication[i] > 1 && t.bytes[i] >= largeBytes && t.bytes[i] > 0;
}

/** The rows to draw, group headers first in each group. Groups keep their first leaf's order in
 *  tree order, and go largest first when sorted by bytes. */
export function buildRows(t: TreeWire, opts: RowOptions): Row[] {
  const needle = opts.filter.trim().toLowerCase();
  const members: number[][] = t.group_names.map(() => []);
  for (let i = 0; i < t.paths.length; i++) {
    if (needle && !t.paths[i].toLowerCase().includes(needle)) continue;
    members[t.groups[i]].push(i);
  }
  const totals = members.map((m) => m.reduce((s, i) => s + t.bytes[i], 0));
  let order = members.map((_, g) => g).filter((g) => members[g].length > 0);
  if (opts.sort === "bytes") {
    order = order.sort((a, b) => totals[b] - totals[a] || a - b);
    for (const m of members) m.sort((a, b) => t.bytes[b] - t.bytes[a] || a - b);
  }
  const rows: Row[] = [];
  for (const g of order) {
    const open = !opts.closed.has(g);
    rows.push({ kind: "group", group: g, name: t.group_names[g], count: members[g].length, bytes: totals[g], open });
    if (open) for (const i of members[g]) rows.push({ kind: "leaf", leaf: i });
  }
  return rows;
}

/** The path of a leaf without its group's prefix (the group row already says it). */
export function shortPath(t: TreeWire, i: number): string {
  const name = t.group_names[t.groups[i]];
  const p = t.paths[i];
  return p.startsWith(name) && p.length > name.length ? p.slice(name.length) : p;
}
