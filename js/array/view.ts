// The array view, ShardView(arr): header, layout controls, the grid of blocks, the mesh, and the
// detail of a pinned block or device. Wire format: wire/array.ts. Also embedded, one per input
// and output, in a function view (function/leaf.ts).
import type { AnyModel } from "@anywidget/types";
import type { Layout, LayoutState, Options, RequestMsg, Stats } from "../wire";
import { ArrayPane } from "./grid/pane";
import { MAX_GRID_WIDTH } from "./grid/geometry";
import { MeshPane } from "./mesh/pane";
import { Header } from "./header";
import { LegendPanel } from "./legend";
import { highlights, matchFind, samePin, type FindMatch, type Pointing } from "./selection";
import { Controls } from "./controls";
import { detailSection, renderDetail, type Pin } from "./detail";
import { BaseView, published } from "../shared/view";
import type { ArrayViewModel } from "../shared/leaf_model";

export type { ArrayViewModel };
import { layoutRequests, stateKey } from "./state";
import { blocksByDevice, effectiveViewDims, sliderDims } from "./blocks";
import { colorScheme, type ColorScheme } from "../shared/colors";
import { statsFor } from "./stats";
import { mark, measure } from "../shared/dom";
import { TransferPanel, transferFor } from "./transfer";
import { injectFunctionStyles } from "../shared/trace_styles";
import { injectCostStyles } from "../cost/styles";
import type { GroupPaint } from "../cost/groups";

type Dirty = "grid" | "mesh" | "header" | "controls" | "detail" | "status" | "transfer";

/** The tallest grid of a view embedded in a function view (px). */
const EMBEDDED_GRID_HEIGHT = 240;
/** How far (px) below the pinned block its card may sit in the side column before it floats
 *  beside the block instead. */
const DETAIL_NEAR_PX = 240;

export const NO_SAVED_TRANSFER = "what this layout moves was not saved in this page (it has no kernel)";

const STATE_TRAITS = ["mesh_shape", "axis_names", "axis_types", "spec", "memory_kind", "devices"] as const;

/** What the array view reads: its traits, where the host of an embedded view may have no
 *  statistics to give (null). */

/** How a view is mounted. `embedded`: inside another view (a function view's input or output
 *  leaf): no header and no re-layout controls of its own, as the host shows them. */
export interface ViewOptions {
  embedded?: boolean;
}

export class ArrayView extends BaseView<ArrayViewModel, LayoutState, RequestMsg> {
  private header: Header;
  private controls: Controls;
  private arrayPane: ArrayPane;
  private meshPane: MeshPane;
  private detailEl: HTMLElement;
  /** What the re-layout moves (null in an embedded view: the function view shows its cost). */
  private transfer: TransferPanel | null = null;
  /** Devices of a lit collective's groups (hovering a collective), or null. */
  private groupLit: Set<number> | null = null;
  private legend: LegendPanel;
  private dirty = new Set<Dirty>();
  private slice: number[] = [];
  private sliceShapeKey = "";
  private hoverBlock: number | null = null;
  private hoverDevice: number | null = null;
  private pin: Pin | null = null;
  private pinKey = -1;
  /** The find box: its text, the devices it matches, the blocks they hold. */
  private findText = "";
  private find: FindMatch = matchFind("", null, new Map());
  private byDevice = new Map<number, number[]>();
  private byDeviceKey = -1;
  private width = 0;

  /** What the user points at now (for the highlights). */
  private get pointing(): Pointing {
    return { hoverBlock: this.hoverBlock, hoverDevice: this.hoverDevice, pin: this.pin, find: this.find };
  }
  private ro: ResizeObserver | null = null;
  private scheme_: ColorScheme | null = null;
  private schemeKey: [number, number] = [NaN, NaN];

  constructor(
    model: AnyModel<ArrayViewModel>,
    el: HTMLElement,
    private readonly viewOpts: ViewOptions = {},
  ) {
    super(model, el, "", layoutRequests);
    const doc = this.doc;
    this.header = new Header(doc, { find: (t) => this.setFind(t) });
    this.controls = new Controls(doc, {
      request: (s) => this.request(s),
      step: (by) => this.model.send({ type: "history", step: by }),
    });
    const colorOf = (id: number) => this.colorOf(id);
    this.arrayPane = new ArrayPane(doc, {
      colorOf,
      hoverBlock: (k) => {
        this.hoverBlock = k;
        this.applyHighlight();
      },
      clickBlock: (k) => this.togglePin({ kind: "block", block: k }),
      setViewDims: (dims) => {
        this.model.set("view_dims", dims);
        this.model.save_changes();
      },
      setSlice: (d, i) => {
        this.slice[d] = i;
        this.invalidate("grid");
      },
    });
    this.meshPane = new MeshPane(doc, {
      colorOf,
      hoverDevice: (id) => {
        this.hoverDevice = id;
        this.applyHighlight();
        const p = this.transfer?.hoverDevice(id);
        if (p) this.meshPane.setPartners(p.to, p.from);
      },
      clickDevice: (id) => this.togglePin({ kind: "device", device: id }),
      tooltipExtra: (id) => this.transfer?.tooltip(id) ?? "",
    });
    if (!viewOpts.embedded) {
      injectFunctionStyles(el); // the collectives table
      injectCostStyles(el);
      this.transfer = new TransferPanel(doc, {
        setHeat: (colors) => {
          this.meshPane.setPaint("heat", colors);
          // The device colour key does not describe a heat: the heat's own key does.
          this.meshPane.el.classList.toggle("sw-heat-on", !!colors);
        },
        lightGroups: (p) => this.lightGroups(p),
        chooseHardware: (name) => {
          this.model.set("hardware", name);
          this.model.save_changes();
        },
        openCost: (open) => {
          this.model.set("cost_open", open);
          this.model.save_changes();
        },
      });
    }
    this.detailEl = detailSection(doc, (id) => {
      if (id === this.hoverDevice) return;
      this.hoverDevice = id;
      this.applyHighlight();
    });
    const main = doc.createElement("div");
    main.className = "sw-main";
    const side = doc.createElement("div");
    side.className = "sw-side";
    side.append(this.meshPane.el);
    if (this.transfer) side.append(this.transfer.side);
    side.append(this.detailEl);
    main.append(this.arrayPane.el, side);
    this.legend = new LegendPanel(doc);
    this.header.addAction(this.picture.el);
    this.root.append(this.header.el);
    if (this.transfer) this.root.append(this.transfer.line);
    // The error banner goes below the controls: one appearing must not move them.
    this.root.append(this.controls.el, this.header.errorEl, main, this.legend.el);
    if (this.transfer) this.root.append(this.transfer.section);
    if (viewOpts.embedded) {
      this.root.classList.add("sw-embedded");
      this.header.el.hidden = true;
      this.header.el.append(this.header.errorEl); // hidden with the header, as before
      this.legend.el.hidden = true; // the function view is one of several: no legend each
    }
    this.root.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.pin) {
        e.stopPropagation();
        this.setPin(null);
      }
    });
    el.append(this.root);

    this.onChange(["_layout"], () =>
      this.invalidate("grid", "mesh", "header", "detail", "controls", "transfer"),
    );
    this.onChange(["_transfer", "hardware", "_hardware_presets", "cost_open"], () => this.invalidate("transfer"));
    this.onChange(["_stats"], () => this.invalidate("grid", "header", "detail"));
    this.onChange(["error", "busy"], () => this.invalidate("status"));
    this.onChange(["view_dims"], () => this.invalidate("grid", "detail"));
    this.onChange(["_options"], () => this.invalidate("controls", "mesh", "grid"));
    this.onChange(STATE_TRAITS, () => this.invalidate("controls"));
    this.onChange(["_history"], () => this.invalidate("controls", "header"));

    if (typeof ResizeObserver !== "undefined") {
      this.ro = new ResizeObserver(() => {
        const w = this.measureWidth();
        if (Math.abs(w - this.width) > 4) this.invalidate("grid", "mesh");
      });
      this.ro.observe(this.root);
    }
    this.invalidate("grid", "mesh", "header", "controls", "detail", "status", "transfer");
    this.flush();
  }

  // ---- model access --------------------------------------------------------------------------

  get layout(): Layout | null {
    return published(this.model.get("_layout"));
  }

  get stats(): Stats | null {
    return statsFor(this.layout, this.model.get("_stats"));
  }

  get options(): Options | null {
    return this.model.get("_options") ?? null;
  }

  traitState(): LayoutState {
    const m = this.model;
    return {
      mesh_shape: [...(m.get("mesh_shape") ?? [])],
      axis_names: [...(m.get("axis_names") ?? [])],
      axis_types: [...(m.get("axis_types") ?? [])],
      spec: [...(m.get("spec") ?? [])],
      memory_kind: m.get("memory_kind") ?? "",
      devices: m.get("devices") ?? "all",
    };
  }

  viewDims(): number[] {
    const l = this.layout;
    return effectiveViewDims(l ? l.shape.length : 0, this.model.get("view_dims"));
  }

  colorOf(id: number): string {
    return this.colorScheme().color(id);
  }

  /** Colours by device id for the kernel's device count (see shared/colors.ts); recomputed only when the
   *  device count or the layout changes (ids other than 0..n-1 colour by rank). */
  colorScheme(): ColorScheme {
    const layout = this.layout;
    const n = this.options?.n_devices ?? layout?.devices.ids.length ?? 1;
    // Asked once a block and a cell on a render: the key compared as two numbers, not a text.
    const lk = layout?.key ?? -1;
    if (!this.scheme_ || n !== this.schemeKey[0] || lk !== this.schemeKey[1]) {
      const ids = layout ? [...(layout.mesh?.device_ids ?? []), ...layout.devices.ids] : [];
      const s = colorScheme(n, ids);
      const same =
        this.scheme_ &&
        this.scheme_.n === s.n &&
        this.scheme_.kind === s.kind &&
        !this.scheme_.byRank &&
        !s.byRank;
      if (!same) this.scheme_ = s;
      this.schemeKey = [n, lk];
    }
    return this.scheme_!;
  }

  private measureWidth(): number {
    const w = this.arrayPane.el.clientWidth || this.root.clientWidth || 0;
    return w > 0 ? w : 640;
  }

  // ---- rendering ------------------------------------------------------------------------------

  invalidate(...what: Dirty[]): void {
    for (const w of what) this.dirty.add(w);
    this.schedule();
  }

  protected requestsChanged(result: boolean): void {
    if (result) this.invalidate("controls", "status");
    else this.invalidate("controls");
  }

  protected render(): void {
    if (this.dirty.size === 0) return;
    const d = new Set(this.dirty);
    this.dirty.clear();
    const layout = this.layout;
    if (layout && layout.key !== this.byDeviceKey) {
      this.byDevice = blocksByDevice(layout);
      this.byDeviceKey = layout.key;
      if (this.pin && this.pin.kind === "block" && this.pinKey !== layout.key) this.pin = null;
      this.pinKey = layout.key;
      d.add("detail");
      if (this.findText) this.matchFind(false);
    }
    // Read layout before writing any DOM in this flush, so rendering forces no extra reflow
    // (both panes' widths come from the flex rules, not from their contents). On the first
    // render this read is the page's first style and layout pass for the widget: measured on its
    // own (shardwidget:layout-read), like the header and controls (shardwidget:chrome), so that
    // shardwidget:render is the drawing of the two panes; shardwidget:flush is the whole update.
    const drawing = d.has("grid") || d.has("mesh");
    let sideW = 300;
    mark("shardwidget:flush-start");
    if (drawing) {
      this.width = this.measureWidth();
      sideW = this.sideWidth();
      measure("shardwidget:layout-read", "shardwidget:flush-start");
    }
    mark("shardwidget:chrome-start");
    if (d.has("header") || d.has("status")) {
      this.header.update(layout, this.model.get("_stats"));
      this.picture.setAvailable(!!layout && this.model.get("_history") !== undefined);
      this.header.setBusy(!!this.model.get("busy"));
      const err = this.model.get("error") || this.lastResultError;
      this.header.setError(err);
    }
    if (d.has("controls")) this.renderControls();
    measure("shardwidget:chrome", "shardwidget:chrome-start");
    if (drawing) {
      mark("shardwidget:render-start");
      if (layout) {
        if (d.has("grid")) this.renderGrid(layout);
        if (d.has("mesh")) this.meshPane.update(layout, sideW, this.colorScheme(), this.byDevice);
      } else {
        const p = this.doc.createElement("div");
        p.className = "sw-empty";
        p.textContent = "waiting for the array layout…";
        this.arrayPane.el.replaceChildren(p);
      }
      this.applyHighlight();
      measure("shardwidget:render", "shardwidget:render-start");
    }
    if (d.has("detail")) this.renderDetail();
    if (d.has("transfer")) this.renderTransfer();
    if ((d.has("header") || d.has("grid")) && !this.viewOpts.embedded)
      this.legend.update(layout, this.stats, this.arrayPane.heatmapShown);
    measure("shardwidget:flush", "shardwidget:flush-start");
  }

  private sideWidth(): number {
    const w = this.meshPane.el.clientWidth;
    return w > 0 ? w : 300;
  }

  private renderGrid(layout: Layout): void {
    const vd = this.viewDims();
    const shapeKey = layout.shape.join(",");
    if (shapeKey !== this.sliceShapeKey) {
      this.slice = layout.shape.map(() => 0);
      this.sliceShapeKey = shapeKey;
    }
    this.slice = layout.shape.map((s, i) => Math.max(0, Math.min(s - 1, this.slice[i] ?? 0)));
    const scheme = this.colorScheme();
    this.arrayPane.update({
      layout,
      stats: this.stats,
      viewDims: vd,
      slice: this.slice,
      width: Math.min(this.width, MAX_GRID_WIDTH + 120),
      // A view inside a function's card is one of several on the page: drawn shorter.
      maxHeight: this.viewOpts.embedded ? EMBEDDED_GRID_HEIGHT : undefined,
      colorOf: (id) => scheme.color(id), // one scheme per render, not one lookup per block
    });
  }

  private renderControls(): void {
    const options = this.options;
    if (!options || this.viewOpts.embedded) {
      this.controls.el.hidden = true;
      return;
    }
    this.controls.el.hidden = false;
    const optimistic = this.queue.optimistic;
    this.controls.update({
      state: optimistic ?? this.traitState(),
      options,
      pending: optimistic !== null,
      history: this.model.get("_history"),
    });
  }

  private renderDetail(): void {
    const layout = this.layout;
    if (!this.pin || !layout) {
      this.detailEl.hidden = true;
      this.detailEl.replaceChildren();
      return;
    }
    this.detailEl.hidden = false;
    renderDetail(this.doc, this.detailEl, {
      layout,
      stats: this.stats,
      viewDims: this.viewDims(),
      pin: this.pin,
      colorOf: (id) => this.colorOf(id),
      close: () => this.setPin(null),
    });
    this.placeDetail();
  }

  /** Keep a pinned block's card next to the block: where the card's place in the side column
   *  (below the mesh pane and colour key) is far below the block, it floats beside the block,
   *  over the side column, instead (without moving anything else). */
  private placeDetail(): void {
    const card = this.detailEl;
    card.classList.remove("sw-detail-float");
    card.style.top = "";
    const pin = this.pin;
    if (!pin || pin.kind !== "block") return;
    const at = this.arrayPane.blockTop(pin.block);
    const side = card.parentElement;
    if (at === null || !side) return;
    const sideTop = side.getBoundingClientRect().top;
    const natural = card.getBoundingClientRect().top;
    if (natural - at <= DETAIL_NEAR_PX) return;
    card.classList.add("sw-detail-float");
    // Within the widget: never past the bottom of the grid and side column.
    const bottom = (side.parentElement ?? side).getBoundingClientRect().bottom;
    const room = bottom - sideTop - card.getBoundingClientRect().height;
    card.style.top = `${Math.max(0, Math.round(Math.min(at - sideTop, room)))}px`;
  }

  private renderTransfer(): void {
    if (!this.transfer) return;
    const layout = this.layout;
    const raw = this.model.get("_transfer");
    const saved = !!this.options?.static_states;
    let t = transferFor(raw, layout);
    // A saved page carries the transfer of the layout it was saved with only.
    if (!t && saved && layout && raw && typeof raw.status === "string") {
      const orig = this.options?.original;
      const none = layout.source === "original" || (!!orig && stateKey(orig) === stateKey(this.traitState()));
      t = {
        ...raw,
        key: layout.key,
        status: none ? "none" : "unavailable",
        message: none ? "" : NO_SAVED_TRANSFER,
        line: none ? "the original layout: nothing moves" : "",
        received: [],
        sent: [],
        pairs: [],
        collectives: [],
        group_sets: [],
        estimate: null,
      };
    }
    const presets = this.model.get("_hardware_presets") ?? [];
    const open = this.model.get("cost_open") ?? false;
    this.transfer.update(t, layout, presets, this.model.get("hardware") ?? "", saved, open);
  }

  /** Light a collective's device groups on the mesh (one colour per group; every other device
   *  faded), or stop (null). */
  lightGroups(p: GroupPaint | null): void {
    this.meshPane.setPaint("groups", p ? p.colors : null);
    this.groupLit = p ? new Set(p.colors.keys()) : null;
    this.applyHighlight();
  }

  /** The transfer panel (tests); null in an embedded view. */
  get transferPanel(): TransferPanel | null {
    return this.transfer;
  }

  /** The mesh pane (tests and hosts). */
  get mesh(): MeshPane {
    return this.meshPane;
  }

  private applyHighlight(): void {
    const layout = this.layout;
    if (!layout) return;
    const h = highlights(layout, this.pointing, this.byDevice);
    this.arrayPane.setHighlight(h.blocks.related, h.blocks.found, h.blocks.pinned, h.dim);
    if (this.groupLit) {
      // A lit collective: its devices stand out, every other one fades (when every device is
      // in a group, the colours say it all: nothing to fade, and 4096 outlines cost a frame).
      const all = this.groupLit.size >= layout.devices.ids.length;
      this.meshPane.setHighlight(all ? new Set() : this.groupLit, h.devices.found, h.devices.pinned, !all);
      return;
    }
    this.meshPane.setHighlight(h.devices.related, h.devices.found, h.devices.pinned, h.dim);
  }

  // ---- interaction ----------------------------------------------------------------------------

  togglePin(p: Pin): void {
    this.setPin(samePin(this.pin, p) ? null : p);
  }

  setPin(p: Pin | null): void {
    this.pin = p;
    this.pinKey = this.layout?.key ?? -1;
    this.renderDetail();
    this.applyHighlight();
    if (p) {
      try {
        this.detailEl.focus({ preventScroll: true });
      } catch {
        /* ignore */
      }
    }
  }

  get pinned(): Pin | null {
    return this.pin;
  }

  /** The find box: "1234", "12-15", "3,7,9" (or a mix) highlights those devices and the blocks
   *  they hold; "" clears. */
  setFind(text: string): void {
    this.findText = text.trim();
    this.matchFind(true);
    this.applyHighlight();
  }

  /** The devices the find box matches now (after a new layout too); `jump`: move the sliders of
   *  an N-d array to the slice that shows the first found block. */
  private matchFind(jump: boolean): void {
    const layout = this.layout;
    this.find = matchFind(this.findText, layout, this.byDevice);
    this.header.setFindMessage(this.find.message, this.find.invalid);
    const nb = this.find.foundBlocks.size;
    // Jump the sliders to the slice holding the first found block.
    if (jump && layout && nb > 0) {
      const b = layout.blocks[Math.min(...this.find.foundBlocks)];
      const vd = this.viewDims();
      let moved = false;
      for (const dd of sliderDims(layout.shape.length, vd)) {
        const s = this.slice[dd] ?? 0;
        if (!(b.i[dd][0] <= s && s < b.i[dd][1])) {
          this.slice[dd] = b.i[dd][0];
          moved = true;
        }
      }
      if (moved) this.invalidate("grid");
    }
  }

  override dispose(): void {
    super.dispose();
    this.ro?.disconnect();
    this.arrayPane.dispose();
  }
}


