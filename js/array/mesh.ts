// Mesh pane: the devices laid out by mesh axes (or the device list when there is no mesh), or —
// when the devices have physical coordinates (TPU) — by those coordinates; and the colour key.
import type { DeviceTable, Layout } from "../wire";
import { colorLegend, textColorOn, type ColorScheme } from "../shared/colors";
import { blocksByDevice } from "./blocks";
import { formatHalfOpen, plural, textWidth } from "../shared/text";

export interface MeshCallbacks {
  colorOf(id: number): string;
  hoverDevice(id: number | null): void;
  clickDevice(id: number): void;
}

export type MeshMode = "mesh" | "physical";

function clamp(x: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, x));
}

/** Cell size (px) for a mesh with `sizes` in `width` px. */
export function meshCellSize(sizes: number[], width: number): number {
  const w = Math.max(120, width - 36);
  const k = sizes.length;
  if (k <= 1) {
    const n = sizes[0] ?? 1;
    return clamp(Math.floor(w / Math.min(n, 16)) - 2, 6, 40);
  }
  if (k === 2) return clamp(Math.floor(w / sizes[1]) - 2, 4, 40);
  if (k === 3) {
    const panelsPerRow = Math.min(sizes[0], 4);
    return clamp(Math.floor((w - panelsPerRow * 10) / (sizes[2] * panelsPerRow)) - 2, 4, 32);
  }
  return clamp(Math.floor((w - sizes[1] * 10) / (sizes[3] * sizes[1])) - 2, 4, 28);
}

// ---- physical layout (pure) --------------------------------------------------------------------

export interface PhysicalPlace {
  id: number;
  /** Column (x − min x) and row (y − min y) of the chip in its panel. */
  col: number;
  row: number;
  /** Panel index (one per distinct z, or per distinct coords[2:] when there are more). */
  panel: number;
  /** Sub-cell of the chip (devices on one chip, ordered by core_on_chip then id). */
  sub: number;
  coords: number[];
  core: number | null;
}

export interface PhysicalLayout {
  /** Chip columns (x) and rows (y) per panel; x0 / y0 are the smallest x / y. */
  cols: number;
  rows: number;
  x0: number;
  y0: number;
  /** Panel labels ("z=0", …) in order. */
  panels: string[];
  /** Sub-cells per chip (the most devices found on one chip). */
  perChip: number;
  places: PhysicalPlace[];
}

/** Whether the devices have physical coords (so that the physical view is offered). */
export function hasCoords(devices: DeviceTable): boolean {
  const coords = devices.coords;
  return !!coords && coords.length === devices.ids.length && coords.some((c) => c && c.length > 0);
}

/** Where each device goes in the physical view, or null when the devices have no coords. */
export function physicalLayout(devices: DeviceTable): PhysicalLayout | null {
  const coords = devices.coords;
  if (!coords || !hasCoords(devices)) return null;
  const cs = coords.map((c) => c ?? []);
  const at = (c: number[], k: number) => c[k] ?? 0;
  const xs = cs.map((c) => at(c, 0));
  const ys = cs.map((c) => at(c, 1));
  const x0 = Math.min(...xs);
  const y0 = Math.min(...ys);
  const cols = Math.max(...xs) - x0 + 1;
  const rows = Math.max(...ys) - y0 + 1;
  // Panels: one per distinct coords[2:] (z, and any further coordinate), in numeric order.
  const rest = cs.map((c) => c.slice(2));
  const restKeys = [...new Map(rest.map((r) => [r.join(","), r])).values()].sort((a, b) => {
    for (let i = Math.max(a.length, b.length) - 1; i >= 0; i--) {
      const d = (a[i] ?? 0) - (b[i] ?? 0);
      if (d) return d;
    }
    return 0;
  });
  const names = ["z", "w", "v", "u"];
  const panels = restKeys.map((r) =>
    r.length ? r.map((v, i) => `${names[i] ?? `c${i + 2}`}=${v}`).join(", ") : "",
  );
  const panelOf = new Map(restKeys.map((r, i) => [r.join(","), i]));
  // Devices on one chip (same coords), ordered by core then id.
  const chips = new Map<string, number[]>();
  cs.forEach((c, i) => {
    const k = c.join(",");
    let l = chips.get(k);
    if (!l) chips.set(k, (l = []));
    l.push(i);
  });
  const core = devices.core_on_chip;
  const places: PhysicalPlace[] = new Array(devices.ids.length);
  let perChip = 1;
  for (const members of chips.values()) {
    members.sort((a, b) => (core ? core[a] - core[b] : 0) || devices.ids[a] - devices.ids[b]);
    perChip = Math.max(perChip, members.length);
    members.forEach((i, sub) => {
      places[i] = {
        id: devices.ids[i],
        col: xs[i] - x0,
        row: ys[i] - y0,
        panel: panelOf.get(rest[i].join(","))!,
        sub,
        coords: cs[i],
        core: core ? core[i] : null,
      };
    });
  }
  return { cols, rows, x0, y0, panels, perChip, places };
}

/** Sub-cell grid of a chip: [columns, rows] for `n` devices on it (1×1, 2×1, 2×2, …); with
 *  `stacked`, 2 or 3 devices go one above the other instead. */
export function chipSplit(n: number, stacked = false): [number, number] {
  if (n <= 1) return [1, 1];
  if (n <= 3) return stacked ? [1, n] : [n, 1];
  const c = Math.ceil(Math.sqrt(n));
  return [c, Math.ceil(n / c)];
}

/** The tallest the physical view should get before it trades chip size for more panels per row. */
const PHYS_MAX_HEIGHT = 520;

/** Panels per row and chip size (px) for a physical layout in `width` px: the biggest chips that
 *  keep the view under PHYS_MAX_HEIGHT (else the most panels per row). */
export function physicalSizing(p: PhysicalLayout, width: number): { perRow: number; chip: number } {
  const w = Math.max(140, width - 8);
  const tick = 18; // the y tick column of each panel
  const panelGap = 12;
  const cap = p.perChip > 1 ? 56 : 44;
  const nPanels = Math.max(1, p.panels.length);
  type Fit = { perRow: number; chip: number; height: number };
  let best: Fit | null = null;
  let flattest: Fit | null = null;
  for (let perRow = 1; perRow <= Math.min(nPanels, 8); perRow++) {
    const chip = clamp(Math.floor((w - perRow * (tick + panelGap)) / (perRow * p.cols)) - 3, 4, cap);
    const across = perRow * (p.cols * (chip + 3) + tick + panelGap);
    if (perRow > 1 && across > w) break; // the panels no longer fit side by side
    const height = Math.ceil(nPanels / perRow) * (p.rows * (chip + 3) + 30);
    const c = { perRow, chip, height };
    if (height <= PHYS_MAX_HEIGHT && (!best || chip > best.chip || (chip === best.chip && height < best.height)))
      best = c;
    if (!flattest || height < flattest.height) flattest = c;
  }
  const pick = best ?? flattest!;
  return { perRow: pick.perRow, chip: pick.chip };
}

/** Sub-cell size and arrangement in a chip of `chip` px (chips under 12 px have no frame): side
 *  by side, unless only stacking leaves room for the longest id. */
export function chipCells(chip: number, perChip: number, maxId: number): { cols: number; w: number; h: number } {
  const inner = chip >= 12 ? chip - 4 : chip; // 1 px border + 1 px padding each side
  const gap = chip >= 12 ? 1 : 0;
  const size = (stacked: boolean) => {
    const [sc, sr] = chipSplit(perChip, stacked);
    return {
      cols: sc,
      w: Math.max(1, Math.floor((inner - (sc - 1) * gap) / sc)),
      h: Math.max(1, Math.floor((inner - (sr - 1) * gap) / sr)),
    };
  };
  const fits = (c: { w: number; h: number }) => c.h >= 12 && textWidth(String(maxId), 10) <= c.w - 2;
  const side = size(false);
  if (fits(side) || perChip === 1 || perChip > 3) return side;
  const stacked = size(true);
  return fits(stacked) ? stacked : side;
}

// ---- the pane ----------------------------------------------------------------------------------

export class MeshPane {
  readonly el: HTMLElement;
  private cells = new Map<number, HTMLElement>();
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
  private legendOpen = true;
  private legendCells = new Map<string, HTMLElement>();
  private legendMarked: HTMLElement[] = [];
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

  update(layout: Layout, width: number, scheme?: ColorScheme): void {
    this.layout = layout;
    this.width = width;
    if (scheme) this.scheme = scheme;
    if (layout.key !== this.byDeviceKey) {
      this.byDevice = blocksByDevice(layout);
      this.byDeviceKey = layout.key;
    }
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
      this.cb.colorOf(layout.devices.ids[0] ?? 0),
      this.cb.colorOf(layout.devices.ids[layout.devices.ids.length - 1] ?? 0),
      mesh ? null : layout.blocks.map((b) => b.d),
    ]);
    if (key === this.key) return;
    this.key = key;
    this.cells.clear();
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
    if (phys) this.buildPhysical(phys, title, body, width);
    else if (!mesh) this.buildList(layout, title, body);
    else this.buildMesh(layout, title, body, width);
    this.collect(body);
    const nodes: HTMLElement[] = [head, body];
    const legend = this.buildLegend(layout);
    if (legend) nodes.push(legend);
    this.el.replaceChildren(...nodes);
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

  private buildList(layout: Layout, title: HTMLElement, body: HTMLElement): void {
    const holders = new Set(layout.blocks.flatMap((b) => b.d));
    title.textContent = `Devices (${layout.devices.ids.length})`;
    const row = this.doc.createElement("div");
    row.className = "sw-mesh-list";
    const focusable = layout.devices.ids.length <= 64;
    row.innerHTML = layout.devices.ids.map((id) => this.cellHtml(id, 36, 36, focusable)).join("");
    for (const c of row.querySelectorAll<HTMLElement>(".sw-dev"))
      if (holders.has(Number(c.dataset.device))) c.classList.add("sw-holder");
    body.append(row);
  }

  private buildMesh(layout: Layout, title: HTMLElement, body: HTMLElement, width: number): void {
    const doc = this.doc;
    const mesh = layout.mesh!;
    const sizes = mesh.axis_sizes;
    const names = mesh.axis_names;
    title.textContent = `Mesh ${names.map((n, i) => `${n}=${sizes[i]}`).join(" × ")}`;
    title.title = `mesh axes (${mesh.axis_types.join(", ")}); devices in mesh order`;
    const s = meshCellSize(sizes, width);
    const gap = s >= 10 ? 2 : 1;
    const ids = mesh.device_ids;
    const k = sizes.length;
    const focusable = ids.length <= 64;
    const grid2 = (
      offset: number,
      rows: number,
      cols: number,
      rowName: string,
      colName: string,
      labels: boolean,
    ) => {
      const box = doc.createElement("div");
      box.className = "sw-mesh-grid-box";
      if (labels) {
        const top = doc.createElement("div");
        top.className = "sw-mesh-axis sw-mesh-axis-col";
        top.textContent = `${colName}=${cols} →`;
        top.style.marginLeft = rowName ? "18px" : "0";
        box.append(top);
      }
      const inner = doc.createElement("div");
      inner.className = "sw-mesh-inner";
      if (labels && rowName) {
        const left = doc.createElement("div");
        left.className = "sw-mesh-axis sw-mesh-axis-row";
        left.textContent = `${rowName}=${rows} →`;
        inner.append(left);
      }
      const g = doc.createElement("div");
      g.className = "sw-mesh-grid";
      g.style.gridTemplateColumns = `repeat(${cols}, ${s}px)`;
      g.style.gap = `${gap}px`;
      const html: string[] = [];
      for (let r = 0; r < rows; r++)
        for (let c = 0; c < cols; c++) {
          const id = ids[offset + r * cols + c];
          if (id !== undefined) html.push(this.cellHtml(id, s, s, focusable));
        }
      g.innerHTML = html.join("");
      inner.append(g);
      box.append(inner);
      return box;
    };
    if (k === 1) {
      const n = sizes[0];
      const perRow = Math.max(1, Math.min(n, Math.floor(Math.max(120, width - 36) / (s + gap))));
      body.append(grid2(0, Math.ceil(n / perRow), perRow, "", names[0], false));
      const lab = doc.createElement("div");
      lab.className = "sw-mesh-axis sw-mesh-axis-col";
      lab.textContent = `${names[0]}=${n} →`;
      body.prepend(lab);
    } else if (k === 2) {
      body.append(grid2(0, sizes[0], sizes[1], names[0], names[1], true));
    } else {
      const outer = k === 3 ? [sizes[0]] : [sizes[0], sizes[1]];
      const inner = k === 3 ? [sizes[1], sizes[2]] : [sizes[2], sizes[3]];
      const innerNames = k === 3 ? [names[1], names[2]] : [names[2], names[3]];
      const per = inner[0] * inner[1];
      const note = doc.createElement("div");
      note.className = "sw-mesh-axis";
      note.textContent =
        k === 3
          ? `panels: ${names[0]}=${sizes[0]} · rows ${innerNames[0]}=${inner[0]} · columns ${innerNames[1]}=${inner[1]}`
          : `panels: ${names[0]}=${sizes[0]} ↓ × ${names[1]}=${sizes[1]} → · rows ${innerNames[0]}=${inner[0]} · columns ${innerNames[1]}=${inner[1]}`;
      body.append(note);
      const multiples = doc.createElement("div");
      multiples.className = "sw-mesh-multiples";
      if (k === 4) multiples.style.gridTemplateColumns = `repeat(${sizes[1]}, auto)`;
      const nPanels = outer.reduce((a, b) => a * b, 1);
      for (let p = 0; p < nPanels; p++) {
        const panel = doc.createElement("div");
        panel.className = "sw-mesh-panel";
        const cap = doc.createElement("div");
        cap.className = "sw-mesh-panel-title";
        cap.textContent =
          k === 3
            ? `${names[0]}=${p}`
            : `${names[0]}=${Math.floor(p / sizes[1])}, ${names[1]}=${p % sizes[1]}`;
        panel.append(cap, grid2(p * per, inner[0], inner[1], "", "", false));
        multiples.append(panel);
      }
      if (k === 4) multiples.classList.add("sw-mesh-multiples-grid");
      body.append(multiples);
    }
  }

  /** Devices by physical coords: x across, y down, one small grid per z; a chip's devices (cores)
   *  side by side inside the chip's cell. */
  private buildPhysical(
    p: PhysicalLayout,
    title: HTMLElement,
    body: HTMLElement,
    width: number,
  ): void {
    const doc = this.doc;
    const n = p.places.length;
    const nChips = new Set(p.places.map((q) => q.coords.join(","))).size;
    title.textContent = `Physical: ${plural(nChips, "chip")}${p.perChip > 1 ? ` × ${p.perChip} cores` : ""}`;
    title.title = `${plural(n, "device")} by physical coords`;
    const { perRow, chip } = physicalSizing(p, width);
    let maxId = 0;
    for (const q of p.places) maxId = Math.max(maxId, q.id);
    const sub = chipCells(chip, p.perChip, maxId);
    // Ids on every device or on none (not just on the short ones).
    const labels = sub.h >= 12 && textWidth(String(maxId), 10) <= sub.w - 2;
    const gap = chip >= 10 ? 3 : 1;
    const ticks = chip >= 12;
    const note = doc.createElement("div");
    note.className = "sw-mesh-axis";
    const span = (lo: number, k: number) => (k > 1 ? `${lo}–${lo + k - 1}` : String(lo));
    const parts = [`x ${span(p.x0, p.cols)} →`, `y ${span(p.y0, p.rows)} ↓`];
    if (p.panels.length > 1) parts.push(`a grid per ${p.panels[0].split("=")[0]}`);
    if (p.perChip > 1) parts.push(`${p.perChip} cores per chip`);
    note.textContent = parts.join(" · ");
    body.append(note);
    const focusable = n <= 64;
    // chip (panel, column, row) -> its devices, in sub-cell order
    const chips = new Map<number, PhysicalPlace[]>();
    const chipKey = (panel: number, c: number, r: number) => (panel * p.rows + r) * p.cols + c;
    for (const q of p.places) {
      const k = chipKey(q.panel, q.col, q.row);
      let l = chips.get(k);
      if (!l) chips.set(k, (l = []));
      l.push(q);
    }
    for (const l of chips.values()) l.sort((a, b) => a.sub - b.sub);
    const chipClass = chip >= 12 ? "sw-chipcell" : "sw-chipcell sw-chip-bare";
    const chipStyle = `width:${chip}px;height:${chip}px`;
    // The chip's devices wrap in a flex box after `sub.cols` of them (cheaper than a grid each).
    const html: string[] = [];
    p.panels.forEach((label, pi) => {
      html.push(`<div class="sw-phys-panel" data-panel="${label || "all"}">`);
      if (label) html.push(`<div class="sw-mesh-panel-title">${label}</div>`);
      html.push(
        `<div class="sw-phys-grid sw-mesh-grid" style="grid-template-columns:${ticks ? "auto " : ""}` +
          `repeat(${p.cols}, ${chip}px);gap:${gap}px">`,
      );
      if (ticks) {
        html.push("<span></span>");
        for (let c = 0; c < p.cols; c++) html.push(`<span class="sw-phys-tick">${p.x0 + c}</span>`);
      }
      for (let r = 0; r < p.rows; r++) {
        if (ticks) html.push(`<span class="sw-phys-tick sw-phys-tick-row">${p.y0 + r}</span>`);
        for (let c = 0; c < p.cols; c++) {
          const members = chips.get(chipKey(pi, c, r));
          if (!members) {
            const where = `x=${p.x0 + c}, y=${p.y0 + r}${label ? `, ${label}` : ""}`;
            html.push(`<div class="${chipClass} sw-chip-empty" style="${chipStyle}" title="no device of this array at ${where}"></div>`);
            continue;
          }
          html.push(`<div class="${chipClass}" style="${chipStyle}" data-coords="${members[0].coords.join(",")}">`);
          for (const q of members)
            html.push(this.cellHtml(q.id, sub.w, sub.h, focusable, labels, ` data-sub="${q.sub}"`));
          html.push("</div>");
        }
      }
      html.push("</div></div>");
    });
    const multiples = doc.createElement("div");
    multiples.className = "sw-phys";
    multiples.style.gridTemplateColumns = `repeat(${Math.min(perRow, p.panels.length)}, max-content)`;
    multiples.innerHTML = html.join("");
    body.append(multiples);
  }


  private buildLegend(layout: Layout): HTMLElement | null {
    this.legendCells.clear();
    this.legendMarked = [];
    const scheme = this.scheme;
    if (!scheme) return null;
    const ids = layout.mesh ? [...layout.mesh.device_ids, ...layout.devices.ids] : layout.devices.ids;
    const lg = colorLegend(scheme, ids);
    if (!lg) return null;
    const doc = this.doc;
    const det = doc.createElement("details");
    det.className = "sw-legend";
    det.open = this.legendOpen;
    det.addEventListener("toggle", () => (this.legendOpen = det.open));
    const sum = doc.createElement("summary");
    sum.textContent = "Colour key";
    const p = doc.createElement("p");
    p.className = "sw-legend-text";
    p.textContent = lg.summary;
    const chart = doc.createElement("div");
    chart.className = "sw-legend-chart";
    chart.setAttribute("aria-hidden", "true");
    const steps = lg.rows[0]?.colors.length ?? 0;
    chart.style.gridTemplateColumns = `max-content repeat(${steps}, 14px)`;
    const corner = doc.createElement("span");
    corner.className = "sw-legend-head";
    corner.textContent = lg.stepTitle;
    chart.append(corner);
    for (let s = 0; s < steps; s++) {
      const h = doc.createElement("span");
      h.className = "sw-legend-head sw-legend-step";
      h.textContent = String(s);
      chart.append(h);
    }
    lg.rows.forEach((row, b) => {
      const l = doc.createElement("span");
      l.className = "sw-legend-band";
      l.textContent = row.label;
      chart.append(l);
      row.colors.forEach((c, s) => {
        const sw = doc.createElement("span");
        sw.className = "sw-legend-swatch";
        sw.style.background = c;
        sw.title = `ids ${row.label} with ${lg.stepTitle} = ${s}`;
        sw.dataset.band = String(b);
        sw.dataset.step = String(s);
        this.legendCells.set(`${b}:${s}`, sw);
        chart.append(sw);
      });
    });
    det.append(sum, p, chart);
    return det;
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
    return parts.join(" · ");
  }

  /** One device cell as HTML (cells are parsed a grid at a time: 4096 of them in one go). */
  private cellHtml(id: number, w: number, h: number, focusable: boolean, label = true, extra = ""): string {
    const color = this.cb.colorOf(id);
    let style = `background:${color};width:${w}px;height:${h}px`;
    let text = "";
    const s = Math.min(w, h);
    const fs = s >= 22 && textWidth(String(id), 12) <= w - 4 ? 12 : 10;
    if (label && h >= 12 && w >= 8 && textWidth(String(id), fs) <= w - 2) {
      text = String(id);
      style += `;color:${textColorOn(color)};font-size:${fs}px`;
    }
    const a11y = focusable ? ` tabindex="0" role="button" aria-label="device ${id}"` : "";
    // The tooltip (id, coords, block) is written when the pointer enters the cell.
    return `<div class="sw-dev" data-device="${id}"${extra} style="${style}"${a11y}>${text}</div>`;
  }

  /** Register the device cells under `root` (after their HTML was parsed). */
  private collect(root: HTMLElement): void {
    for (const c of root.querySelectorAll<HTMLElement>(".sw-dev")) this.cells.set(Number(c.dataset.device), c);
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
    // The colour key marks the colours of the found devices (a few at most).
    if (prev.found !== found || this.legendMarked.length === 0) {
      for (const e of this.legendMarked) e.classList.remove("sw-found");
      this.legendMarked = [];
      if (this.scheme && this.legendCells.size && found.size > 0 && found.size <= 64) {
        for (const id of found) {
          const pl = this.scheme.place(id);
          const e = pl && this.legendCells.get(`${pl.band}:${pl.step}`);
          if (e && !e.classList.contains("sw-found")) {
            e.classList.add("sw-found");
            this.legendMarked.push(e);
          }
        }
      }
    }
  }

  cellElements(): Map<number, HTMLElement> {
    return this.cells;
  }
}
