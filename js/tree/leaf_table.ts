// The leaf table: every array leaf grouped by its top-level group, with shape, dtype, spec and
// bytes per device; sortable by bytes, groups fold, a filter box. Virtualised: only the rows in
// sight (and a few around them) are in the DOM, so 10,000 leaves scroll without stalling.
import type { TreeWire } from "../wire";
import { formatBytes, plural } from "../shared/text";
import { el as mk } from "../shared/dom";
import { buildRows, elide, isLargeReplicated, type Row, type SortBy } from "./rows";

export const ROW_PX = 22;
/** What "∅" after a type means (the count line says it, the cell's tooltip too). */
const ABSTRACT_WORDS = "= no data (a ShapeDtypeStruct)";
const ABSTRACT_TIP =
  "∅: a jax.ShapeDtypeStruct leaf: a shape and dtype, no data; it is laid out like an array, " +
  "but has no statistics or heatmap";
/** Characters of a path shown in its column (cut in the middle; the tooltip has it whole). */
const PATH_CHARS = 40;
/** Indent of each level of the path tree. */
const INDENT_PX = 14;
const OVERSCAN = 12;
const VIEW_ROWS = 16;

export interface TableInput {
  tree: TreeWire;
  selected: number;
  largeBytes: number;
}

export class LeafTable {
  readonly el: HTMLElement;
  private bar: HTMLElement;
  private sortButton: HTMLButtonElement;
  private filterBox: HTMLInputElement;
  private countEl: HTMLElement;
  private scroller: HTMLElement;
  private spacer: HTMLElement;
  private body: HTMLElement;
  private rows: Row[] = [];
  private sort: SortBy = "tree";
  private closed = new Set<string>();
  private filter = "";
  private inp: TableInput | null = null;
  private drawn = "";
  private pathChars = PATH_CHARS;
  private headPath: HTMLElement | null = null;

  constructor(
    private readonly doc: Document,
    private readonly onSelect: (leaf: number) => void,
  ) {
    this.el = mk(doc, "section", "sw-tree-table");
    this.el.setAttribute("aria-label", "array leaves");
    this.bar = mk(doc, "div", "sw-tree-bar");
    this.sortButton = mk(doc, "button", "sw-button sw-tree-sort");
    this.sortButton.type = "button";
    this.sortButton.dataset.key = "tree-sort";
    this.sortButton.addEventListener("click", () => {
      this.sort = this.sort === "tree" ? "bytes" : "tree";
      this.rebuild();
    });
    this.filterBox = mk(doc, "input", "sw-tree-filter");
    this.filterBox.type = "search";
    this.filterBox.placeholder = "filter paths";
    this.filterBox.setAttribute("aria-label", "filter leaves by path");
    this.filterBox.addEventListener("input", () => {
      this.filter = this.filterBox.value;
      this.rebuild();
    });
    this.countEl = mk(doc, "span", "sw-tree-count");
    this.bar.append(this.sortButton, this.filterBox, this.countEl);
    const head = mk(doc, "div", "sw-tree-row sw-tree-headrow");
    for (const [cls, text] of [
      ["sw-tree-path", "path"],
      ["sw-tree-type", "type"],
      ["sw-tree-spec", "spec"],
      ["sw-tree-bytes", "per device"],
    ]) head.append(mk(doc, "span", cls, text));
    this.headPath = head.firstElementChild as HTMLElement;
    this.scroller = mk(doc, "div", "sw-tree-scroll");
    this.scroller.tabIndex = 0;
    this.scroller.setAttribute("role", "listbox");
    this.scroller.setAttribute("aria-label", "leaves: arrow keys move the selection");
    this.spacer = mk(doc, "div", "sw-tree-spacer");
    this.body = mk(doc, "div", "sw-tree-body");
    this.spacer.append(this.body);
    this.scroller.append(this.spacer);
    this.scroller.style.maxHeight = `${VIEW_ROWS * ROW_PX}px`;
    this.scroller.addEventListener("scroll", () => this.draw());
    this.scroller.addEventListener("keydown", (e) => this.key(e));
    this.el.append(this.bar, head, this.scroller);
  }

  /** The rows built now (tests). */
  get currentRows(): readonly Row[] {
    return this.rows;
  }

  render(inp: TableInput): void {
    const rebuild = !this.inp || this.inp.tree !== inp.tree || this.inp.largeBytes !== inp.largeBytes;
    this.inp = inp;
    if (rebuild) this.rebuild();
    else this.draw(true);
  }

  private rebuild(): void {
    if (!this.inp) return;
    const t = this.inp.tree;
    this.rows = buildRows(t, { sort: this.sort, closed: this.closed, filter: this.filter });
    this.sortButton.textContent = this.sort === "bytes" ? "sorted by bytes ↓" : "tree order";
    this.sortButton.title = this.sort === "bytes" ? "show in tree order" : "sort by bytes per device";
    const leaves = this.rows.filter((r) => r.kind === "leaf").length;
    this.countEl.textContent = `${leaves.toLocaleString()} of ${t.paths.length.toLocaleString()} leaves`;
    if (t.abstract.some(Boolean)) {
      this.countEl.textContent += ` · ∅ ${ABSTRACT_WORDS}`;
      this.countEl.title = ABSTRACT_TIP;
    }
    this.sizeColumns(t);
    this.spacer.style.height = `${this.rows.length * ROW_PX}px`;
    this.draw(true);
  }

  /** Type and spec columns as wide as their longest text (12 px monospace: ~7.3 px a char). */
  private sizeColumns(t: TreeWire): void {
    let type = 4;
    let spec = 10;
    for (let i = 0; i < t.paths.length; i++) {
      type = Math.max(type, t.dtypes[i].length + t.shapes[i].join(",").length + 2 + (t.abstract[i] ? 2 : 0));
      spec = Math.max(spec, (t.specs[i] || "one device").length);
    }
    const px = (chars: number) => `${Math.ceil(Math.min(chars, 48) * 7.3) + 8}px`;
    this.el.style.setProperty("--sw-type-w", px(type));
    this.el.style.setProperty("--sw-spec-w", px(spec));
  }

  /** Draw the rows in sight. */
  private draw(force = false): void {
    if (!this.inp) return;
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_PX) - OVERSCAN);
    const last = Math.min(this.rows.length, first + VIEW_ROWS + 2 * OVERSCAN);
    const sig = `${first}:${last}:${this.inp.selected}`;
    if (!force && sig === this.drawn) return;
    this.drawn = sig;
    // As many characters of a path as its column holds (12 px monospace: ~7.3 px each).
    const w = this.headPath?.clientWidth ?? 0;
    this.pathChars = w > 0 ? Math.max(12, Math.floor(w / 7.3)) : PATH_CHARS;
    const nodes: HTMLElement[] = [];
    for (let r = first; r < last; r++) nodes.push(this.rowEl(this.rows[r], r));
    this.body.style.transform = `translateY(${first * ROW_PX}px)`;
    this.body.replaceChildren(...nodes);
  }

  private rowEl(row: Row, r: number): HTMLElement {
    const doc = this.doc;
    const t = this.inp!.tree;
    const e = mk(doc, "div", "sw-tree-row");
    e.dataset.row = String(r);
    const indent = `${6 + row.depth * INDENT_PX}px`;
    if (row.kind === "group") {
      e.classList.add("sw-tree-group");
      e.dataset.group = row.id;
      e.setAttribute("aria-expanded", String(row.open));
      const p = mk(doc, "span", "sw-tree-path", `${row.open ? "▾" : "▸"} ${elide(row.name, this.pathChars - 2 * row.depth)}`);
      p.style.paddingLeft = indent;
      p.title = `${row.id} (click to ${row.open ? "fold" : "unfold"})`;
      const n = plural(row.count, "leaf", "leaves").replace(String(row.count), row.count.toLocaleString());
      e.append(p, mk(doc, "span", "sw-tree-type", n));
      const total = mk(doc, "span", "sw-tree-bytes", formatBytes(row.bytes));
      total.title = "its leaves' bytes per holder, summed: what one device holding a piece of each keeps";
      e.append(mk(doc, "span", "sw-tree-spec"), total);
      e.addEventListener("click", () => {
        if (this.closed.has(row.id)) this.closed.delete(row.id);
        else this.closed.add(row.id);
        this.rebuild();
      });
      return e;
    }
    const i = row.leaf;
    e.dataset.leaf = String(i);
    e.setAttribute("role", "option");
    const sel = i === this.inp!.selected;
    e.setAttribute("aria-selected", String(sel));
    if (sel) e.classList.add("sw-tree-selected");
    const large = isLargeReplicated(t, i, this.inp!.largeBytes);
    if (large) {
      e.classList.add("sw-tree-large");
      e.title = `replicated on ${t.replication[i]} devices and ${formatBytes(t.bytes[i])} on each: shard it`;
    }
    // Logical axis names (flax metadata) after the name, in grey: what each dimension is.
    const names = t.names[i] ? ` (${t.names[i]})` : "";
    const room = this.pathChars - 2 * row.depth;
    // The leaf's own name first; the names after it give way (cut by the column) when short.
    const path = mk(doc, "span", "sw-tree-path", elide(row.name, Math.max(8, room)));
    if (names) path.append(mk(doc, "span", "sw-tree-names", names));
    path.style.paddingLeft = indent;
    path.title = t.paths[i] + (t.names[i] ? ` · logical axes (${t.names[i]})` : "");
    const type = `${t.dtypes[i]}[${t.shapes[i].join(",")}]`;
    const spec = mk(doc, "span", "sw-tree-spec", t.specs[i] || "one device");
    if (t.sources[i]) spec.classList.add("sw-tree-ruled");
    const bytes = mk(doc, "span", "sw-tree-bytes", formatBytes(t.bytes[i]));
    if (t.replication[i] > 1) bytes.append(mk(doc, "span", "sw-tree-rep", ` ×${t.replication[i]}`));
    const typeEl = mk(doc, "span", "sw-tree-type", type + (t.abstract[i] ? " ∅" : ""));
    if (t.abstract[i]) typeEl.title = ABSTRACT_TIP;
    spec.title = `${t.specs[i] || "one device"}${t.sources[i] ? ` · set by ${t.sources[i]}` : ""}`;
    e.append(path, typeEl, spec, bytes);
    e.addEventListener("click", () => this.onSelect(i));
    return e;
  }

  /** Arrow keys move the selection through the leaf rows shown; the row scrolls into sight. */
  private key(e: KeyboardEvent): void {
    if (!this.inp || (e.key !== "ArrowDown" && e.key !== "ArrowUp")) return;
    e.preventDefault();
    const at = this.rows.findIndex((r) => r.kind === "leaf" && r.leaf === this.inp!.selected);
    const step = e.key === "ArrowDown" ? 1 : -1;
    for (let r = at + step; r >= 0 && r < this.rows.length; r += step) {
      const row = this.rows[r];
      if (row.kind !== "leaf") continue;
      this.reveal(r);
      this.onSelect(row.leaf);
      return;
    }
  }

  /** Scroll row r into sight. */
  reveal(r: number): void {
    const top = r * ROW_PX;
    const h = this.scroller.clientHeight || VIEW_ROWS * ROW_PX;
    if (top < this.scroller.scrollTop) this.scroller.scrollTop = top;
    else if (top + ROW_PX > this.scroller.scrollTop + h) this.scroller.scrollTop = top + ROW_PX - h;
  }
}
