// The rows of the leaf table, as data (no DOM): the leaves as a tree of their paths (a group per
// path prefix, chains of single children merged: "['opt_state'][0]"), in tree order or by bytes
// per device, groups folding, filtered by a substring of the path. Pure, so that 10,000 leaves
// are arranged once per change and the table draws only the rows in sight.
import type { TreeWire } from "../wire";

export type SortBy = "tree" | "bytes";

export type Row =
  | { kind: "group"; id: string; name: string; depth: number; count: number; bytes: number; open: boolean }
  | { kind: "leaf"; leaf: number; name: string; depth: number };

export interface RowOptions {
  sort: SortBy;
  /** Groups folded away (their ids: the path prefix they stand for). */
  closed: ReadonlySet<string>;
  /** Only leaves whose path contains this (case-insensitive); "" for all. */
  filter: string;
}

/** Whether leaf i is replicated on every device and large: the most common sharding mistake
 *  (a leaf with copies, P('model', None) on 4 × 2, is split too: not flagged). */
export function isLargeReplicated(t: TreeWire, i: number, largeBytes: number): boolean {
  return t.everywhere[i] && t.replication[i] > 1 && t.bytes[i] >= largeBytes && t.bytes[i] > 0;
}

/** The keys of a path as jax.tree_util.keystr writes them: "['a']", "[0]", ".attr". */
export function segments(path: string): string[] {
  return path.match(/\[(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\]]*)\]|\.[^.[]+/g) ?? [path];
}

interface Node {
  id: string;
  name: string;
  children: Map<string, Node>;
  leaves: number[];
  /** The smallest leaf index under it (tree order). */
  first: number;
  bytes: number;
  count: number;
}

function node(id: string, name: string): Node {
  return { id, name, children: new Map(), leaves: [], first: Infinity, bytes: 0, count: 0 };
}

/** A leaf's own name: its last key (with the one before it for an NNX `.value`). */
function leafSplit(segs: string[]): number {
  const last = segs.length - 1;
  return last > 0 && segs[last] === ".value" ? last - 1 : last;
}

function build(t: TreeWire, needle: string): Node {
  const root = node("", "");
  for (let i = 0; i < t.paths.length; i++) {
    if (needle && !t.paths[i].toLowerCase().includes(needle)) continue;
    const segs = segments(t.paths[i]);
    const cut = leafSplit(segs);
    let at = root;
    const visit = (n: Node) => {
      n.first = Math.min(n.first, i);
      n.bytes += t.bytes[i];
      n.count += 1;
    };
    visit(at);
    for (let k = 0; k < cut; k++) {
      const id = at.id + segs[k];
      let next = at.children.get(segs[k]);
      if (!next) at.children.set(segs[k], (next = node(id, segs[k])));
      at = next;
      visit(at);
    }
    at.leaves.push(i);
  }
  return root;
}

/** Merge chains of single children with no leaves of their own ("['opt_state']" + "[0]"). */
function merged(n: Node): Node {
  let m = n;
  while (m.leaves.length === 0 && m.children.size === 1) {
    const only = [...m.children.values()][0];
    m = { ...only, name: m.name + only.name };
  }
  return m;
}

/** The rows to draw: a group row per path prefix (after its parent), then its leaves and
 *  subgroups, in tree order or largest first. */
export function buildRows(t: TreeWire, opts: RowOptions): Row[] {
  const root = build(t, opts.filter.trim().toLowerCase());
  const rows: Row[] = [];
  const walk = (n: Node, depth: number) => {
    type Item = { first: number; bytes: number; group?: Node; leaf?: number };
    const items: Item[] = [
      ...[...n.children.values()].map((c) => ({ first: c.first, bytes: c.bytes, group: merged(c) })),
      ...n.leaves.map((i) => ({ first: i, bytes: t.bytes[i], leaf: i })),
    ];
    items.sort(opts.sort === "bytes" ? (a, b) => b.bytes - a.bytes || a.first - b.first : (a, b) => a.first - b.first);
    for (const it of items) {
      if (it.leaf !== undefined) {
        const segs = segments(t.paths[it.leaf]);
        rows.push({ kind: "leaf", leaf: it.leaf, name: segs.slice(leafSplit(segs)).join(""), depth });
        continue;
      }
      const g = it.group!;
      const open = !opts.closed.has(g.id);
      rows.push({ kind: "group", id: g.id, name: g.name, depth, count: g.count, bytes: g.bytes, open });
      if (open) walk(g, depth + 1);
    }
  };
  walk(root, 0);
  return rows;
}

/** Text cut in the middle to at most `max` characters ("['opt_state'][0]…['kernel'].value"):
 *  a path's end names the leaf, its start the group, both matter. */
export function elide(text: string, max: number): string {
  if (text.length <= max) return text;
  const tail = Math.ceil((max - 1) * 0.6);
  return `${text.slice(0, max - 1 - tail)}…${text.slice(text.length - tail)}`;
}
