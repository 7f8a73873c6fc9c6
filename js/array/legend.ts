// The legend under the grid: what the border, the inner heatmap, the stripes and the labels
// mean, the heatmap's range in words (its colour bar is the grid's: grid/pane.ts), and how the
// array is split and copied (Layout.legend, written by Python's shardwidget.legend).
import type { Layout, Stats } from "../wire";
import { el } from "../shared/dom";
import { formatNumber } from "../shared/text";

/** The heatmap's range in words: "0 → 4095", or why there is none. */
export function heatRange(stats: Stats | null): { text: string; ready: boolean } {
  if (!stats || stats.status === "pending") return { text: "values pending…", ready: false };
  if (stats.status === "unavailable") return { text: stats.message || "no values", ready: false };
  if (!Number.isFinite(stats.vmin) || !Number.isFinite(stats.vmax))
    return { text: "no finite values", ready: false };
  if (!stats.thumbs) {
    // No heatmap is drawn: the blocks are too small, the array is 0-d, or no value is finite.
    const finite = stats.blocks.some((r) => r !== null && Number.isFinite(r[0]));
    return { text: finite ? "no heatmap at this size" : "no finite values", ready: false };
  }
  return { text: `${formatNumber(stats.vmin)} → ${formatNumber(stats.vmax)}`, ready: true };
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

  /** `barShown`: whether the grid draws its heatmaps (and the colour bar) now; blocks too small
   *  for one draw none, and the range then says so instead of pointing at a bar. */
  update(layout: Layout | null, stats: Stats | null, barShown = true): void {
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
      // Unreduced: no block has a heatmap, so no range and no bar under the grid (the mark
      // itself says "none: … only partial sums").
      if (mark === "inner heatmap" && layout.unreduced.length === 0) dd.append(this.rangeText(stats, barShown));
      marks.append(dt, dd);
    }
    const rep = el(doc, "ul", "sw-key-rep");
    rep.setAttribute("aria-label", "how the array is split and copied");
    for (const line of lg.replication) rep.append(el(doc, "li", "", line));
    this.body.replaceChildren(rep, marks);
  }

  /** The heatmap's range in words, always (the colour bar under the grid draws it while the
   *  thumbnails are shown; here it is said while values are pending or unavailable too). */
  private rangeText(stats: Stats | null, barShown: boolean): HTMLElement {
    const r = heatRange(stats);
    const where = barShown ? "the bar under the grid" : "no heatmap at this size: the blocks are too small";
    const e = el(this.doc, "span", "sw-key-bar", r.ready ? ` range ${r.text} (${where})` : ` (${r.text})`);
    e.dataset.range = r.text;
    return e;
  }
}
