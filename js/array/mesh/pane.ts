// The mesh pane: the devices laid out by mesh axes (or the device list when there is no mesh), or
// (when the devices have physical coordinates, TPU) by those coordinates; and the colour key.
// Device cells are HTML strings; events are delegated to the pane, so 4096 cells need no
// listeners of their own.
import type { Layout } from "../../wire";
import type { ColorScheme } from "../../shared/colors";
import { formatHalfOpen } from "../../shared/text";
import { blocksByDevice } from "../blocks";
import { hasCoords, physicalLayout } from "./geometry";
import { ColorKey } from "./legend";
import { MeshAxesDrawing } from "./mesh_axes";
import { linksNote } from "./links";
import { drawPhysical } from "./physical";
import { CellPaint } from "./heat";

export interface MeshCallbacks {
  colorOf(id: number): string;
  hoverDevice(id: number | null): void;
  clickDevice(id: number): void;
  /** More words for a device's tooltip (what it sends and receives), or "". */
  tooltipExtra?(id: number): string;
}

export type MeshMode = "mesh" | "physical";

export class MeshPane {
  readonly el: HTMLElement;
  /** The device cells by id: found in the drawn pane when first needed (a hover, a highlight, a
   *  paint), not for every cell of every drawing. */
  private cells_: Map<number, HTMLElement> | null = new Map();
  private cellsRoot: HTMLElement | null = null;
  private get cells(): Map<number, HTMLElement> {
    if (!this.cells_) {
      this.cells_ = new Map();
      const root = this.cellsRoot;
      if (root) for (const c of root.querySelectorAll<HTMLElement>(".sw-dev")) this.cells_.set(Number(c.dataset.device), c);
    }
    return this.cells_;
  }
  /** Cells that carry a highlight class. */
  private marked = new Set<number>();
  /** What the cells were drawn from ("" when they must be redrawn). */
  private key = "";
  private mode: MeshMode = "mesh";
  private layout: Layout | null = null;
  private width = 300;
  private scheme: ColorScheme | null = null;
  private byDevice = new Map<number, number[]>();
  private byDeviceKey = -1;
  private colorKey: ColorKey;
  /** Layers over the device colours: a re-layout's heat, a collective's groups. */
  private paint = new CellPaint();
  /** Cells marked as a hovered device's partners (it sends to / receives from them). */
  private partners = new Set<number>();
  private axes: MeshAxesDrawing;
  private hl: { related: Set<number>; found: Set<number>; pinned: Set<number>; dim: boolean } = {
    related: new Set(),
    found: new Set(),
    pinned: new Set(),
    dim: false,
  };

  constructor(
    private readonly doc: Document,
    private readonly cb: MeshCallbacks,
  ) {
    this.el = doc.createElement("section");
    this.el.className = "sw-mesh";
    this.el.setAttribute("aria-label", "devices");
    this.colorKey = new ColorKey(doc);
    this.axes = new MeshAxesDrawing(doc);
    // Delegated events: capture listeners see each cell's mouseenter / mouseleave / focus / blur,
    // which do not bubble, so 4096 cells need no listeners of their own.
    const devOf = (ev: Event): number | null => {
      const t = ev.target as HTMLElement | null;
      if (!t || !t.classList || !t.classList.contains("sw-dev")) return null;
      const id = Number(t.dataset.device);
      return this.cells.get(id) === t ? id : null;
    };
    const enter = (ev: Event) => {
      const id = devOf(ev);
      if (id === null) return;
      (ev.target as HTMLElement).title = this.tooltip(id);
      this.cb.hoverDevice(id);
    };
    const leave = (ev: Event) => {
      if (devOf(ev) !== null) this.cb.hoverDevice(null);
    };
    this.el.addEventListener("mouseenter", enter, true);
    this.el.addEventListener("mouseleave", leave, true);
    this.el.addEventListener("focus", enter, true);
    this.el.addEventListener("blur", leave, true);
    this.el.addEventListener("click", (ev) => {
      const id = devOf(ev);
      if (id !== null) this.cb.clickDevice(id);
    });
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      const id = devOf(ev);
      if (id === null) return;
      ev.preventDefault();
      this.cb.clickDevice(id);
    });
  }

  /** "mesh": by mesh axes; "physical": by device coords (only offered when there are coords). */
  get viewMode(): MeshMode {
    return this.layout && hasCoords(this.layout.devices) ? this.mode : "mesh";
  }

  setMode(mode: MeshMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.key = "";
    if (this.layout) this.update(this.layout, this.width, this.scheme ?? undefined);
  }

  /** Draw `layout` in `width` px. `byDevice`: the layout's blocks by device, where the caller
   *  has it already (else computed here). */
  update(layout: Layout, width: number, scheme?: ColorScheme, byDevice?: Map<number, number[]>): void {
    this.layout = layout;
    this.width = width;
    if (scheme) this.scheme = scheme;
    if (layout.key !== this.byDeviceKey) {
      this.byDevice = byDevice ?? blocksByDevice(layout);
      this.byDeviceKey = layout.key;
    }
    // One colour lookup per cell: the scheme's own (cached) colours, not a call back per cell.
    const s = this.scheme;
    const colorOf = s ? (id: number) => s.color(id) : (id: number) => this.cb.colorOf(id);
    const coords = hasCoords(layout.devices);
    const mode: MeshMode = coords ? this.mode : "mesh";
    // A new layout on the same mesh (a spec change, the common case) keeps the cells as drawn.
    const mesh = layout.mesh;
    const key = JSON.stringify([
      mode,
      coords,
      mesh ?? layout.devices.ids,
      mode === "physical" || !mesh ? [layout.devices.coords, layout.devices.core_on_chip] : null,
      width,
      this.scheme ? [this.scheme.n, this.scheme.kind, this.scheme.byRank] : null,
      colorOf(layout.devices.ids[0] ?? 0),
      colorOf(layout.devices.ids[layout.devices.ids.length - 1] ?? 0),
      mesh ? null : layout.blocks.map((b) => b.d),
    ]);
    if (key === this.key) return;
    this.key = key;
    this.cells_ = null;
    this.marked.clear();
    const doc = this.doc;
    const head = doc.createElement("div");
    head.className = "sw-mesh-head";
    const title = doc.createElement("div");
    title.className = "sw-pane-title";
    head.append(title);
    if (coords) head.append(this.modeToggle(mode));
    const body = doc.createElement("div");
    body.className = "sw-mesh-body";
    const phys = mode === "physical" ? physicalLayout(layout.devices) : null;
    if (phys) drawPhysical(doc, colorOf, phys, title, body, width, mesh?.domain_hosts);
    else this.axes.draw(layout, title, body, width, colorOf);
    const links = linksNote(doc, mesh);
    if (links) body.append(links);
    this.cellsRoot = body;
    const nodes: HTMLElement[] = [head, body];
    const legend = this.colorKey.build(layout, this.scheme);
    if (legend) nodes.push(legend);
    this.el.replaceChildren(...nodes);
    this.paint.apply(() => this.cells, true);
    this.partners.clear();
    this.setHighlight(this.hl.related, this.hl.found, this.hl.pinned, this.hl.dim);
  }

  private modeToggle(mode: MeshMode): HTMLElement {
    const doc = this.doc;
    const g = doc.createElement("div");
    g.className = "sw-seg";
    g.setAttribute("role", "group");
    g.setAttribute("aria-label", "lay out devices by");
    for (const [m, text, tip] of [
      ["mesh", "mesh axes", "devices in mesh order, by mesh axes"],
      ["physical", "physical", "devices by their physical coords (x across, y down, one panel per z)"],
    ] as const) {
      const b = doc.createElement("button");
      b.type = "button";
      b.className = "sw-seg-btn";
      b.dataset.key = `mesh-view-${m}`;
      b.textContent = text;
      b.title = tip;
      b.setAttribute("aria-pressed", String(m === mode));
      b.addEventListener("click", () => {
        this.setMode(m);
        this.el.querySelector<HTMLElement>(`[data-key="mesh-view-${m}"]`)?.focus();
      });
      g.append(b);
    }
    return g;
  }

  /** Tooltip of a device cell: id, coords, and the block it holds (built on hover). */
  tooltip(id: number): string {
    const layout = this.layout;
    if (!layout) return `device ${id}`;
    const i = layout.devices.ids.indexOf(id);
    const parts = [`device ${id}`];
    const c = i >= 0 ? layout.devices.coords?.[i] : undefined;
    if (c && c.length) {
      const core = layout.devices.core_on_chip?.[i];
      parts.push(`coords (${c.join(",")})${core !== undefined ? ` core ${core}` : ""}`);
    }
    const ks = this.byDevice.get(id);
    if (!ks || ks.length === 0) parts.push("holds no part of the array");
    else {
      const b = layout.blocks[ks[0]];
      const ranges = b.i.map((r) => formatHalfOpen(r)).join(" × ") || "(scalar)";
      parts.push(`block ${ks[0]} ${ranges}${b.d.length > 1 ? ` (×${b.d.length} replicated)` : ""}`);
    }
    const extra = this.cb.tooltipExtra?.(id);
    return parts.join(" · ") + (extra ? `\n${extra}` : "");
  }

  /** `related`: devices lit by a hover; `found`: devices matched by the find box; `pinned`: the
   *  pinned block's holders or the pinned device. `dim` fades every other cell. */
  setHighlight(related: Set<number>, found: Set<number>, pinned: Set<number>, dim: boolean): void {
    const prev = this.hl;
    this.hl = { related, found, pinned, dim };
    this.el.classList.toggle("sw-dimming", dim);
    // Only touch the cells whose classes can change: those marked now or last time.
    const touch = new Set<number>(this.marked);
    for (const id of related) touch.add(id);
    for (const id of pinned) touch.add(id);
    for (const id of found) touch.add(id);
    const marked = new Set<number>();
    for (const id of touch) {
      const c = this.cells.get(id);
      if (!c) continue;
      const hl = related.has(id);
      const fd = found.has(id);
      const pn = pinned.has(id);
      c.classList.toggle("sw-hl", hl);
      c.classList.toggle("sw-found", fd);
      c.classList.toggle("sw-pinned", pn);
      if (hl || fd || pn) marked.add(id);
    }
    this.marked = marked;
    // The colour key marks the colours of the found devices.
    if (prev.found !== found || this.colorKey.unmarked) this.colorKey.mark(found);
  }

  /** Paint a layer over the device colours ("heat", "groups"; later ones on top), or lift it
   *  (null). */
  setPaint(layer: string, colors: Map<number, string> | null): void {
    if (!colors && !this.paint.has(layer)) return;
    this.paint.set(layer, colors);
    this.paint.apply(() => this.cells, false);
  }

  /** The colour a device shows now (a layer's, else its device colour). */
  shownColor(id: number): string {
    return this.paint.colorOf(id) ?? this.cb.colorOf(id);
  }

  /** Mark the devices a hovered device sends to (`to`) and receives from (`from`); both empty
   *  to clear. */
  setPartners(to: Set<number>, from: Set<number>): void {
    for (const id of this.partners) {
      const c = this.cells.get(id);
      c?.classList.remove("sw-sendto", "sw-recvfrom");
    }
    this.partners.clear();
    for (const [ids, cls] of [
      [to, "sw-sendto"],
      [from, "sw-recvfrom"],
    ] as const) {
      for (const id of ids) {
        const c = this.cells.get(id);
        if (!c) continue;
        c.classList.add(cls);
        this.partners.add(id);
      }
    }
  }

  cellElements(): Map<number, HTMLElement> {
    return this.cells;
  }
}
