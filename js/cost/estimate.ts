// The estimated time of a layout (or of a re-layout) on one hardware preset: one bar per part
// (compute, memory, each collective) on a common time axis, the total with its overlap rule and
// bound, and whether the peak memory fits in HBM. Wire format: wire/cost.ts (EstimateWire).
import type { EstimatePart, EstimateWire } from "../wire";
import { formatSeconds } from "../shared/text";
import { el } from "../shared/dom";

/** One bar on the time axis: where it starts and how long it takes (seconds). */
export interface Bar {
  part: EstimatePart;
  start: number;
  seconds: number;
}

/**
 * Where each part sits on the time axis. The wire states the rule (EstimateWire.overlap): compute
 * and memory overlap from 0, the collectives follow one after another and end at the total. So
 * the collectives are laid end to end back from total_s (the axis never disagrees with the total
 * the kernel computed), and compute and memory start at 0.
 */
export function timeline(est: EstimateWire): { bars: Bar[]; end: number } {
  const serial = est.parts.filter((p) => p.kind === "collective" || p.kind === "transfer");
  const sumSerial = serial.reduce((a, p) => a + p.seconds, 0);
  let t = Math.max(0, est.total_s - sumSerial);
  const bars: Bar[] = est.parts.map((part) => {
    if (part.kind === "compute" || part.kind === "memory") return { part, start: 0, seconds: part.seconds };
    const b = { part, start: t, seconds: part.seconds };
    t += part.seconds;
    return b;
  });
  const end = Math.max(est.total_s, ...bars.map((b) => b.start + b.seconds), 0);
  return { bars, end };
}

/** Axis ticks: 0, a round step, ..., within [0, end] (at most ~4). */
export function ticks(end: number): number[] {
  if (!(end > 0)) return [0];
  const raw = end / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = 0; v <= end * (1 + 1e-9); v += step) out.push(v);
  return out;
}

/** "compute-bound" words for the bound, "" when the wire has none. */
function boundText(b: EstimateWire["bound"]): string {
  return b ? `${b}-bound` : "";
}

export interface EstimateOptions {
  /** Fewer words: the array view's transfer estimate. */
  compact?: boolean;
  /** A collective's bar is hovered (its index into the collectives it comes from), or left. */
  hoverCollective?: (index: number | null) => void;
}

/** Whether an estimate has anything to draw ({} or no parts: no). */
export function hasEstimate(e: EstimateWire | null | undefined): e is EstimateWire {
  return !!e && Array.isArray(e.parts) && e.parts.length > 0;
}

/** The bars, the total and the HBM line, as one element. */
export function renderEstimate(doc: Document, est: EstimateWire, opts: EstimateOptions = {}): HTMLElement {
  const wrap = el(doc, "div", `sw-est${opts.compact ? " sw-est-compact" : ""}`);
  wrap.dataset.hardware = est.hardware;
  const { bars, end } = timeline(est);
  const pct = (s: number) => (end > 0 ? (100 * s) / end : 0);
  const chart = el(doc, "div", "sw-est-chart");
  chart.setAttribute("role", "table");
  chart.setAttribute("aria-label", `estimated time per part on ${est.hardware}`);
  for (const b of bars) {
    const row = el(doc, "div", `sw-est-row sw-est-${b.part.kind}`);
    row.setAttribute("role", "row");
    const lat = b.part.latency_s > 0 ? Math.min(b.part.latency_s, b.seconds) : 0;
    const terms = lat > 0 ? ` = ${formatSeconds(lat)} latency + ${formatSeconds(b.seconds - lat)} bandwidth` : "";
    row.title = `${b.part.label}: ${formatSeconds(b.seconds)}${terms}\n${b.part.formula}`;
    row.dataset.kind = b.part.kind;
    if (b.part.collective >= 0) row.dataset.collective = String(b.part.collective);
    const name = el(doc, "span", "sw-est-name", b.part.label);
    name.setAttribute("role", "rowheader");
    const track = el(doc, "span", "sw-est-track");
    track.setAttribute("role", "cell");
    // A part that takes time is at least a sliver wide (sw-est-some), so that it can be seen.
    const fill = el(doc, "span", `sw-est-fill${b.seconds > 0 ? " sw-est-some" : ""}`);
    fill.style.left = `${pct(b.start)}%`;
    fill.style.width = `${pct(b.seconds)}%`;
    // The latency share of a collective is drawn as its own (hatched) segment at the bar's start.
    if (lat > 0) {
      const l = el(doc, "span", "sw-est-lat");
      l.style.width = `${(100 * lat) / b.seconds}%`;
      fill.append(l);
    }
    track.append(fill);
    const val = el(doc, "span", "sw-est-val", formatSeconds(b.seconds));
    // Both terms under the total (a CSS ::after, so the cell's text stays the total alone).
    if (lat > 0) val.dataset.terms = `${formatSeconds(lat)} latency + ${formatSeconds(b.seconds - lat)}`;
    val.setAttribute("role", "cell");
    row.append(name, track, val);
    const hover = opts.hoverCollective;
    if (hover && b.part.collective >= 0) {
      row.tabIndex = 0;
      const i = b.part.collective;
      row.addEventListener("mouseenter", () => hover(i));
      row.addEventListener("focus", () => hover(i));
      row.addEventListener("mouseleave", () => hover(null));
      row.addEventListener("blur", () => hover(null));
    }
    chart.append(row);
  }
  chart.append(axisRow(doc, end));
  wrap.append(chart);
  const total = el(doc, "div", "sw-est-total");
  const strong = el(doc, "strong", "", `total ${formatSeconds(est.total_s)}`);
  total.append(strong);
  const bound = boundText(est.bound);
  if (bound) total.append(doc.createTextNode(` · ${bound}`));
  total.title = est.overlap;
  wrap.append(total);
  if (!opts.compact) wrap.append(el(doc, "div", "sw-est-overlap sw-hint", est.overlap));
  if (est.fits_text) {
    const fit = el(doc, "div", `sw-est-fits ${est.fits === false ? "sw-est-nofit" : ""}`.trim(), est.fits_text);
    fit.setAttribute("role", "status");
    wrap.append(fit);
  }
  return wrap;
}

/** The shared time axis under the bars, with its ticks in seconds. */
function axisRow(doc: Document, end: number): HTMLElement {
  const row = el(doc, "div", "sw-est-row sw-est-axisrow");
  row.setAttribute("aria-hidden", "true");
  const axis = el(doc, "span", "sw-est-axis");
  for (const t of ticks(end)) {
    const tk = el(doc, "span", "sw-est-tick", formatSeconds(t));
    tk.style.left = `${end > 0 ? (100 * t) / end : 0}%`;
    axis.append(tk);
  }
  row.append(el(doc, "span"), axis, el(doc, "span"));
  return row;
}
