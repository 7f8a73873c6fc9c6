// Mesh pane: the devices laid out by mesh axes (or the device list when there is no mesh).
import type { Layout } from "./types";
import { textColorOn } from "./colors";
import { textWidth } from "./text";

export interface MeshCallbacks {
  colorOf(id: number): string;
  hoverDevice(id: number | null): void;
  clickDevice(id: number): void;
}

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

export class MeshPane {
  readonly el: HTMLElement;
  private cells = new Map<number, HTMLElement>();
  /** Cells that carry a highlight class. */
  private marked = new Set<number>();
  /** What the cells were drawn from ("" when they must be redrawn). */
  private key = "";

  constructor(
    private readonly doc: Document,
    private readonly cb: MeshCallbacks,
  ) {
    this.el = doc.createElement("section");
    this.el.className = "sw-mesh";
    this.el.setAttribute("aria-label", "devices");
  }

  update(layout: Layout, width: number): void {
    // A new layout on the same mesh (a spec change, the common case) keeps the cells as drawn.
    const mesh = layout.mesh;
    const key = mesh
      ? JSON.stringify([
          mesh,
          width,
          this.cb.colorOf(mesh.device_ids[0] ?? 0),
          this.cb.colorOf(mesh.device_ids[mesh.device_ids.length - 1] ?? 0),
        ])
      : "";
    if (key && key === this.key) return;
    this.key = key;
    this.cells.clear();
    this.marked.clear();
    const doc = this.doc;
    const title = doc.createElement("div");
    title.className = "sw-pane-title";
    const body = doc.createElement("div");
    body.className = "sw-mesh-body";
    if (!mesh) {
      const holders = new Set(layout.blocks.flatMap((b) => b.d));
      title.textContent = `Devices (${layout.devices.ids.length})`;
      const row = doc.createElement("div");
      row.className = "sw-mesh-list";
      for (const id of layout.devices.ids) {
        const c = this.cell(id, 36);
        if (holders.has(id)) c.classList.add("sw-holder");
        row.append(c);
      }
      body.append(row);
      this.el.replaceChildren(title, body);
      return;
    }
    const sizes = mesh.axis_sizes;
    const names = mesh.axis_names;
    title.textContent = `Mesh ${names.map((n, i) => `${n}=${sizes[i]}`).join(" × ")}`;
    title.title = `mesh axes (${mesh.axis_types.join(", ")}); devices in mesh order`;
    const s = meshCellSize(sizes, width);
    const gap = s >= 10 ? 2 : 1;
    const ids = mesh.device_ids;
    const k = sizes.length;
    const grid2 = (offset: number, rows: number, cols: number, rowName: string, colName: string, labels: boolean) => {
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
      for (let r = 0; r < rows; r++)
        for (let c = 0; c < cols; c++) {
          const id = ids[offset + r * cols + c];
          if (id !== undefined) g.append(this.cell(id, s));
        }
      inner.append(g);
      box.append(inner);
      return box;
    };
    if (k === 1) {
      const n = sizes[0];
      const perRow = Math.max(1, Math.min(n, Math.floor((Math.max(120, width - 36)) / (s + gap))));
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
    this.el.replaceChildren(title, body);
  }

  private cell(id: number, s: number): HTMLElement {
    const c = this.doc.createElement("div");
    c.className = "sw-dev";
    c.dataset.device = String(id);
    const color = this.cb.colorOf(id);
    c.style.background = color;
    c.style.width = `${s}px`;
    c.style.height = `${s}px`;
    c.title = `device ${id}`;
    const fs = s >= 22 && textWidth(String(id), 12) <= s - 4 ? 12 : 10;
    if (s >= 12 && textWidth(String(id), fs) <= s - 2) {
      c.textContent = String(id);
      c.style.color = textColorOn(color);
      c.style.fontSize = `${fs}px`;
    }
    c.addEventListener("mouseenter", () => this.cb.hoverDevice(id));
    c.addEventListener("mouseleave", () => this.cb.hoverDevice(null));
    c.addEventListener("click", () => this.cb.clickDevice(id));
    this.cells.set(id, c);
    return c;
  }

  setHighlight(related: Set<number>, found: number | null, pinned: Set<number>, dim: boolean): void {
    this.el.classList.toggle("sw-dimming", dim);
    // Only touch the cells whose classes can change: those marked now or last time.
    const touch = new Set<number>(this.marked);
    for (const id of related) touch.add(id);
    for (const id of pinned) touch.add(id);
    if (found !== null) touch.add(found);
    const marked = new Set<number>();
    for (const id of touch) {
      const c = this.cells.get(id);
      if (!c) continue;
      const hl = related.has(id);
      const fd = found === id;
      const pn = pinned.has(id);
      c.classList.toggle("sw-hl", hl);
      c.classList.toggle("sw-found", fd);
      c.classList.toggle("sw-pinned", pn);
      if (hl || fd || pn) marked.add(id);
    }
    this.marked = marked;
  }

  cellElements(): Map<number, HTMLElement> {
    return this.cells;
  }
}
