// The memory panel of the function view: where the memory goes. The bytes live over the
// program (a line per instruction, the hardware's HBM as a dashed line), the peak marked and
// named, and the buffers live there grouped as parameters and inputs / optimizer state / saved
// activations / temporaries / outputs; a row of an input leaf lights its card. Mirrors
// src/shardwidget/wire/peak.py (PeakWire).
import { el, mark, measure } from "../shared/dom";
import { injectCss } from "../shared/styles";
import { formatBytes } from "../shared/text";
import type { FitWire, PeakWire, Trace } from "../wire/function";
import { highlightLeaves } from "./why";

const PEAK_CSS = `
.shardwidget .sw-peak { margin: 10px 0 0; }
.shardwidget .sw-peak-title { font-size: 12.5px; font-weight: 600; margin: 0 0 4px; }
.shardwidget .sw-peak-over .sw-peak-title { color: var(--sw-error, #b00020); }
.shardwidget .sw-peak-refused { border-left: 3px solid var(--sw-error, #b00020); padding-left: 6px; margin-bottom: 8px; }
.shardwidget .sw-peak-fit { font-size: 12px; margin: 6px 0 0; }
.shardwidget .sw-peak-svg { display: block; width: 100%; max-width: 640px; height: 90px; }
.shardwidget .sw-peak-area { fill: var(--sw-accent); fill-opacity: 0.25; stroke: var(--sw-accent); stroke-width: 1; }
.shardwidget .sw-peak-hbm { stroke: var(--sw-error, #b00020); stroke-dasharray: 4 3; stroke-width: 1; }
.shardwidget .sw-peak-mark { stroke: var(--sw-fg); stroke-width: 1; }
.shardwidget .sw-peak-label { font-size: 10px; fill: var(--sw-fg2); }
.shardwidget .sw-peak-table { border-collapse: collapse; font-size: 12px; margin-top: 6px; }
.shardwidget .sw-peak-table td { padding: 1px 8px 1px 0; }
.shardwidget .sw-peak-group td { font-weight: 600; padding-top: 4px; }
.shardwidget .sw-peak-leaf { cursor: pointer; text-decoration: underline dotted; }
`;

const W = 600;
const H = 90;
const SVG = "http://www.w3.org/2000/svg";

/** The panel for a trace's peak (an empty element where the payload has none). */
export function renderPeak(doc: Document, shown: Trace, root: HTMLElement): HTMLElement {
  mark("shardwidget:peak-start"); // timed by benchmarks/memory_panel_draw.py
  injectCss(root, "shardwidget-peak", PEAK_CSS);
  const wrap = el(doc, "div", "sw-peak");
  const light = (path: string): void => lightLeaf(root, shown, path);
  if (shown.over) {
    const refused = peakPart(doc, shown.over, light, "the layout asked for does not fit: ");
    refused.classList.add("sw-peak-refused", "sw-peak-over");
    wrap.append(refused);
  }
  if (shown.peak) {
    const part = peakPart(doc, shown.peak, light, "");
    wrap.classList.toggle("sw-peak-over", part.classList.contains("sw-peak-over"));
    wrap.append(part);
  }
  if (shown.fit) wrap.append(fitLine(doc, shown.fit));
  measure("shardwidget:peak", "shardwidget:peak-start");
  return wrap;
}

/** One compile's peak: its title, timeline and the buffers live there ("does not fit" where
 *  it is over the device's memory). */
function peakPart(doc: Document, p: PeakWire, light: (path: string) => void, lead: string): HTMLElement {
  const part = el(doc, "div", "sw-peak-part");
  if (p.unknown) {
    part.append(el(doc, "p", "sw-muted", `${lead}where the memory goes: unknown (${p.unknown})`));
    return part;
  }
  const over = p.hbm !== null && p.bytes > p.hbm;
  part.classList.toggle("sw-peak-over", over);
  const title = lead || (over ? "does not fit: " : "");
  part.append(el(doc, "p", "sw-peak-title", `${title}${p.title}`));
  part.append(timeline(doc, p));
  part.append(groups(doc, p, light));
  return part;
}

/** view.largest_fit's line: how far the bisection got, then its answer. */
function fitLine(doc: Document, fit: FitWire): HTMLElement {
  const line = el(doc, "p", fit.error ? "sw-peak-fit sw-error" : "sw-peak-fit", fit.text);
  line.setAttribute("role", "status");
  if (!fit.done) {
    const bar = doc.createElement("progress");
    bar.max = fit.of;
    bar.value = fit.compiles;
    line.prepend(bar, " ");
  }
  return line;
}

/** The bytes live over the program as one filled path, the HBM line and the peak's mark. */
export function timeline(doc: Document, p: PeakWire): SVGSVGElement {
  const svg = doc.createElementNS(SVG, "svg");
  svg.setAttribute("class", "sw-peak-svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `bytes live over ${p.instructions} instructions; ${p.title}`);
  const pts = p.timeline;
  const high = Math.max(1, ...pts);
  // the HBM sets the scale only where the peak is a visible part of it (else a flat line)
  const hbmOnScale = p.hbm !== null && p.hbm <= 4 * high;
  const top = Math.max(high, hbmOnScale && p.hbm !== null ? p.hbm : 0) * 1.05;
  const x = (i: number): number => (pts.length > 1 ? (i * W) / (pts.length - 1) : W / 2);
  const y = (v: number): number => H - (v * H) / top;
  const parts = [`M0 ${H}`];
  for (let i = 0; i < pts.length; i++) parts.push(`L${x(i).toFixed(1)} ${y(pts[i]).toFixed(1)}`);
  parts.push(`L${W} ${H}Z`);
  svg.append(shape(doc, "path", "sw-peak-area", { d: parts.join("") }));
  if (p.hbm !== null) {
    const words = `HBM of ${p.hbm_name || "the device"}: ${formatBytes(p.hbm)}`;
    if (hbmOnScale) {
      const hy = y(p.hbm).toFixed(1);
      const line = shape(doc, "line", "sw-peak-hbm", { x1: "0", x2: String(W), y1: hy, y2: hy });
      line.append(titled(doc, words));
      svg.append(line);
    } else {
      const label = shape(doc, "text", "sw-peak-label", { x: "4", y: "10" });
      label.textContent = `${words}, above this scale (${formatBytes(high)} at the top)`;
      svg.append(label);
    }
  }
  const px = x(p.at).toFixed(1);
  const mark = shape(doc, "line", "sw-peak-mark", { x1: px, x2: px, y1: "0", y2: String(H) });
  mark.append(titled(doc, p.title));
  svg.append(mark);
  return svg;
}

/** The buffers live at the peak, by group; a leaf's row lights its card when clicked. */
function groups(doc: Document, p: PeakWire, light: (path: string) => void): HTMLElement {
  const t = el(doc, "table", "sw-peak-table");
  t.setAttribute("aria-label", "what is live at the peak");
  for (const g of p.groups) {
    const head = el(doc, "tr", "sw-peak-group");
    head.append(el(doc, "td", "", g.name), el(doc, "td"), el(doc, "td", "sw-tr-memval", formatBytes(g.bytes)));
    t.append(head);
    for (const r of g.rows) {
      const tr = el(doc, "tr", "sw-peak-row");
      const name = el(doc, "td", r.path ? "sw-peak-leaf sw-tr-mono" : "sw-tr-mono", r.label);
      if (r.path) {
        name.title = `light ${r.path}'s card`;
        name.addEventListener("click", () => light(r.path));
      }
      if (r.aliased) name.textContent += " (donated)";
      tr.append(name, el(doc, "td", "sw-tr-mono", r.shape), el(doc, "td", "sw-tr-memval", formatBytes(r.bytes)));
      t.append(tr);
    }
    if (g.more > 0) {
      const more = el(doc, "tr", "sw-muted");
      more.append(el(doc, "td", "", `… ${g.more} more`));
      t.append(more);
    }
  }
  return t;
}

/** Light the card of the input leaf at ``path`` (and scroll it into view). */
function lightLeaf(root: HTMLElement, shown: Trace, path: string): void {
  const i = shown.inputs.findIndex((leaf) => leaf.path === path);
  if (i < 0) return;
  highlightLeaves(root, [i], []);
  const card = root.querySelector<HTMLElement>(`[data-side="in"][data-index="${i}"]`);
  card?.scrollIntoView?.({ block: "nearest" });
}

function shape(doc: Document, tag: string, cls: string, attrs: Record<string, string>): SVGElement {
  const e = doc.createElementNS(SVG, tag);
  e.setAttribute("class", cls);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function titled(doc: Document, text: string): SVGTitleElement {
  const t = doc.createElementNS(SVG, "title");
  t.textContent = text;
  return t;
}
