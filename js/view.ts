// shardwidget front end: anywidget entry point.
import type { AnyModel, RenderProps } from "@anywidget/types";
import type { Layout, LayoutState, Options, ResultMsg, Stats } from "./types";
import { ArrayPane, MAX_GRID_WIDTH } from "./grid";
import { MeshPane } from "./mesh";
import { Header } from "./header";
import { Controls } from "./controls";
import { renderDetail, type Pin } from "./detail";
import { RequestQueue } from "./requests";
import { blocksByDevice, effectiveViewDims, sliderDims } from "./blocks";
import { deviceColor } from "./colors";
import { statsFor } from "./stats";
import { injectStyles, ROOT_CLASS } from "./styles";

type Dirty = "grid" | "mesh" | "header" | "controls" | "detail" | "status";

const STATE_TRAITS = ["mesh_shape", "axis_names", "axis_types", "spec", "memory_kind"] as const;

function mark(name: string): void {
  try {
    performance.mark(name);
  } catch {
    /* no performance API */
  }
}

function measure(name: string, start: string): void {
  try {
    performance.measure(name, start);
  } catch {
    /* ignore */
  }
}

export class ShardView {
  readonly root: HTMLElement;
  private doc: Document;
  private header: Header;
  private controls: Controls;
  private arrayPane: ArrayPane;
  private meshPane: MeshPane;
  private detailEl: HTMLElement;
  private queue: RequestQueue;
  private dirty = new Set<Dirty>();
  private scheduled = false;
  private disposed = false;
  private slice: number[] = [];
  private sliceShapeKey = "";
  private hoverBlock: number | null = null;
  private hoverDevice: number | null = null;
  private pin: Pin | null = null;
  private pinKey = -1;
  private find: number | null = null;
  private byDevice = new Map<number, number[]>();
  private byDeviceKey = -1;
  private width = 0;
  private lastResultError = "";
  private ro: ResizeObserver | null = null;
  private unsub: (() => void)[] = [];
  private colors = new Map<number, string>();
  private colorN = -1;

  constructor(
    private readonly model: AnyModel,
    el: HTMLElement,
  ) {
    this.doc = el.ownerDocument;
    injectStyles(el);
    const doc = this.doc;
    this.root = doc.createElement("div");
    this.root.className = ROOT_CLASS;
    this.header = new Header(doc, { find: (t) => this.setFind(t) });
    this.controls = new Controls(doc, { request: (s) => this.request(s) });
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
      },
      clickDevice: (id) => this.togglePin({ kind: "device", device: id }),
    });
    this.detailEl = doc.createElement("section");
    this.detailEl.className = "sw-detail";
    this.detailEl.tabIndex = -1;
    this.detailEl.setAttribute("aria-label", "details");
    this.detailEl.hidden = true;
    const main = doc.createElement("div");
    main.className = "sw-main";
    const side = doc.createElement("div");
    side.className = "sw-side";
    side.append(this.meshPane.el, this.detailEl);
    main.append(this.arrayPane.el, side);
    this.root.append(this.header.el, this.controls.el, main);
    this.root.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.pin) {
        e.stopPropagation();
        this.setPin(null);
      }
    });
    el.append(this.root);

    this.queue = new RequestQueue((msg) => this.model.send(msg));
    this.queue.onChange = () => this.invalidate("controls");

    const on = (ev: string, fn: (...a: any[]) => void) => {
      this.model.on(ev, fn);
      this.unsub.push(() => this.model.off(ev, fn));
    };
    on("msg:custom", (msg: unknown) => this.onCustom(msg));
    on("change:_layout", () => this.invalidate("grid", "mesh", "header", "detail", "controls"));
    on("change:_stats", () => this.invalidate("grid", "header", "detail"));
    on("change:error", () => this.invalidate("status"));
    on("change:busy", () => this.invalidate("status"));
    on("change:view_dims", () => this.invalidate("grid", "detail"));
    on("change:_options", () => this.invalidate("controls", "mesh", "grid"));
    for (const t of STATE_TRAITS) on(`change:${t}`, () => this.invalidate("controls"));

    if (typeof ResizeObserver !== "undefined") {
      this.ro = new ResizeObserver(() => {
        const w = this.measureWidth();
        if (Math.abs(w - this.width) > 4) this.invalidate("grid", "mesh");
      });
      this.ro.observe(this.root);
    }
    this.invalidate("grid", "mesh", "header", "controls", "detail", "status");
    this.flush();
  }

  // ---- model access --------------------------------------------------------------------------

  get layout(): Layout | null {
    return (this.model.get("_layout") as Layout | null | undefined) ?? null;
  }

  get stats(): Stats | null {
    return statsFor(this.layout, this.model.get("_stats") as Stats | null | undefined);
  }

  get options(): Options | null {
    return (this.model.get("_options") as Options | null | undefined) ?? null;
  }

  traitState(): LayoutState {
    const g = (k: string) => this.model.get(k);
    return {
      mesh_shape: [...((g("mesh_shape") as number[]) ?? [])],
      axis_names: [...((g("axis_names") as string[]) ?? [])],
      axis_types: [...((g("axis_types") as LayoutState["axis_types"]) ?? [])],
      spec: [...((g("spec") as LayoutState["spec"]) ?? [])],
      memory_kind: (g("memory_kind") as string) ?? "",
    };
  }

  viewDims(): number[] {
    const l = this.layout;
    return effectiveViewDims(l ? l.shape.length : 0, this.model.get("view_dims") as number[]);
  }

  colorOf(id: number): string {
    const n = this.options?.n_devices ?? this.layout?.devices.ids.length ?? 1;
    if (n !== this.colorN) {
      this.colorN = n;
      this.colors.clear();
    }
    let c = this.colors.get(id);
    if (c === undefined) {
      c = deviceColor(id, n);
      this.colors.set(id, c);
    }
    return c;
  }

  private measureWidth(): number {
    const w = this.arrayPane.el.clientWidth || this.root.clientWidth || 0;
    return w > 0 ? w : 640;
  }

  // ---- rendering ------------------------------------------------------------------------------

  invalidate(...what: Dirty[]): void {
    for (const w of what) this.dirty.add(w);
    if (this.scheduled || this.disposed) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Apply pending updates now. */
  flush(): void {
    this.scheduled = false;
    if (this.disposed || this.dirty.size === 0) return;
    const d = new Set(this.dirty);
    this.dirty.clear();
    const layout = this.layout;
    if (layout && layout.key !== this.byDeviceKey) {
      this.byDevice = blocksByDevice(layout);
      this.byDeviceKey = layout.key;
      if (this.pin && this.pin.kind === "block" && this.pinKey !== layout.key) this.pin = null;
      this.pinKey = layout.key;
      d.add("detail");
    }
    // Read layout before writing any DOM in this flush, so rendering forces no extra reflow
    // (both panes' widths come from the flex rules, not from their contents).
    const drawing = d.has("grid") || d.has("mesh");
    let sideW = 300;
    if (drawing) {
      mark("shardwidget:render-start");
      this.width = this.measureWidth();
      sideW = this.sideWidth();
    }
    if (d.has("header") || d.has("status")) {
      this.header.update(layout, this.model.get("_stats") as Stats | null);
      this.header.setBusy(!!this.model.get("busy"));
      const err = (this.model.get("error") as string) || this.lastResultError;
      this.header.setError(err);
    }
    if (d.has("controls")) this.renderControls();
    if (drawing) {
      if (layout) {
        if (d.has("grid")) this.renderGrid(layout);
        if (d.has("mesh")) this.meshPane.update(layout, sideW);
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
    this.arrayPane.update({
      layout,
      stats: this.stats,
      viewDims: vd,
      slice: this.slice,
      width: Math.min(this.width, MAX_GRID_WIDTH + 120),
    });
  }

  private renderControls(): void {
    const options = this.options;
    if (!options) {
      this.controls.el.hidden = true;
      return;
    }
    this.controls.el.hidden = false;
    const optimistic = this.queue.optimistic;
    this.controls.update({
      state: optimistic ?? this.traitState(),
      options,
      pending: optimistic !== null,
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
  }

  private applyHighlight(): void {
    const layout = this.layout;
    if (!layout) return;
    const relatedBlocks = new Set<number>();
    const relatedDevices = new Set<number>();
    if (this.hoverBlock !== null && layout.blocks[this.hoverBlock]) {
      relatedBlocks.add(this.hoverBlock);
      for (const id of layout.blocks[this.hoverBlock].d) relatedDevices.add(id);
    }
    if (this.hoverDevice !== null) {
      relatedDevices.add(this.hoverDevice);
      for (const k of this.byDevice.get(this.hoverDevice) ?? []) relatedBlocks.add(k);
    }
    const found = new Set<number>(this.find !== null ? this.byDevice.get(this.find) ?? [] : []);
    let pinnedBlock: number | null = null;
    const pinnedDevices = new Set<number>();
    if (this.pin?.kind === "block" && layout.blocks[this.pin.block]) {
      pinnedBlock = this.pin.block;
      for (const id of layout.blocks[pinnedBlock].d) pinnedDevices.add(id);
    } else if (this.pin?.kind === "device") {
      pinnedDevices.add(this.pin.device);
      pinnedBlock = this.byDevice.get(this.pin.device)?.[0] ?? null;
    }
    const dim = this.hoverBlock !== null || this.hoverDevice !== null;
    this.arrayPane.setHighlight(relatedBlocks, found, pinnedBlock, dim);
    this.meshPane.setHighlight(relatedDevices, this.find, pinnedDevices, dim);
  }

  // ---- interaction ----------------------------------------------------------------------------

  togglePin(p: Pin): void {
    const same =
      this.pin &&
      this.pin.kind === p.kind &&
      (p.kind === "block"
        ? (this.pin as { block: number }).block === p.block
        : (this.pin as { device: number }).device === p.device);
    this.setPin(same ? null : p);
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

  setFind(text: string): void {
    const t = text.trim();
    const layout = this.layout;
    if (t === "") {
      this.find = null;
      this.header.setFindMessage("", false);
    } else if (!/^\d+$/.test(t)) {
      this.find = null;
      this.header.setFindMessage("not an id", true);
    } else {
      const id = Number(t);
      const blocks = this.byDevice.get(id);
      const inMesh = layout?.mesh?.device_ids.includes(id) || layout?.devices.ids.includes(id);
      if (!blocks && !inMesh) {
        this.find = null;
        this.header.setFindMessage(`no device ${id}`, true);
      } else {
        this.find = id;
        this.header.setFindMessage(blocks ? "" : "holds nothing", false);
        // Jump the sliders to the slice holding the device's first block.
        if (blocks && layout) {
          const b = layout.blocks[blocks[0]];
          const vd = this.viewDims();
          let moved = false;
          for (const d of sliderDims(layout.shape.length, vd)) {
            const s = this.slice[d] ?? 0;
            if (!(b.i[d][0] <= s && s < b.i[d][1])) {
              this.slice[d] = b.i[d][0];
              moved = true;
            }
          }
          if (moved) {
            this.invalidate("grid");
            return;
          }
        }
      }
    }
    this.applyHighlight();
  }

  request(state: LayoutState): void {
    this.queue.submit(state);
  }

  private onCustom(msg: unknown): void {
    const m = msg as Partial<ResultMsg> | null;
    if (!m || m.type !== "result" || typeof m.seq !== "number") return;
    const r = m as ResultMsg;
    if (this.queue.handleResult(r)) {
      this.lastResultError = r.ok ? "" : r.error || "";
      this.invalidate("controls", "status");
    }
  }

  dispose(): void {
    this.disposed = true;
    this.queue.dispose();
    for (const u of this.unsub) u();
    this.unsub = [];
    this.ro?.disconnect();
    this.arrayPane.dispose();
    this.root.remove();
  }

  /** For tests / debugging. */
  get requestQueue(): RequestQueue {
    return this.queue;
  }
}

export function render({ model, el }: Pick<RenderProps, "model" | "el">): () => void {
  const view = new ShardView(model, el);
  return () => view.dispose();
}


