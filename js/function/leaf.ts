// One input or output of a function view: a card with its path, type, spec selectors and local
// shape, over the array view's own device grid (ArrayView, embedded) fed by a small local model.
import type {
  Layout,
  LeafInfo,
  Options,
  SpecEntry,
  Stats,
  TraceLeaf,
  TraceMode,
  TraceOptions,
  TraceState,
} from "../wire";
import { ArrayView } from "../array/view";
import type { GroupPaint } from "../cost/groups";
import { LeafModel } from "../shared/leaf_model";
import { statsHint } from "../array/header";
import { formatBytes } from "../shared/text";
import { specString } from "../shared/spec";
import { specSelectors } from "./controls";
import { selectField } from "../shared/fields";
import { outSpecOf, withInSpecEntry, withOutSpec, withOutSpecEntry } from "./state";

/** Python's tuple text of a shape: "(4, 4)", "(4,)", "()". */
export function pyTuple(shape: number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

/** Options for an embedded view: no re-layout from there (the function view owns the layout). */
function leafOptions(t: TraceOptions, leaf: LeafInfo): Options {
  return {
    n_devices: t.n_devices,
    platform: t.platform,
    ndim: leaf.shape.length,
    shape: [...leaf.shape],
    dtype: leaf.dtype,
    factorizations: t.factorizations,
    memory_kinds: t.memory_kinds,
    original: null,
    reshard_disabled: "the function view's controls set this layout",
    own_devices: [],
    own_factorizations: {},
  };
}

export const INPUT_STATS_MESSAGE = "no per-shard data for this input from the kernel";

/** The Stats an input's grid gets: none, and why. */
function inputStats(layout: Layout): Stats {
  return unavailableStats(layout.key, INPUT_STATS_MESSAGE);
}

/** Stats that say, in words, why a grid has no per-shard data. */
export function unavailableStats(key: number, message: string): Stats {
  return {
    key,
    status: "unavailable",
    message,
    blocks: [],
    values: null,
    values_offsets: [],
    thumbs: null,
    thumb_shapes: [],
    thumb_offsets: [],
    thumbs_dims: [],
    vmin: 0,
    vmax: 0,
    partials: [],
  };
}

export interface LeafCardInput {
  side: "in" | "out";
  index: number;
  mode: TraceMode;
  /** Path / shape / dtype (from the options; the leaf when the options have none). */
  info: LeafInfo;
  /** The compiled leaf now shown (the last good one), or null before any compile. */
  leaf: TraceLeaf | null;
  /** Outputs: this leaf's statistics (any key; the view checks it), else null. */
  stats: Stats | null;
  /** What the controls show (optimistic while a request is pending). */
  state: TraceState;
  options: TraceOptions;
  request: (s: TraceState) => void;
}

let cardCount = 0;

export class LeafCard {
  readonly el: HTMLElement;
  private head: HTMLElement;
  private ctl: HTMLElement;
  private gridHost: HTMLElement;
  private hint: HTMLElement;
  private model: LeafModel | null = null;
  private view: ArrayView | null = null;
  private placeholderStats: Stats | null = null;
  private readonly id = ++cardCount;

  constructor(private readonly doc: Document) {
    this.el = doc.createElement("article");
    this.el.className = "sw-tr-leaf";
    this.head = doc.createElement("div");
    this.head.className = "sw-tr-leaf-head";
    this.head.id = `sw-tr-leaf-${this.id}`;
    this.el.setAttribute("aria-labelledby", this.head.id);
    this.ctl = doc.createElement("div");
    this.ctl.className = "sw-tr-leaf-ctl";
    this.hint = doc.createElement("div");
    this.hint.className = "sw-hint";
    this.hint.hidden = true;
    this.gridHost = doc.createElement("div");
    this.gridHost.className = "sw-tr-leaf-grid";
    this.el.append(this.head, this.ctl, this.hint, this.gridHost);
  }

  /** The embedded array view's model (tests). */
  get leafModel(): LeafModel | null {
    return this.model;
  }

  get subView(): ArrayView | null {
    return this.view;
  }

  update(inp: LeafCardInput): void {
    this.el.dataset.side = inp.side;
    this.el.dataset.index = String(inp.index);
    this.renderHead(inp);
    this.renderControls(inp);
    this.renderGrid(inp);
  }

  /** Light a collective's device groups on this card's mesh, or stop (null). */
  lightGroups(p: GroupPaint | null): void {
    this.view?.lightGroups(p);
  }

  private renderHead(inp: LeafCardInput): void {
    const doc = this.doc;
    const { leaf, info } = inp;
    const mk = (tag: string, cls: string, text = "") => {
      const e = doc.createElement(tag);
      e.className = cls;
      if (text) e.textContent = text;
      return e;
    };
    const top = mk("div", "sw-tr-leaf-top");
    const path = mk("code", "sw-tr-path", info.path);
    path.title = inp.side === "in" ? "input (pytree path)" : "output (pytree path)";
    top.append(path);
    const local = leaf ? `device local shape: ${pyTuple(leaf.local_shape)}` : "";
    const typeText = leaf ? leaf.typeof : `${info.dtype}[${info.shape.join(",")}]`;
    if (inp.mode === "shard_map") {
      // In shard_map the body sees the local block: that shape is the headline.
      if (local) top.append(mk("span", "sw-tr-local sw-tr-headline", local));
      const g = mk("code", "sw-tr-typeof sw-tr-secondary", typeText);
      g.title = "global type";
      top.append(g);
    } else {
      top.append(mk("code", "sw-tr-typeof", typeText));
    }
    const facts = mk("div", "sw-tr-facts");
    if (leaf) {
      const spec = mk("code", "sw-tag sw-tag-code", leaf.spec_str || "—");
      spec.title = inp.side === "out" && inp.mode === "jit" ? "output sharding (as compiled)" : "sharding";
      facts.append(spec);
      if (inp.mode !== "shard_map") facts.append(mk("span", "sw-tr-local", local));
      const l = leaf.layout;
      const rep = l.replication > 1 ? ` · each element on ${l.replication} devices` : "";
      facts.append(
        mk("span", "sw-tr-bytes", `${formatBytes(l.bytes_per_device)} per device${rep}`),
      );      // pmap's layout in words: its spec may name pmap's internal axis.
      if (leaf.note) facts.append(mk("span", "sw-tr-note", leaf.note));
    }
    this.head.replaceChildren(...(leaf ? [top, facts] : [top]));
  }

  private renderControls(inp: LeafCardInput): void {
    const doc = this.doc;
    const { side, index, state, info, leaf } = inp;
    const nodes: HTMLElement[] = [];
    const label = doc.createElement("span");
    label.className = "sw-tr-ctl-label";
    if (side === "in") {
      label.textContent = inp.mode === "shard_map" ? "in_specs" : "in_shardings";
      const spec = padSpec(state.in_specs[index], info.shape.length);
      nodes.push(
        label,
        specSelectors(doc, {
          key: `in-${index}`,
          shape: info.shape,
          state,
          spec,
          free: false,
          leafName: info.path,
          onEntry: (d, e) => inp.request(withInSpecEntry(state, index, d, e)),
        }),
        preview(doc, spec),
      );
    } else {
      label.textContent = inp.mode === "shard_map" ? "out_specs" : "out_shardings";
      nodes.push(label);
      const spec = outSpecOf(state, index, info);
      const ndim = info.shape.length;
      if (inp.mode === "jit") {
        // auto (XLA chooses) or set per dimension (starting from XLA's own choice).
        nodes.push(
          selectField(
            doc,
            `out-${index}-mode`,
            "",
            [
              { value: "auto", label: "auto (XLA chooses)", disabled: false, title: "" },
              { value: "set", label: "set per dimension", disabled: false, title: "" },
            ],
            spec === null ? "auto" : "set",
            (v) => {
              const start = leaf ? padSpec(leaf.layout.spec, ndim) : padSpec([], ndim);
              inp.request(withOutSpec(state, index, v === "auto" ? null : start));
            },
            `out_shardings of ${info.path}`,
          ),
        );
      }
      if (spec !== null) {
        const free = inp.mode === "shard_map";
        const shape = free && leaf ? leaf.local_shape : info.shape;
        nodes.push(
          specSelectors(doc, {
            key: `out-${index}`,
            shape,
            state,
            spec,
            free,
            sizeWord: free && leaf ? "local" : undefined,
            leafName: info.path,
            onEntry: (d, e) => inp.request(withOutSpecEntry(state, index, ndim, d, e)),
          }),
          preview(doc, spec),
        );
      } else {
        const chose = doc.createElement("span");
        chose.className = "sw-tr-chose";
        // pmap's out_axes fix its outputs' layout; in jit mode XLA picks it.
        const who = inp.mode === "pmap" ? "pmap's out_axes give" : "XLA chose";
        chose.textContent = leaf ? `${who} ${leaf.spec_str}` : "";
        nodes.push(chose);
      }
    }
    // Keep focus on the selector the user is using while the card is rebuilt.
    const active = doc.activeElement as HTMLElement | null;
    const key = active && this.ctl.contains(active) ? active.dataset.key : undefined;
    this.ctl.replaceChildren(...nodes);
    if (inp.options.static) {
      for (const c of this.ctl.querySelectorAll<HTMLSelectElement>("select")) {
        c.disabled = true;
        c.title = inp.options.static;
      }
    }
    if (key) this.ctl.querySelector<HTMLElement>(`[data-key="${key}"]`)?.focus();
  }

  private renderGrid(inp: LeafCardInput): void {
    const { leaf } = inp;
    const hint = leaf && (inp.side === "out" || inp.stats) ? statsHint(leaf.layout, inp.stats) : "";
    this.hint.textContent = hint;
    this.hint.hidden = !hint;
    if (!leaf) {
      if (!this.view) {
        const p = this.doc.createElement("div");
        p.className = "sw-empty";
        p.textContent = "no layout yet: this function has not compiled";
        this.gridHost.replaceChildren(p);
      }
      return;
    }
    // Inputs: their data as laid out for the run, once the kernel has sent it (older kernels
    // send none: the placeholder says so).
    const stats = inp.side === "in" ? inp.stats ?? this.placeholder(leaf.layout) : inp.stats;
    const opts = leafOptions(inp.options, inp.info);
    if (!this.model) {
      const nd = leaf.layout.shape.length;
      this.model = new LeafModel({
        _layout: leaf.layout,
        _stats: stats,
        _options: opts,
        view_dims: nd >= 2 ? [0, 1] : nd === 1 ? [0] : [],
      });
      this.gridHost.replaceChildren();
      this.view = new ArrayView(this.model, this.gridHost, {
        embedded: true,
      });
      return;
    }
    const m = this.model;
    if (m.get("_layout") !== leaf.layout) m.set("_layout", leaf.layout);
    if (m.get("_stats") !== stats) m.set("_stats", stats);
    const old = m.get("_options");
    if (!old || JSON.stringify(old) !== JSON.stringify(opts)) m.set("_options", opts);
  }

  /** The "no data" Stats of an input, one object per layout (so an unchanged one re-renders
   *  nothing). */
  private placeholder(layout: Layout): Stats {
    if (this.placeholderStats?.key !== layout.key) this.placeholderStats = inputStats(layout);
    return this.placeholderStats;
  }

  dispose(): void {
    this.view?.dispose();
    this.view = null;
    this.model?.off();
    this.model = null;
    this.el.remove();
  }
}

function padSpec(spec: SpecEntry[] | undefined, ndim: number): SpecEntry[] {
  return Array.from({ length: ndim }, (_, d) => spec?.[d] ?? null);
}

function preview(doc: Document, spec: SpecEntry[]): HTMLElement {
  const c = doc.createElement("code");
  c.className = "sw-spec-preview";
  c.textContent = specString(spec);
  return c;
}
