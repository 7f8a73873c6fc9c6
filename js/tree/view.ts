// The tree view, ShardView(tree): a whole model's layout. Header (leaves, mesh, the fullest
// device), memory per device by top-level group with a hardware preset's HBM line, the rules
// editor, the leaf table (grouped, sortable, virtualised), and the selected leaf's device grid
// (the array view's own, embedded). Wire format: wire/tree.ts.
import type { AnyModel } from "@anywidget/types";
import type { TreeModel, TreeRequestMsg, TreeState, TreeWire } from "../wire";
import { BaseView, published } from "../shared/view";
import { ArrayView } from "../array/view";
import { LeafModel } from "../shared/leaf_model";
import { injectFunctionStyles } from "../shared/trace_styles";
import { CopyButton } from "../shared/copy";
import { historyButtons } from "../shared/history";
import { el as mk } from "../shared/dom";
import { meshShapeChoices, rebuildKeepingFocus, selectField } from "../shared/fields";
import { formatBytes, plural } from "../shared/text";
import { injectTreeStyles } from "./styles";
import { MemoryChart } from "./memory_chart";
import { LeafTable } from "./leaf_table";
import { RulesEditor } from "./rules_editor";
import { isLargeReplicated } from "./rows";
import { SearchPanel } from "../search/panel";

/** A clicked leaf's grid that has not come after this long is said to be on its way (or, in a
 *  saved page, missing from it). */
const WAIT_WORDS_MS = 400;

function cloneState(s: TreeState): TreeState {
  return {
    mesh_shape: [...s.mesh_shape],
    axis_names: [...s.axis_names],
    axis_types: [...s.axis_types],
    rules_text: s.rules_text,
  };
}

/** The largest replicated leaves over the threshold, largest first. */
export function largeReplicated(t: TreeWire, largeBytes: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < t.paths.length; i++) if (isLargeReplicated(t, i, largeBytes)) out.push(i);
  return out.sort((a, b) => t.bytes[b] - t.bytes[a]);
}

export class TreeView extends BaseView<TreeModel, TreeState, TreeRequestMsg> {
  private titleEl: HTMLElement;
  private badgeEl: HTMLElement;
  private summaryEl: HTMLElement;
  private warnEl: HTMLElement;
  private notesEl: HTMLElement;
  private meshEl: HTMLElement;
  private meshKey = "";
  private busyEl: HTMLElement;
  private historyEl: HTMLElement;
  private copyButton: CopyButton;
  private chart: MemoryChart;
  private editor: RulesEditor;
  private table: LeafTable;
  private leafHead: HTMLElement;
  private gridHost: HTMLElement;
  private staticEl: HTMLElement;
  private search: SearchPanel;
  private searchEl: HTMLElement;
  private leafModel: LeafModel | null = null;
  private leafView: ArrayView | null = null;
  /** The leaf whose grid is drawn: `selected` when its `_layout` arrived (the kernel sets both
   *  at once); a click shows at once in the table, and here once the kernel answers. */
  private shownLeaf = -1;
  private shownKey = -1;
  /** When the last leaf click was made (its grid is said to be on its way only after
   *  WAIT_WORDS_MS: a kernel's usual answer never flashes words). */
  private askedAt = 0;
  private waitTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(model: AnyModel<TreeModel>, el: HTMLElement) {
    super(model, el, "sw-tree", {
      clone: cloneState,
      build: (seq, state) => ({ type: "tree_request", seq, state }),
    });
    injectFunctionStyles(el);
    injectTreeStyles(el);
    const doc = this.doc;
    const header = mk(doc, "header", "sw-header");
    const top = mk(doc, "div", "sw-header-top");
    const left = mk(doc, "div", "sw-header-left sw-tree-title");
    this.titleEl = mk(doc, "span", "sw-typeof");
    this.badgeEl = mk(doc, "span", "sw-planned-badge");
    this.badgeEl.hidden = true;
    left.append(this.titleEl, this.badgeEl);
    this.busyEl = mk(doc, "span", "sw-busy");
    this.busyEl.setAttribute("role", "status");
    this.busyEl.append(mk(doc, "span", "shardwidget-spinner"), doc.createTextNode("laying out…"));
    this.busyEl.hidden = true;
    this.historyEl = mk(doc, "span", "sw-tree-history");
    this.copyButton = new CopyButton(doc);
    const right = mk(doc, "div", "sw-header-right");
    right.append(this.busyEl, this.historyEl, this.copyButton.el, this.picture.el);
    top.append(left, right);
    this.summaryEl = mk(doc, "div", "sw-summary");
    this.warnEl = mk(doc, "div", "sw-note sw-tree-warn");
    this.notesEl = mk(doc, "ul", "sw-note sw-tree-notes");
    this.notesEl.setAttribute("aria-label", "notes on the rules");
    this.meshEl = mk(doc, "div", "sw-tree-meshbar");
    header.append(top, this.summaryEl, this.meshEl, this.warnEl, this.notesEl);

    this.chart = new MemoryChart(doc, (name) => {
      this.model.set("hardware", name);
      this.model.save_changes();
    });
    this.editor = new RulesEditor(doc, (text) => this.request({ ...this.state(), rules_text: text }));
    this.table = new LeafTable(doc, (i) => this.select(i));
    const side = mk(doc, "div", "sw-tree-side");
    side.append(this.chart.el, this.editor.el);
    const grid = mk(doc, "div", "sw-tree-top");
    grid.append(side, this.table.el);
    this.leafHead = mk(doc, "div", "sw-tree-leafhead");
    this.gridHost = mk(doc, "div", "sw-tree-leafgrid");
    this.staticEl = mk(doc, "div", "sw-tree-static");
    // view.search(...)'s table: the function view's panel (a click applies a row's rules)
    this.search = new SearchPanel(doc, (msg) => this.model.send(msg));
    this.searchEl = mk(doc, "section", "sw-tr-section sw-tree-search");
    this.searchEl.append(mk(doc, "h3", "sw-tr-h", "Find a layout"), this.search.el);
    this.searchEl.hidden = true;
    this.root.append(header, grid, this.searchEl, this.leafHead, this.gridHost, this.staticEl);
    el.append(this.root);

    this.onChange(["_static", "_tree", "selected", "large_bytes", "hardware", "_hardware_presets", "rules_text", "error", "busy", "_history", "_search"], () =>
      this.schedule(),
    );
    this.onChange(["_layout", "_stats", "_options"], () => this.schedule());
    this.render();
  }

  /** The state the kernel shows now. */
  private state(): TreeState {
    const m = this.model;
    return cloneState({
      mesh_shape: m.get("mesh_shape"),
      axis_names: m.get("axis_names"),
      axis_types: m.get("axis_types"),
      rules_text: m.get("rules_text"),
    });
  }

  /** Show leaf i in the device grid (the kernel sends its layout and statistics). */
  select(i: number): void {
    if (i === this.model.get("selected")) return;
    // Shown at once; the kernel answers with the leaf's layout and statistics (a message, not
    // trait sync, so that a page standing in for the kernel hears it too).
    this.model.set("selected", i);
    this.askedAt = performance.now();
    clearTimeout(this.waitTimer);
    this.waitTimer = setTimeout(() => this.schedule(), WAIT_WORDS_MS + 10);
    this.model.send({ type: "tree_select", leaf: i });
    this.schedule();
  }

  /** The leaf table (tests). */
  get leafTable(): LeafTable {
    return this.table;
  }

  /** The rules editor (tests). */
  get rulesEditor(): RulesEditor {
    return this.editor;
  }

  protected requestsChanged(): void {
    this.schedule();
  }

  protected render(): void {
    const m = this.model;
    const t = published(m.get("_tree"));
    this.busyEl.hidden = !m.get("busy") && this.queue.optimistic === null;
    this.historyEl.replaceChildren(
      ...historyButtons(this.doc, m.get("_history"), (by) => this.model.send({ type: "history", step: by })),
    );
    const error = m.get("error") || this.lastResultError;
    this.editor.render(m.get("rules_text"), error);
    const page = m.get("_static");
    this.editor.textarea.readOnly = !!page;
    this.editor.textarea.title = page?.note ?? "";
    if (!t) {
      this.titleEl.textContent = "no tree yet";
      return;
    }
    this.renderHeader(t);
    this.copyButton.set(t.code);
    this.chart.render({
      memory: t.memory,
      groupNames: t.group_names,
      presets: m.get("_hardware_presets") ?? [],
      hardware: m.get("hardware"),
      meshDevices: (m.get("mesh_shape") ?? []).reduce((a, b) => a * b, 1),
    });
    this.table.render({ tree: t, selected: m.get("selected"), largeBytes: m.get("large_bytes") });
    this.renderLeaf(t);
    this.renderStatic(t);
    this.searchEl.hidden = !this.search.update(m.get("_search"), this.root, !!page);
  }

  private renderHeader(t: TreeWire): void {
    const totals = t.memory.ids.map((_, i) => t.memory.by_group.reduce((s, row) => s + row[i], 0));
    const most = Math.max(0, ...totals);
    const logical = t.logical_bytes.reduce((a, b) => a + b, 0);
    this.titleEl.textContent = `${plural(t.paths.length, "array leaf", "array leaves")} · mesh ${t.mesh}`;
    this.renderBadge(t);
    this.renderMeshShape();
    this.summaryEl.textContent =
      `${formatBytes(logical)} in all · the fullest device holds ${formatBytes(most)}` +
      (t.static.length ? ` · ${plural(t.static.length, "static leaf", "static leaves")}` : "");
    const notes = t.notes ?? [];
    this.notesEl.hidden = notes.length === 0;
    this.notesEl.replaceChildren(...notes.map((n) => mk(this.doc, "li", "", n)));
    const large = largeReplicated(t, this.model.get("large_bytes"));
    this.warnEl.hidden = large.length === 0;
    if (large.length) {
      const first = large[0];
      this.warnEl.textContent =
        `${plural(large.length, "large leaf", "large leaves")} replicated on every device` +
        ` (the largest: ${t.paths[first]}, ${formatBytes(t.bytes[first])} on each of ${t.replication[first]}): a rule can shard it`;
    }
  }

  /** A plan (mesh=AbstractMesh): what it is, and the preset its estimates and HBM line use. */
  private renderBadge(t: TreeWire): void {
    const planned = t.planned ?? "";
    this.badgeEl.hidden = !planned;
    if (!planned) return;
    const name = this.model.get("hardware");
    const hw = (this.model.get("_hardware_presets") ?? []).find((h) => h.name === name);
    const hbm = hw ? ` (HBM ${formatBytes(hw.hbm_bytes)})` : "";
    this.badgeEl.textContent = `${planned} · estimates for ${name}${hbm}`;
    this.badgeEl.title =
      "A plan: the mesh is a jax.sharding.AbstractMesh, device ids are its positions (row-major), " +
      "layouts come from the specs alone, no data and no device memory.";
  }

  /** The mesh-shape select: every factorization of the devices (a plan's N positions) with as
   *  many axes as now; a choice re-lays the tree out on that shape, the rules kept. */
  private renderMeshShape(): void {
    const options = this.model.get("_options");
    const shape = this.model.get("mesh_shape") ?? [];
    if (!options?.factorizations || !shape.length) return;
    const page = this.model.get("_static");
    const key = `${options.n_devices}:${shape.join(",")}:${this.model.get("axis_names").join(",")}:${!!page}`;
    if (key === this.meshKey) return;
    this.meshKey = key;
    const choices = meshShapeChoices(options, shape);
    const names = this.model.get("axis_names").join(", ");
    rebuildKeepingFocus(this.meshEl, () => [
      selectField(this.doc, "tree-mesh-shape", `mesh shape (${names})`, choices, shape.join(","), (v) =>
        this.request({ ...this.state(), mesh_shape: v.split(",").map(Number) }),
      ),
    ]);
    // A saved page cannot lay the tree out again: the select shows the saved shape, fixed.
    for (const sel of this.meshEl.querySelectorAll("select")) {
      sel.disabled = !!page;
      if (page) sel.title = page.note;
    }
    if (page) this.meshEl.append(mk(this.doc, "span", "sw-hint sw-tree-pagenote", ` ${page.note}`));
  }

  private renderLeaf(t: TreeWire): void {
    const layout = published(this.model.get("_layout"));
    if (layout && layout.key !== this.shownKey) {
      this.shownKey = layout.key;
      this.shownLeaf = this.model.get("selected");
    }
    const i = this.shownLeaf;
    if (i < 0 || i >= t.paths.length || !layout) {
      this.leafHead.textContent = "select a leaf to see its device grid";
      return;
    }
    const path = mk(this.doc, "code", "", t.paths[i]);
    const spec = mk(this.doc, "code", "", t.specs[i] || "one device");
    const names = t.names[i] ? mk(this.doc, "span", "sw-hint", `logical axes (${t.names[i]})`) : null;
    const asked = this.model.get("selected");
    const words = asked !== i && asked >= 0 && asked < t.paths.length ? this.waitingWords(t.paths[asked]) : "";
    const waiting = words ? mk(this.doc, "span", "sw-hint sw-tree-waiting", words) : null;
    this.leafHead.replaceChildren(path, spec, ...(names ? [names] : []), ...(waiting ? [waiting] : []));
    const stats = published(this.model.get("_stats"));
    const options = this.model.get("_options");
    if (!this.leafModel) {
      const nd = layout.shape.length;
      this.leafModel = new LeafModel({
        _layout: layout,
        _stats: stats,
        _options: options,
        view_dims: nd >= 2 ? [0, 1] : nd === 1 ? [0] : [],
      });
      this.leafView = new ArrayView(this.leafModel, this.gridHost, { embedded: true });
      return;
    }
    const lm = this.leafModel;
    if (lm.get("_layout") !== layout) {
      const nd = layout.shape.length;
      if (lm.get("view_dims").length !== Math.min(nd, 2)) lm.set("view_dims", nd >= 2 ? [0, 1] : nd === 1 ? [0] : []);
      lm.set("_options", options);
      lm.set("_layout", layout);
    }
    if (lm.get("_stats") !== stats) lm.set("_stats", stats);
  }

  /** What the header says of a clicked leaf whose grid has not come: nothing for the first
   *  WAIT_WORDS_MS; then, live, that it is on its way, and in a saved page that the page left
   *  that leaf's grid out. */
  private waitingWords(path: string): string {
    if (performance.now() - this.askedAt < WAIT_WORDS_MS) return "";
    const page = this.model.get("_static");
    if (!page) return `${path}: its grid is on its way from the kernel…`;
    return (
      `${path}: its grid is not in this saved page (${page.saved.toLocaleString()} of ` +
      `${page.leaves.toLocaleString()} leaves' grids fit in it; save_html(budget=...) carries more)`
    );
  }

  private renderStatic(t: TreeWire): void {
    if (!t.static.length) {
      this.staticEl.replaceChildren();
      return;
    }
    const d = mk(this.doc, "details", "");
    d.append(mk(this.doc, "summary", "", `${plural(t.static.length, "static leaf", "static leaves")} (not arrays: never laid out)`));
    for (const s of t.static.slice(0, 200)) {
      const row = mk(this.doc, "div", "");
      row.append(mk(this.doc, "code", "", s.path), this.doc.createTextNode(` ${s.kind} ${s.text}`));
      d.append(row);
    }
    this.staticEl.replaceChildren(d);
  }

  dispose(): void {
    this.editor.dispose();
    clearTimeout(this.waitTimer);
    this.chart.dispose();
    this.leafView?.dispose();
    this.leafModel?.off();
    super.dispose();
  }
}
