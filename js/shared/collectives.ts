// What XLA did with a layout, as tables: the collectives it inserted, the sharding constraints
// the function pins, and the memory and flops of one device.
import type { Collective, CollectiveKind, Constraint, Memory } from "../wire";
import { formatBytes, formatCount, plural } from "./text";
import { el, tableHead } from "./dom";

/** What each collective does, in words (tooltips; a student's first question). */
const KIND_INFO: Record<CollectiveKind, string> = {
  "all-reduce": "every device of a group ends with the sum (or max, …) of the group's values",
  "all-gather": "every device of a group ends with all of the group's pieces, put together",
  "reduce-scatter": "the group's values are summed and each device keeps one piece of the sum",
  "all-to-all": "each device sends a different piece to every other device of its group",
  "collective-permute": "each device sends its data to one other device (a shift along an axis)",
};

export const NO_COLLECTIVES = "No collectives: every device computes its part alone";

/** "x", "x, y", or "—" when the groups match no mesh axes. */
export function axesLabel(axes: string[]): string {
  return axes.length ? axes.join(", ") : "—";
}

/** "f32[16]", "f32[4,8]", "f32[]". */
function shapeText(dtype: string, shape: number[]): string {
  return `${dtype}[${shape.join(",")}]`;
}

/** "2 devices × 4 groups"; a collective-permute: "4 pairs". */
export function groupsLabel(c: Collective): string {
  if (c.kind === "collective-permute") return plural(c.n_groups, "pair");
  return `${plural(c.group_size, "device")} × ${plural(c.n_groups, "group")}`;
}

/** Where it comes from: the jax op, then the source line. */
function causeLabel(c: { op_name: string; source: string }): string {
  // the line first: it stays in sight when a long op name is cut to the cell's two lines
  return [c.source, c.op_name].filter(Boolean).join(" · ") || "—";
}

function totalBytes(cs: Collective[]): number {
  return cs.reduce((a, c) => a + c.bytes, 0);
}

/** "2 collectives · 256 B sent per device" / "no collectives". */
export function collectivesSummary(cs: Collective[]): string {
  if (cs.length === 0) return "no collectives";
  return `${plural(cs.length, "collective")} · ${formatBytes(totalBytes(cs))} sent per device`;
}

function table(doc: Document, cls: string, caption: string, heads: string[]): {
  table: HTMLTableElement;
  body: HTMLTableSectionElement;
} {
  const t = el(doc, "table", `sw-tr-table ${cls}`);
  const cap = el(doc, "caption", "sw-visually-hidden", caption);
  const thead = tableHead(doc, heads);
  const body = el(doc, "tbody");
  t.append(cap, thead, body);
  return { table: t, body };
}

/** The collectives table (or the empty state, which matters: it says the layout needs no
 *  communication at all). `hover`: a row is pointed at (its index) or left (null), so that the
 *  caller can light its device groups. */
export function renderCollectives(
  doc: Document,
  cs: Collective[],
  hover?: (index: number | null) => void,
  why?: (index: number) => void,
): HTMLElement {
  const wrap = el(doc, "div", "sw-tr-collectives");
  if (cs.length === 0) {
    const p = el(doc, "p", "sw-tr-empty-coll", NO_COLLECTIVES);
    p.setAttribute("role", "status");
    wrap.append(p);
    return wrap;
  }
  const { table: t, body } = table(doc, "sw-tr-coll-table", "collectives XLA inserted", [
    "collective",
    ...(why ? ["why"] : []),
    "over axes",
    "result per device",
    "sent per device",
    "groups",
    "caused by",
  ]);
  cs.forEach((c, i) => {
    const tr = el(doc, "tr", "sw-tr-coll-row");
    tr.dataset.kind = c.kind;
    tr.dataset.index = String(i);
    if (hover) {
      tr.addEventListener("mouseenter", () => hover(i));
      tr.addEventListener("focus", () => hover(i));
      tr.addEventListener("mouseleave", () => hover(null));
      tr.addEventListener("blur", () => hover(null));
    }
    tr.tabIndex = 0;
    const what = KIND_INFO[c.kind] ?? "";
    tr.title = [`${c.kind}: ${what}`, c.groups_text ? `groups: ${c.groups_text}` : ""]
      .filter(Boolean)
      .join("\n");
    const kindTd = el(doc, "td");
    const tag = el(doc, "span", `sw-tr-kind sw-tr-kind-${c.kind}`, c.kind);
    kindTd.append(tag);
    const axesTd = el(doc, "td", "sw-tr-mono sw-tr-axes", axesLabel(c.axes));
    if (c.axes.length === 0) axesTd.title = "the device groups match no mesh axes";
    tr.append(kindTd);
    if (why) tr.append(whyCell(doc, () => why(i)));
    tr.append(
      axesTd,
      el(doc, "td", "sw-tr-mono", carried(c)),
      el(doc, "td", "sw-tr-num", formatBytes(c.bytes)),
      el(doc, "td", "", groupsLabel(c)),
      causeCell(doc, causeLabel(c)),
    );
    body.append(tr);
  });
  const sc = el(doc, "div", "sw-tr-scroll");
  sc.append(t);
  wrap.append(sc);
  return wrap;
}

/** The "caused by" cell: JAX's op name and line, at most two lines shown (a fusion's name lists
 *  every op in it and made one row taller than the table's scroll box); the whole in its title. */
function causeCell(doc: Document, text: string): HTMLTableCellElement {
  const td = el(doc, "td", "sw-tr-mono sw-tr-cause");
  td.append(el(doc, "span", "sw-tr-clamp", text));
  td.title = text;
  return td;
}

/** What a collective carries per device: "f32[64]", or every element of a combined one
 *  "(f32[], f32[64], f32[64,64])". */
export function carried(c: Collective): string {
  const es = c.elements ?? [];
  if (es.length <= 1) return shapeText(c.dtype, c.shape);
  return `(${es.map((e) => shapeText(e.dtype, e.shape)).join(", ")})`;
}

/** The "why" column's cell: a button that asks why this collective is there (js/function/why.ts). */
function whyCell(doc: Document, ask: () => void): HTMLTableCellElement {
  const b = el(doc, "button", "sw-tr-why", "why?");
  b.type = "button";
  b.title = "which input, constraint or output shardings met here, and how to remove it";
  b.addEventListener("click", ask);
  const td = el(doc, "td", "sw-tr-whycell");
  td.append(b);
  return td;
}

/** The intermediates the function pins with with_sharding_constraint / reshard. */
export function renderConstraints(doc: Document, cs: Constraint[]): HTMLElement {
  const { table: t, body } = table(doc, "sw-tr-cons-table", "sharding constraints in the function", [
    "constraint",
    "value",
    "sharding",
    "where",
  ]);
  for (const c of cs) {
    const tr = el(doc, "tr");
    tr.append(
      el(doc, "td", "sw-tr-mono", c.kind),
      el(doc, "td", "sw-tr-mono", shapeText(c.dtype, c.shape)),
      el(doc, "td", "sw-tr-mono", c.spec_str || "—"),
      el(doc, "td", "sw-tr-mono sw-tr-cause", c.source || "—"),
    );
    body.append(tr);
  }
  const sc = el(doc, "div", "sw-tr-scroll");
  sc.append(t);
  return sc;
}

const MEMORY_ROWS: [keyof Memory, string, string][] = [
  ["argument", "arguments", "the inputs' shards"],
  ["output", "outputs", "the outputs' shards"],
  ["temp", "temporaries", "scratch space XLA needs while it runs"],
  ["alias", "aliased", "output buffers that reuse an argument's (subtracted from the total)"],
  // not "peak": the compiler's own peak (what is live at once) is the memory panel's, and is
  // at most this sum
  ["peak", "total", "arguments + outputs − aliased + temporaries: at most this is live at once (the peak, from the compiler's own report, is in the memory panel)"],
];

/** Memory of one device as bars (relative to the peak), plus flops. */
export function renderMemory(doc: Document, m: Memory | null, flops: number | null): HTMLElement {
  const wrap = el(doc, "div", "sw-tr-memory");
  if (m) {
    const top = Math.max(1, m.peak, m.argument, m.output, m.temp);
    const grid = el(doc, "div", "sw-tr-membars");
    grid.setAttribute("role", "table");
    grid.setAttribute("aria-label", "memory per device");
    for (const [k, label, why] of MEMORY_ROWS) {
      const v = m[k] ?? 0;
      if (k === "alias" && v === 0) continue;
      const row = el(doc, "div", `sw-tr-memrow${k === "peak" ? " sw-tr-peak" : ""}`);
      row.setAttribute("role", "row");
      row.title = why;
      const name = el(doc, "span", "sw-tr-memname", label);
      name.setAttribute("role", "rowheader");
      const barCell = el(doc, "span", "sw-tr-membar");
      barCell.setAttribute("role", "cell");
      const bar = el(doc, "span", `sw-tr-memfill sw-tr-mem-${k}`);
      bar.style.width = `${Math.max(v > 0 ? 1 : 0, Math.round((100 * v) / top))}%`;
      barCell.append(bar);
      const val = el(doc, "span", "sw-tr-memval", formatBytes(v));
      val.setAttribute("role", "cell");
      row.append(name, barCell, val);
      grid.append(row);
    }
    wrap.append(grid);
  } else {
    wrap.append(el(doc, "p", "sw-muted", "XLA gives no memory analysis for this function."));
  }
  const f = el(doc, "p", "sw-tr-flops");
  f.textContent =
    flops === null ? "flops: not reported by XLA" : `${formatCount(flops, "FLOP")} per device`;
  if (flops !== null) f.title = `${flops} floating-point operations per device (XLA cost analysis)`;
  wrap.append(f);
  return wrap;
}
