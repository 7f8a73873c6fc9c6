// The devices by mesh axes: one grid for 1 or 2 axes, small multiples (a grid per panel) for 3
// or 4; or, with no mesh, the device list. Built as HTML strings (4096 cells parse in one go).
import type { Layout } from "../../wire";
import { cellHtml, meshCellSize } from "./geometry";

/** Draws one pane's worth of device cells into `title` and `body`. */
export class MeshAxesDrawing {
  constructor(
    private readonly doc: Document,
    private readonly colorOf: (id: number) => string,
  ) {}

  private cellHtml(id: number, w: number, h: number, focusable: boolean): string {
    return cellHtml(id, this.colorOf(id), w, h, focusable);
  }

  draw(layout: Layout, title: HTMLElement, body: HTMLElement, width: number): void {
    if (layout.mesh) this.buildMesh(layout, title, body, width);
    else this.buildList(layout, title, body);
  }

  /** No mesh: the devices in a row, the ones holding data marked. */
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

  /** By mesh axes: rows and columns are the last two axes, panels the ones before. */
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
}
