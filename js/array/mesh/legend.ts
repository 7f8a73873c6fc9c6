// The colour key: which colour each device id gets (bands of ids × steps), shown when the scheme
// needs one; the colours of the devices the find box matches are marked in it.
import type { Layout } from "../../wire";
import { colorLegend, type ColorScheme } from "../../shared/colors";

export class ColorKey {
  private open = true;
  /** The swatches by "band:step", found in the chart when the find box first marks one. */
  private cells_: Map<string, HTMLElement> | null = null;
  private chart: HTMLElement | null = null;
  private get cells(): Map<string, HTMLElement> {
    if (!this.cells_) {
      this.cells_ = new Map();
      for (const sw of this.chart?.querySelectorAll<HTMLElement>(".sw-legend-swatch") ?? [])
        this.cells_.set(`${sw.dataset.band}:${sw.dataset.step}`, sw);
    }
    return this.cells_;
  }
  private marked: HTMLElement[] = [];
  private scheme: ColorScheme | null = null;

  constructor(private readonly doc: Document) {}

  /** Whether nothing is marked (a new key, or no found device). */
  get unmarked(): boolean {
    return this.marked.length === 0;
  }

  /** The key for `scheme` over the layout's devices, or null when the scheme needs none. */
  build(layout: Layout, scheme: ColorScheme | null): HTMLElement | null {
    this.cells_ = null;
    this.chart = null;
    this.marked = [];
    this.scheme = scheme;
    if (!scheme) return null;
    // The ids matter only to a scheme that colours by rank (its bands are ranges of positions).
    const ids = !scheme.byRank
      ? undefined
      : layout.mesh
        ? [...layout.mesh.device_ids, ...layout.devices.ids]
        : layout.devices.ids;
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
    // One HTML string, one parse (a key of 12 × 8 colours is 100 elements).
    let html = `<span class="sw-legend-head">${lg.stepTitle}</span>`;
    for (let s = 0; s < steps; s++) html += `<span class="sw-legend-head sw-legend-step">${s}</span>`;
    lg.rows.forEach((row, b) => {
      html += `<span class="sw-legend-band">${row.label}</span>`;
      row.colors.forEach((c, s) => {
        html += `<span class="sw-legend-swatch" style="background:${c}" data-band="${b}" data-step="${s}"></span>`;
      });
    });
    chart.innerHTML = html;
    this.chart = chart;
    // A swatch's tooltip is written when the pointer first reaches it, not for all 96 each time.
    chart.addEventListener("mouseover", (ev) => {
      const sw = ev.target as HTMLElement;
      if (!sw.classList?.contains("sw-legend-swatch") || sw.title) return;
      const row = lg.rows[Number(sw.dataset.band)];
      if (row) sw.title = `ids ${row.label} with ${lg.stepTitle} = ${sw.dataset.step}`;
    });
    det.append(sum, p, chart);
    return det;
  }

  /** Mark the colours of the found devices (a few at most). */
  mark(found: Set<number>): void {
    for (const e of this.marked) e.classList.remove("sw-found");
    this.marked = [];
    if (!this.scheme || found.size === 0 || found.size > 64 || this.cells.size === 0) return;
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
