// The function view's leaves as a compact table (a training step's parameters, optimizer state,
// batch, loss…): one row per input and output leaf with its path, type, spec, bytes per device
// and the collectives of its shape; a click picks the leaf whose card (controls and the one
// device grid, with the mesh) the view draws under it. Small functions keep a card per leaf.
import type { Collective, LeafInfo, TraceLeaf, TraceState } from "../wire";
import { el as mk, tableHead } from "../shared/dom";
import { formatBytes, plural } from "../shared/text";
import { specString } from "../shared/spec";

/** A leaf of the table: which side, its index there. */
export interface LeafRef {
  side: "in" | "out";
  index: number;
}

export interface LeafTableInput {
  side: "in" | "out";
  infos: LeafInfo[];
  /** The compiled leaves (the last good trace), [] before any compile. */
  leaves: TraceLeaf[];
  collectives: Collective[];
  /** What the controls show: an input's spec as asked (before its compile answers). */
  state: TraceState;
  selected: LeafRef;
}

/** HLO's short dtype ("f32", "bf16", "s32", "pred") of a numpy / JAX dtype name. */
export function hloDtype(dtype: string): string {
  if (dtype === "bool") return "pred";
  if (dtype === "bfloat16") return "bf16";
  const m = /^(float|int|uint|complex)(\d+)/.exec(dtype);
  if (!m) return dtype;
  return { float: "f", int: "s", uint: "u", complex: "c" }[m[1]]! + m[2];
}

function sameShape(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The collectives whose result per device has this leaf's dtype and its whole or local shape
 *  (an all-gather of a weight, the all-reduce or reduce-scatter of its gradient). A match of
 *  shape, not a proof: HLO does not name the leaves (their indices into `cs`). Scalars match
 *  only scalars of their dtype. */
export function leafCollectives(leaf: TraceLeaf, cs: Collective[]): number[] {
  const dt = hloDtype(leaf.dtype);
  const out: number[] = [];
  cs.forEach((c, i) => {
    if (c.dtype !== dt && c.dtype !== leaf.dtype) return;
    if (sameShape(c.shape, leaf.shape) || sameShape(c.shape, leaf.local_shape)) out.push(i);
  });
  return out;
}

/** "all-gather ×2 · all-reduce": the kinds of these collectives, counted. */
export function collectiveWords(cs: Collective[], idx: number[]): string {
  const count = new Map<string, number>();
  for (const i of idx) count.set(cs[i].kind, (count.get(cs[i].kind) ?? 0) + 1);
  return [...count].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(" · ");
}

const HEADS = ["path", "type", "spec", "per device", "collectives"];

/** One side's table; rows call `onPick` with their leaf. */
export function renderLeafTable(doc: Document, inp: LeafTableInput, onPick: (r: LeafRef) => void): HTMLElement {
  const t = mk(doc, "table", "sw-tr-table sw-tr-leaves");
  t.dataset.side = inp.side;
  t.append(mk(doc, "caption", "sw-visually-hidden", inp.side === "in" ? "input leaves" : "output leaves"));
  const head = tableHead(doc, HEADS);
  head.querySelectorAll("th")[4]?.setAttribute(
    "title",
    "collectives of this leaf's shape: their result per device has its dtype and its whole " +
      "or local shape (a match of shape: HLO does not name the leaves)",
  );
  const body = mk(doc, "tbody");
  inp.infos.forEach((info, i) => body.append(row(doc, inp, info, i, onPick)));
  t.append(head, body);
  return t;
}

function row(doc: Document, inp: LeafTableInput, info: LeafInfo, i: number, onPick: (r: LeafRef) => void): HTMLElement {
  const leaf = inp.leaves[i] ?? null;
  const tr = mk(doc, "tr", "sw-tr-leafrow");
  tr.dataset.side = inp.side;
  tr.dataset.index = String(i);
  tr.tabIndex = 0;
  const sel = inp.selected.side === inp.side && inp.selected.index === i;
  tr.setAttribute("aria-selected", String(sel));
  if (sel) tr.classList.add("sw-tr-leafrow-selected");
  const path = mk(doc, "td", "sw-tr-leafpath");
  // A narrow table breaks a path between its keys ("params['layers'][0]" | "['down']").
  info.path.split(/(?=\[)/).forEach((part, k) => {
    if (k) path.append(doc.createElement("wbr"));
    path.append(part);
  });
  path.title = `${inp.side === "in" ? "input" : "output"} ${info.path} (click: its device grid below)`;
  const type = mk(doc, "td", "sw-tr-leaftype", `${info.dtype}[${info.shape.join(",")}]`);
  const asked = inp.side === "in" ? inp.state.in_specs[i] : undefined;
  const specText = asked ? specString(Array.from({ length: info.shape.length }, (_, d) => asked[d] ?? null)) : leaf?.spec_str ?? "";
  const spec = mk(doc, "td", "sw-tr-leafspec", specText || "—");
  const bytes = mk(doc, "td", "sw-tr-leafbytes", leaf ? formatBytes(leaf.layout.bytes_per_device) : "");
  if (leaf && leaf.layout.replication > 1) {
    bytes.append(mk(doc, "span", "sw-tree-rep", ` ×${leaf.layout.replication}`));
    bytes.title = `each element on ${plural(leaf.layout.replication, "device")}`;
  }
  const idx = leaf ? leafCollectives(leaf, inp.collectives) : [];
  const coll = mk(doc, "td", "sw-tr-leafcoll", idx.length ? collectiveWords(inp.collectives, idx) : leaf ? "—" : "");
  if (idx.length)
    coll.title = idx
      .map((k) => `${inp.collectives[k].kind} over ${inp.collectives[k].axes.join(", ") || "—"}: ${inp.collectives[k].op_name || "?"}`)
      .join("\n");
  tr.append(path, type, spec, bytes, coll);
  const pick = () => onPick({ side: inp.side, index: i });
  tr.addEventListener("click", pick);
  tr.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      pick();
    }
  });
  return tr;
}
