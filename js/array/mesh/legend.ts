// The colour key: which colour each device id gets (bands of ids × steps), shown when the scheme
// needs one; the colours of the devices the find box matches are marked in it.
import type { Layout } from "../../wire";
import { colorLegend, type ColorScheme } from "../../shared/colors";

export class ColorKey {
  private open = true;
  private cells = new Map<string, HTMLElement>();
  private marked: HTMLElement[] = [];
  private scheme: ColorScheme | null = null;

  constructor(private readonly doc: Document) {}

  /** Whether nothing is marked (a new key, or no found device). */
  get unmarked(): boolean {
    return this.marked.length === 0;
  }

  /** The key for `scheme` over the layout's devices, or null when the scheme needs none. */
  build(layout: Layout, scheme: ColorScheme | null): HTMLElement | null {
    this.cells.clear();
    this.marked = [];
    this.scheme = scheme;
    if (!scheme) return null;
    const ids = layout.mesh ? [...layout.mesh.device_ids, ...layout.devices.ids] : layout.devices.ids;
    const lg = colorLegend(scheme, ids);
    if (!lg) return null;
    const doc = this.doc;
    const det = doc.createElement("details");
    det.className = "sw-legend";
    det.open = this.open;
    det.addEventListener("toggle", () => (this.open = det.open));
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
        this.cells.set(`${b}:${s}`, sw);
        chart.append(sw);
      });
    });
    det.append(sum, p, chart);
    return det;
  }

  /** Mark the colours of the found devices (a few at most). */
  mark(found: Set<number>): void {
    for (const e of this.marked) e.classList.remove("sw-found");
    this.marked = [];
    if (!this.scheme || this.cells.size === 0 || found.size === 0 || found.size > 64) return;
    for (const id of found) {
      const pl = this.scheme.place(id);
      const e = pl && this.cells.get(`${pl.band}:${pl.step}`);
      if (e && !e.classList.contains("sw-found")) {
        e.classList.add("sw-found");
        this.marked.push(e);
      }
    }
  }
}
