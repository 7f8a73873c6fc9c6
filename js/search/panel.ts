// The search panel of the function view: view.search(...)'s candidates as they arrive. A line
// of progress, a table (layout, fit, peak per device, estimated step time, bytes the
// collectives move) in the search's own ranking, and a scatter of peak memory against step
// time with the device memory as a dashed line. A click on a row or a point asks the kernel to
// lay the view out as that candidate (SearchApplyMsg; undo restores). Wire: wire/search.ts.
import { el, tableHead } from "../shared/dom";
import { injectCss } from "../shared/styles";
import { formatBytes, formatSeconds, plural } from "../shared/text";
import type { SearchApplyMsg, SearchRowWire, SearchWire } from "../wire/search";

const CSS = `
.shardwidget .sw-search-head { font-size: 12.5px; margin: 0 0 6px; }
.shardwidget .sw-search-body { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.shardwidget .sw-search-table { border-collapse: collapse; font-size: 12px; }
.shardwidget .sw-search-table th { text-align: left; font-weight: 600; padding: 0 10px 2px 0; }
.shardwidget .sw-search-table td { padding: 1px 10px 1px 0; white-space: nowrap; }
.shardwidget .sw-search-row { cursor: pointer; }
.shardwidget .sw-search-row:hover, .shardwidget .sw-search-row:focus { background: var(--sw-hover, rgba(0,0,0,0.06)); outline: none; }
.shardwidget .sw-search-no td.sw-search-fit { color: var(--sw-error, #b00020); }
.shardwidget .sw-search-svg { width: 320px; height: 220px; }
.shardwidget .sw-search-dot { fill: var(--sw-accent); cursor: pointer; }
.shardwidget .sw-search-dot.sw-search-no { fill: var(--sw-error, #b00020); }
.shardwidget .sw-search-dot.sw-search-unknown { fill: var(--sw-fg2); }
.shardwidget .sw-search-hbm { stroke: var(--sw-error, #b00020); stroke-dasharray: 4 3; stroke-width: 1; }
.shardwidget .sw-search-axis { stroke: var(--sw-fg2); stroke-width: 1; }
.shardwidget .sw-search-label { font-size: 10px; fill: var(--sw-fg2); }
`;

const SVG = "http://www.w3.org/2000/svg";
const W = 320;
const H = 220;
const PAD = { left: 54, right: 10, top: 10, bottom: 30 };

/** "fits", "does not fit" or "unknown". */
export function fitWord(fits: boolean | null): string {
  return fits === null ? "unknown" : fits ? "fits" : "does not fit";
}

/** The progress line: "12 of 20 compiled (3 from the cache) · running · …". */
export function headLine(w: SearchWire): string {
  if (w.kind === "tree") return treeLine(w);
  const state = w.state === "budget" ? "stopped by its time budget" : w.state;
  const parts = [
    `${w.done} of ${plural(w.total, "candidate")} compiled` + (w.cached ? ` (${w.cached} from the cache)` : ""),
    state,
    `by ${w.compiler}`,
    `estimated on ${w.hardware}`,
  ];
  if (w.dropped) parts.push(`${w.dropped} dropped`);
  if (w.failed) parts.push(`${w.failed} failed`);
  return parts.join(" · ");
}

/** A tree's line: its layouts, the chips and the memory they fit in; no step time. */
function treeLine(w: SearchWire): string {
  const parts = [
    `${plural(w.total, "layout")} of the tree, ranked by fit, then bytes per device`,
    `on ${w.compiler}`,
    "step time unknown: a tree has no step (a function view ranks by time)",
  ];
  if (w.dropped) parts.push(`${w.dropped} dropped`);
  return parts.join(" · ");
}

function peakText(r: SearchRowWire): string {
  if (r.peak === null) return "?";
  return r.peak_is_totals ? `${formatBytes(r.peak)} (totals)` : formatBytes(r.peak);
}

/** The panel; `update` redraws it from the newest payload. */
export class SearchPanel {
  readonly el: HTMLElement;
  private doc: Document;
  private send: (msg: SearchApplyMsg) => void;

  constructor(doc: Document, send: (msg: SearchApplyMsg) => void) {
    this.doc = doc;
    this.send = send;
    this.el = el(doc, "div", "sw-search");
  }

  /** Draw `w` (nothing while no search ran); `disabled`: a saved page, no kernel to apply. */
  update(w: SearchWire | undefined, root: HTMLElement, disabled = false): boolean {
    injectCss(root, "shardwidget-search", CSS);
    if (!w || w.state === "none") {
      this.el.replaceChildren();
      return false;
    }
    const apply = disabled ? null : (id: number) => this.send({ type: "search_apply", id });
    const body = el(this.doc, "div", "sw-search-body");
    body.append(this.table(w, apply));
    if (w.kind !== "tree") body.append(scatter(this.doc, w, apply)); // (no step time to plot)
    this.el.replaceChildren(el(this.doc, "p", "sw-search-head", headLine(w)), body);
    return true;
  }

  private table(w: SearchWire, apply: ((id: number) => void) | null): HTMLTableElement {
    const doc = this.doc;
    const t = el(doc, "table", "sw-search-table");
    const held = w.kind === "tree" ? "held per device" : "peak per device";
    t.append(tableHead(doc, ["#", "layout", "fits", held, "est. time", "bytes moved"]));
    const tbody = el(doc, "tbody");
    w.rows.forEach((r, k) => {
      const tr = el(doc, "tr", `sw-search-row${r.fits === false ? " sw-search-no" : ""}`);
      tr.dataset.id = String(r.id);
      tr.title = `${r.name}: ${r.summary}` + (apply ? " (click to lay the view out so)" : "");
      const name = el(doc, "td", "", r.name);
      name.append(el(doc, "div", "sw-muted", r.layout));
      const time = r.step_s === null ? "—" : formatSeconds(r.step_s);
      tr.append(el(doc, "td", "", String(k + 1)), name, el(doc, "td", "sw-search-fit", fitWord(r.fits)));
      tr.append(el(doc, "td", "", peakText(r)), el(doc, "td", "", time), el(doc, "td", "", w.kind === "tree" ? "—" : formatBytes(r.moved)));
      if (apply) {
        tr.tabIndex = 0;
        tr.addEventListener("click", () => apply(r.id));
        tr.addEventListener("keydown", (e) => e.key === "Enter" && apply(r.id));
      }
      tbody.append(tr);
    });
    t.append(tbody);
    return t;
  }
}

function svgEl(doc: Document, tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = doc.createElementNS(SVG, tag) as SVGElement;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** Peak memory (up) against estimated step time (right), the device memory dashed. */
export function scatter(doc: Document, w: SearchWire, apply: ((id: number) => void) | null): SVGSVGElement {
  const svg = svgEl(doc, "svg", { class: "sw-search-svg", viewBox: `0 0 ${W} ${H}`, role: "img" }) as SVGSVGElement;
  const pts = w.rows.filter((r) => r.step_s !== null && r.peak !== null);
  svg.setAttribute("aria-label", `peak memory against estimated step time of ${plural(pts.length, "candidate")}`);
  const tMax = Math.max(1e-12, ...pts.map((r) => r.step_s as number));
  const pHigh = Math.max(1, ...pts.map((r) => r.peak as number));
  // the device memory sets the scale only where it is in view of the peaks (else off the top)
  const mMax = w.hbm !== null && w.hbm <= 4 * pHigh ? Math.max(pHigh, w.hbm) : pHigh;
  const x = (t: number) => PAD.left + (t / tMax) * (W - PAD.left - PAD.right);
  const y = (b: number) => H - PAD.bottom - (b / mMax) * (H - PAD.top - PAD.bottom);
  svg.append(
    svgEl(doc, "line", { class: "sw-search-axis", x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom }),
    svgEl(doc, "line", { class: "sw-search-axis", x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom }),
  );
  label(doc, svg, W - PAD.right, H - 6, "end", `est. step time → ${formatSeconds(tMax)}`);
  label(doc, svg, 2, PAD.top + 8, "start", `peak ↑ ${formatBytes(mMax)}`);
  label(doc, svg, 2, H - PAD.bottom, "start", "0 B");
  if (w.hbm !== null && w.hbm <= mMax) {
    const yh = y(w.hbm);
    svg.append(svgEl(doc, "line", { class: "sw-search-hbm", x1: PAD.left, y1: yh, x2: W - PAD.right, y2: yh }));
    label(doc, svg, W - PAD.right, yh - 3, "end", `device memory ${formatBytes(w.hbm)}`);
  }
  for (const r of pts) {
    const cls = r.fits === null ? " sw-search-unknown" : r.fits ? "" : " sw-search-no";
    const dot = svgEl(doc, "circle", { class: `sw-search-dot${cls}`, cx: x(r.step_s as number), cy: y(r.peak as number), r: 4 });
    dot.dataset.id = String(r.id);
    const title = svgEl(doc, "title", {});
    title.textContent = `${r.name}: ${r.summary}`;
    dot.append(title);
    if (apply) dot.addEventListener("click", () => apply(r.id));
    svg.append(dot);
  }
  return svg;
}

function label(doc: Document, svg: SVGElement, x: number, y: number, anchor: string, text: string): void {
  const t = svgEl(doc, "text", { class: "sw-search-label", x, y, "text-anchor": anchor });
  t.textContent = text;
  svg.append(t);
}
