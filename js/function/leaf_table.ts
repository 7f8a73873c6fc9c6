// The function view's leaves as a compact table (a training step's parameters, optimizer state,
// batch, loss…): one row per input and output leaf with its path, type, spec, bytes per device
// and the collectives it touches (by dataflow, from the kernel); a click picks the leaf whose card (controls and the one
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

/** The collectives (indices into `cs`) this leaf flows into (an input) or out of (an output),
 *  as the kernel found them by dataflow through the compiled program; null where the kernel
 *  could not tell for some collective (never guessed by shape). */
export function leafCollectives(side: "in" | "out", index: number, cs: Collective[]): number[] | null {
  const out: number[] = [];
  for (const [i, c] of cs.entries()) {
    const touched = side === "in" ? c.in_leaves : c.out_leaves;
    if (touched == null) return null;
    if (touched.includes(index)) out.push(i);
  }
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
    "the collectives this leaf flows into (an input) or out of (an output), followed through " +
      "the compiled program's parameters and the ops between them",
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
  const found = leaf ? leafCollectives(inp.side, i, inp.collectives) : [];
  const idx = found ?? [];
  const words = found === null ? "?" : idx.length ? collectiveWords(inp.collectives, idx) : leaf ? "—" : "";
  const coll = mk(doc, "td", "sw-tr-leafcoll", words);
  if (found === null) coll.title = inp.collectives.find((c) => c.leaves_note)?.leaves_note || "not told";
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
