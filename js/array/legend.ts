// The legend under the grid: what the border, the inner heatmap, the stripes and the labels
// mean, the heatmap's range on its colour ramp, and how the array is split and copied in words
// (Layout.legend, written by Python's shardwidget.legend).
import type { Layout, Stats } from "../wire";
import { ramp } from "../shared/colors";
import { el } from "../shared/dom";
import { formatNumber } from "../shared/text";

/** The heatmap's range in words: "0 → 4095", or why there is none. */
export function heatRange(stats: Stats | null): { text: string; ready: boolean } {
  if (!stats || stats.status === "pending") return { text: "values pending…", ready: false };
  if (stats.status === "unavailable") return { text: stats.message || "no values", ready: false };
  if (!Number.isFinite(stats.vmin) || !Number.isFinite(stats.vmax))
    return { text: "no finite values", ready: false };
  return { text: `${formatNumber(stats.vmin)} → ${formatNumber(stats.vmax)}`, ready: true };
}

/** CSS gradient of the heatmap ramp (the one the thumbnails are drawn with). */
export function rampGradient(steps = 9): string {
  const stops = Array.from({ length: steps }, (_, i) => {
    const [r, g, b] = ramp(i / (steps - 1));
    return `rgb(${r},${g},${b}) ${((i / (steps - 1)) * 100).toFixed(0)}%`;
  });
  return `linear-gradient(90deg, ${stops.join(", ")})`;
}

export class LegendPanel {
  readonly el: HTMLDetailsElement;
  private body: HTMLElement;

  constructor(private readonly doc: Document) {
    this.el = doc.createElement("details");
    this.el.className = "sw-key";
    this.el.open = true;
    const sum = el(doc, "summary", "", "Legend");
    this.body = el(doc, "div", "sw-key-body");
    this.el.append(sum, this.body);
  }

  update(layout: Layout | null, stats: Stats | null): void {
    const doc = this.doc;
    const lg = layout?.legend;
    if (!layout || !lg) {
      this.el.hidden = true;
      return;
    }
    this.el.hidden = false;
    const marks = el(doc, "dl", "sw-key-marks");
    for (const [mark, meaning] of lg.marks) {
      const dt = el(doc, "dt", "", mark);
      const dd = el(doc, "dd", "", meaning);
      if (mark === "inner heatmap") dd.append(this.colorBar(stats));
      marks.append(dt, dd);
    }
    const rep = el(doc, "ul", "sw-key-rep");
    rep.setAttribute("aria-label", "how the array is split and copied");
    for (const line of lg.replication) rep.append(el(doc, "li", "", line));
    this.body.replaceChildren(rep, marks);
  }

  /** The ramp with the array's range at its ends (shown while values are pending too). */
  private colorBar(stats: Stats | null): HTMLElement {
    const doc = this.doc;
    const r = heatRange(stats);
    const wrap = el(doc, "span", "sw-key-bar");
    const bar = el(doc, "span", "sw-key-ramp");
    bar.style.background = rampGradient();
    bar.setAttribute("aria-hidden", "true");
    const lo = el(doc, "span", "sw-key-lo", r.ready ? formatNumber(stats!.vmin) : "");
    const hi = el(doc, "span", "sw-key-hi", r.ready ? formatNumber(stats!.vmax) : "");
    wrap.append(lo, bar, hi);
    wrap.title = `heatmap range: ${r.text}`;
    wrap.dataset.range = r.text;
    if (!r.ready) wrap.append(el(doc, "span", "sw-muted", ` (${r.text})`));
    return wrap;
  }
}
