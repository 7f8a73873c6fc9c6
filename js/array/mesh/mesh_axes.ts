// The devices by mesh axes: one grid for 1 or 2 axes, small multiples (a grid per panel) for 3
// or 4; or, with no mesh, the device list. Built as HTML strings (4096 cells parse in one go).
import type { Layout } from "../../wire";
import { textWidth } from "../../shared/text";
import {
  bandCaption,
  CELL_A11Y,
  cellHtml,
  cellLabel,
  cellMarkup,
  listCellSize,
  meshCellSize,
  meshFit,
  meshGridStyle,
  MESH_MAX_HEIGHT,
  type CellLabel,
  type MeshFit,
} from "./geometry";

/** Builds the cells of mesh rows [r0, r1) × columns [c0, c1) of the rows × cols grid at `offset`
 *  (ids in mesh order), s px each, `gap` px apart, as one grid element. */
type Cells = (
  offset: number,
  cols: number,
  r: [number, number],
  c: [number, number],
  s: number,
  gap: number,
) => HTMLElement;

/** Draws one pane's worth of device cells into `title` and `body`. Each shape of mesh (one axis,
 *  two, three or four) and each fold is its own method: a first render compiles only the code its
 *  mesh draws (V8 compiles a function whole, the first time it runs). */
export class MeshAxesDrawing {
  /** The colours of the drawing under way (given to draw). */
  private colorOf: (id: number) => string = () => "#cccccc";

  constructor(private readonly doc: Document) {}

  private cellHtml(id: number, w: number, h: number, focusable: boolean): string {
    return cellHtml(id, this.colorOf(id), w, h, focusable);
  }

  /** Draw `layout`'s cells, coloured by `colorOf`. */
  draw(layout: Layout, title: HTMLElement, body: HTMLElement, width: number, colorOf: (id: number) => string): void {
    this.colorOf = colorOf;
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

  /** By mesh axes: rows and columns are the last two axes, panels the ones before. A long axis
   *  folds (meshFit) so that the pane keeps about the grid's height at any mesh shape. */
  private buildMesh(layout: Layout, title: HTMLElement, body: HTMLElement, width: number): void {
    const doc = this.doc;
    const mesh = layout.mesh!;
    const sizes = mesh.axis_sizes;
    const names = mesh.axis_names;
    title.textContent = `Mesh ${names.map((n, i) => `${n}=${sizes[i]}`).join(" × ")}`;
    title.title = `mesh axes (${mesh.axis_types.join(", ")}); devices in mesh order`;
    const ids = mesh.device_ids;
    const k = sizes.length;
    const focusable = ids.length <= 64;
    const cells: Cells = (offset, cols, [r0, r1], [c0, c1], s, gap) => {
      const g = doc.createElement("div");
      g.className = "sw-mesh-grid";
      g.style.cssText = meshGridStyle(c1 - c0, s, gap);
      const colorOf = this.colorOf;
      const a11y = focusable ? CELL_A11Y : "";
      // The label of an id depends on its number of digits only: worked out once a length.
      const labels: (CellLabel | null | undefined)[] = [];
      let html = "";
      for (let r = r0; r < r1; r++)
        for (let c = c0; c < c1; c++) {
          const id = ids[offset + r * cols + c];
          if (id === undefined) continue;
          const color = colorOf(id);
          const n = String(id).length;
          let lab = labels[n];
          if (lab === undefined) lab = labels[n] = cellLabel(n, s, s);
          html += cellMarkup(id, color, lab, a11y);
        }
      g.innerHTML = html;
      return g;
    };
    if (k === 2) body.append(this.folded(sizes[0], sizes[1], names[0], names[1], width, cells));
    else if (k === 1) this.row(sizes[0], names[0], body, width, cells);
    else this.panels(sizes, names, body, width, cells);
  }

  /** A boxed rows × cols grid of the cells at `offset`. */
  private grid(offset: number, rows: number, cols: number, s: number, cells: Cells): HTMLElement {
    const box = this.doc.createElement("div");
    box.className = "sw-mesh-grid-box";
    box.append(cells(offset, cols, [0, rows], [0, cols], s, s >= 10 ? 2 : 1));
    return box;
  }

  /** One mesh axis: the devices in lines that wrap at the pane's width. */
  private row(n: number, name: string, body: HTMLElement, width: number, cells: Cells): void {
    const s = listCellSize(n, width);
    const gap = s >= 10 ? 2 : 1;
    const perRow = Math.max(1, Math.min(n, Math.floor(Math.max(120, width - 36) / (s + gap))));
    body.append(this.grid(0, Math.ceil(n / perRow), perRow, s, cells));
    const lab = this.doc.createElement("div");
    lab.className = "sw-mesh-axis sw-mesh-axis-col";
    lab.textContent = `${name}=${n} →${perRow < n ? ` (wrapped, ${perRow} a line)` : ""}`;
    body.prepend(lab);
  }

  /** Three or four mesh axes: small multiples, a panel per index of the first one or two. */
  private panels(sizes: number[], names: string[], body: HTMLElement, width: number, cells: Cells): void {
    const doc = this.doc;
    const k = sizes.length;
    const outer = k === 3 ? [sizes[0]] : [sizes[0], sizes[1]];
    const inner = k === 3 ? [sizes[1], sizes[2]] : [sizes[2], sizes[3]];
    const innerNames = k === 3 ? [names[1], names[2]] : [names[2], names[3]];
    const per = inner[0] * inner[1];
    const s = panelCellSize(sizes, outer, inner, width);
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
      panel.append(cap, this.grid(p * per, inner[0], inner[1], s, cells));
      multiples.append(panel);
    }
    if (k === 4) multiples.classList.add("sw-mesh-multiples-grid");
    body.append(multiples);
  }

  /** A rows × cols grid of the devices, a long axis folded (meshFit): rows into strips side by
   *  side, or columns into bands one above the other, each captioned with the range it holds. */
  private folded(
    rows: number,
    cols: number,
    rowName: string,
    colName: string,
    width: number,
    cells: Cells,
  ): HTMLElement {
    const doc = this.doc;
    const f = meshFit(rows, cols, width);
    const box = doc.createElement("div");
    box.className = "sw-mesh-grid-box";
    const top = doc.createElement("div");
    top.className = "sw-mesh-axis sw-mesh-axis-col";
    const inner = doc.createElement("div");
    inner.className = "sw-mesh-inner";
    if (f.strips > 1) {
      // Folded rows: the row axis is named on the top line (a vertical label would outgrow
      // the strips).
      top.textContent = `${rowName}=${rows} ↓ in ${f.strips} strips of ${f.perStrip} · ${colName}=${cols} →`;
    } else {
      top.textContent = `${colName}=${cols} →${f.bands > 1 ? ` in ${f.bands} bands of ${f.perBand}` : ""}`;
      top.style.marginLeft = "18px";
      const left = doc.createElement("div");
      left.className = "sw-mesh-axis sw-mesh-axis-row";
      left.textContent = `${rowName}=${rows} →`;
      inner.append(left);
    }
    if (f.strips > 1) inner.append(this.strips(rows, cols, rowName, f, cells));
    else if (f.bands > 1) inner.append(this.bands(rows, cols, colName, f, cells));
    else inner.append(cells(0, cols, [0, rows], [0, cols], f.cell, f.gap));
    box.append(top, inner);
    return box;
  }

  /** A fold's caption: its first index (`text`), the range it holds as the tooltip. */
  private caption(text: string, tip: string): HTMLElement {
    const t = this.doc.createElement("div");
    t.className = "sw-mesh-fold-title";
    t.textContent = text;
    t.title = tip;
    return t;
  }

  /** Rows folded into strips side by side, each captioned with its first row. */
  private strips(rows: number, cols: number, rowName: string, f: MeshFit, cells: Cells): HTMLElement {
    const doc = this.doc;
    const folds = doc.createElement("div");
    folds.className = "sw-mesh-folds";
    folds.style.gap = `${f.foldGap}px`;
    // Strips thinner than their caption (4096×1: 3 px strips) caption every k-th one.
    const stripW = cols * (f.cell + f.gap) - f.gap;
    const every = Math.ceil((textWidth(String(rows), 9) + 2) / (stripW + f.foldGap));
    for (let r0 = 0, i = 0; r0 < rows; r0 += f.perStrip, i++) {
      const r1 = Math.min(rows, r0 + f.perStrip);
      const strip = doc.createElement("div");
      strip.className = "sw-mesh-strip";
      strip.style.width = `${stripW}px`;
      strip.append(
        this.caption(i % every === 0 ? String(r0) : "", `${rowName} ${r0}–${r1 - 1}`),
        cells(0, cols, [r0, r1], [0, cols], f.cell, f.gap),
      );
      folds.append(strip);
    }
    return folds;
  }

  /** Columns folded into bands one above the other, each captioned with its range. */
  private bands(rows: number, cols: number, colName: string, f: MeshFit, cells: Cells): HTMLElement {
    const doc = this.doc;
    const bands = doc.createElement("div");
    bands.className = "sw-mesh-bands";
    bands.style.gap = `${f.foldGap}px`;
    for (let c0 = 0; c0 < cols; c0 += f.perBand) {
      const c1 = Math.min(cols, c0 + f.perBand);
      const band = doc.createElement("div");
      band.className = "sw-mesh-band";
      band.title = `${colName} ${c0}–${c1 - 1}`;
      if (bandCaption(rows * (f.cell + f.gap)) > 0) band.append(this.caption(band.title, ""));
      band.append(cells(0, cols, [0, rows], [c0, c1], f.cell, f.gap));
      bands.append(band);
    }
    return bands;
  }
}

/** Cell size for small multiples (3 or 4 mesh axes): the width's cell size, smaller (down to
 *  3 px) until the panels keep to MESH_MAX_HEIGHT. */
function panelCellSize(sizes: number[], outer: number[], inner: number[], width: number): number {
  const w = Math.max(120, width - 36);
  const nPanels = outer.reduce((a, b) => a * b, 1);
  let s = meshCellSize(sizes, width);
  for (; s > 3; s--) {
    const step = s + (s >= 10 ? 2 : 1);
    const across =
      outer.length === 2 ? outer[1] : Math.max(1, Math.floor((w + 10) / (inner[1] * step + 10)));
    const height = Math.ceil(nPanels / across) * (inner[0] * step + 18);
    if (height <= MESH_MAX_HEIGHT) break;
  }
  return s;
}
