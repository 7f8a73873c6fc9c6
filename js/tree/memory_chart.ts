// Memory per device: a bar per device of the mesh (zeros included: an empty device is an empty
// slot, not a missing bar), stacked by top-level group (params, optimizer state, …; the largest
// MAX_GROUPS, then "others"), with a line at the chosen hardware preset's HBM. A device over the
// line is marked. Drawn as an SVG at the pane's own pixel width (labels stay 10 px, never scaled
// down); past MAX_BARS devices, bins of consecutive devices (mean stacked, min…max as a line).
import type { HardwareWire, TreeMemory } from "../wire";
import { formatBytes, plural } from "../shared/text";
import { el as mk } from "../shared/dom";
import { selectField } from "../shared/fields";
import { PALETTE16 } from "../shared/colors";
import { BINS, MAX_BARS, chartBars, chartGroups, totalsOf, yTicks, type Bar, type ChartGroups } from "./chart_data";

const NS = "http://www.w3.org/2000/svg";
const HEIGHT = 120;
const PAD_LEFT = 64;
const PAD_TOP = 8;
/** The width drawn before the pane has one (not yet in the page). */
const FALLBACK_WIDTH = 420;
/** The HBM line is drawn inside the chart when it is at most this many times the fullest device;
 *  further up, the bars would be slivers: the line's value is said in words instead. */
const LINE_RANGE = 4;

export interface ChartInput {
  memory: TreeMemory;
  groupNames: string[];
  presets: HardwareWire[];
  hardware: string;
  /** Devices of the mesh (0: unknown). More than the wire sends: the rest hold nothing. */
  meshDevices?: number;
}

/** Device ids whose total is over `limit` bytes. */
export function overLimit(m: TreeMemory, limit: number): number[] {
  const totals = totalsOf(m);
  return m.ids.filter((_, i) => totals[i] > limit);
}

/** A group's colour (the group palette, not the device colours: groups are not devices); -1,
 *  "others", is grey. */
export function groupColor(g: number): string {
  return g < 0 ? "#9e9e9e" : PALETTE16[(g * 5) % PALETTE16.length];
}

function svg<K extends keyof SVGElementTagNameMap>(doc: Document, tag: K, attrs: Record<string, string | number>) {
  const e = doc.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

export class MemoryChart {
  readonly el: HTMLElement;
  private head: HTMLElement;
  private pick: HTMLElement;
  private plot: HTMLElement;
  private legend: HTMLElement;
  private note: HTMLElement;
  private last: ChartInput | null = null;
  private groupsOf: { memory: TreeMemory; names: string[]; groups: ChartGroups } | null = null;
  private drawnWidth = 0;
  /** Devices of the mesh the wire sent no bar for (an older kernel leaves empty ones out). */
  private missing = 0;
  private resize: ResizeObserver | null = null;

  constructor(
    private readonly doc: Document,
    private readonly onHardware: (name: string) => void,
  ) {
    this.el = mk(doc, "section", "sw-tree-mem");
    this.el.setAttribute("aria-label", "memory per device");
    this.head = mk(doc, "div", "sw-tree-mem-head");
    this.pick = mk(doc, "span", "sw-tree-mem-pick");
    this.plot = mk(doc, "div", "sw-tree-mem-plot");
    this.legend = mk(doc, "div", "sw-tree-mem-legend");
    this.note = mk(doc, "div", "sw-tree-mem-note");
    const top = mk(doc, "div", "sw-tree-mem-top");
    top.append(this.head, this.pick);
    this.el.append(top, this.plot, this.legend, this.note);
    // Drawn at the pane's width: a new width (a resized window or panel) draws it again.
    const RO = (doc.defaultView as (Window & typeof globalThis) | null)?.ResizeObserver;
    if (RO) {
      this.resize = new RO(() => {
        const w = this.width();
        if (this.last && Math.abs(w - this.drawnWidth) > 8) this.render(this.last);
      });
      this.resize.observe(this.plot);
    }
  }

  /** The drawn groups (tests). */
  get groups(): ChartGroups | null {
    return this.groupsOf?.groups ?? null;
  }

  render(inp: ChartInput): void {
    this.last = inp;
    const { memory: m, presets } = inp;
    const totals = totalsOf(m);
    const most = Math.max(0, ...totals);
    const hw = presets.find((p) => p.name === inp.hardware) ?? null;
    const limit = hw ? hw.hbm_bytes : Infinity;
    const over = overLimit(m, limit);
    const n = m.ids.length;
    this.head.textContent =
      `Memory per device · max ${formatBytes(most)}` +
      (n > MAX_BARS ? ` · ${n.toLocaleString()} devices in bins of ${Math.ceil(n / BINS).toLocaleString()} (bar: mean, line: min…max)` : "");
    this.renderPicker(presets, inp.hardware);
    const lineInside = hw !== null && limit <= most * LINE_RANGE;
    if (this.groupsOf?.memory !== m || this.groupsOf.names !== inp.groupNames)
      this.groupsOf = { memory: m, names: inp.groupNames, groups: chartGroups(m, inp.groupNames) };
    const groups = this.groupsOf.groups;
    this.missing = Math.max(0, (inp.meshDevices ?? 0) - m.ids.length);
    this.plot.replaceChildren(this.drawPlot(m, groups, most, lineInside ? hw : null, limit));
    this.renderLegend(groups);
    this.note.classList.toggle("sw-tree-mem-bad", over.length > 0);
    const words: string[] = [];
    const empty = totals.filter((t) => t === 0).length;
    const unsent = this.missing;
    if (empty + unsent > 0 && empty + unsent < (inp.meshDevices || m.ids.length))
      words.push(`${plural(empty + unsent, "device")} of ${(inp.meshDevices || m.ids.length).toLocaleString()} hold nothing` +
        (unsent ? ` (${unsent.toLocaleString()} the kernel sent no id for: drawn empty, unnumbered)` : ""));
    if (hw && over.length)
      words.push(
        `${plural(over.length, "device")} over the ${hw.name} HBM (${formatBytes(limit)}): ` +
          `${over.slice(0, 16).join(", ")}${over.length > 16 ? " …" : ""}`,
      );
    else if (hw)
      words.push(
        `fits the ${hw.name} HBM (${formatBytes(limit)}): the fullest device uses ` +
          `${((100 * most) / limit).toPrecision(2)}%` + (lineInside ? "" : " (the line is above the chart)"),
      );
    this.note.textContent = words.join(" · ");
  }

  private renderPicker(presets: HardwareWire[], hardware: string): void {
    this.pick.replaceChildren(
      selectField(
        this.doc,
        "tree-hw",
        "HBM of",
        presets.map((p) => ({ value: p.name, label: p.label || p.name, disabled: false, title: p.source })),
        hardware,
        (v) => this.onHardware(v),
        "hardware preset whose device memory the line marks",
      ),
    );
  }

  private width(): number {
    return Math.round(this.plot.clientWidth) || FALLBACK_WIDTH;
  }

  /** The bars, the y axis (round ticks with grid lines), the x labels, and the HBM line of `hw`
   *  (null: none inside the chart). */
  private drawPlot(m: TreeMemory, g: ChartGroups, most: number, hw: HardwareWire | null, limit: number): SVGSVGElement {
    const doc = this.doc;
    const width = (this.drawnWidth = this.width());
    const bars = chartBars(m, g, this.missing);
    const binned = bars.length < m.ids.length;
    const ticks = yTicks(Math.max(most, hw ? hw.hbm_bytes : 0, 1));
    const top = Math.max(ticks[ticks.length - 1], most, hw ? hw.hbm_bytes : 0, 1);
    const n = Math.max(1, bars.length);
    const barW = (width - PAD_LEFT - 4) / n;
    const root = svg(doc, "svg", { viewBox: `0 0 ${width} ${HEIGHT + 18}`, width, height: HEIGHT + 18, role: "img" });
    root.setAttribute(
      "aria-label",
      `bytes per device, ${m.ids.length} devices${binned ? ` in ${bars.length} bins` : ""}, max ${formatBytes(most)}`,
    );
    const y = (b: number) => HEIGHT - (b / top) * (HEIGHT - PAD_TOP);
    for (const v of ticks) {
      root.append(svg(doc, "line", { x1: PAD_LEFT, x2: width, y1: y(v), y2: y(v), class: v ? "sw-tree-gridline" : "sw-tree-axis" }));
      root.append(this.tick(PAD_LEFT - 4, y(v) + 3.5, formatBytes(v), "end"));
    }
    const gap = barW > 4 ? 1 : 0; // thin bars (hundreds of devices) touch
    bars.forEach((b, i) => root.append(this.bar(b, PAD_LEFT + i * barW + gap, Math.max(0.5, barW - 2 * gap), g, y, limit)));
    this.xLabels(root, bars, barW);
    if (hw) {
      const at = y(hw.hbm_bytes);
      root.append(svg(doc, "line", { x1: PAD_LEFT, x2: width, y1: at, y2: at, class: "sw-tree-hbm" }));
      const t = this.tick(width - 2, at - 3, `HBM ${formatBytes(hw.hbm_bytes)}`, "end");
      t.classList.add("sw-tree-hbm-label");
      root.append(t);
    }
    return root;
  }

  private tick(x: number, y: number, text: string, anchor: string): SVGTextElement {
    const t = svg(this.doc, "text", { x, y, class: "sw-tree-tick", "text-anchor": anchor });
    t.textContent = text;
    return t;
  }

  /** One bar: an empty slot the chart's height (so an empty device shows), its groups stacked,
   *  and for a bin the range of its devices' totals. */
  private bar(b: Bar, x: number, w: number, g: ChartGroups, y: (v: number) => number, limit: number): SVGGElement {
    const doc = this.doc;
    const over = b.max > limit;
    const one = b.count === 1;
    const id: Record<string, string | number> =
      b.first < 0 ? { "data-unsent": "" } : one ? { "data-device": b.first } : { "data-devices": `${b.first}-${b.last}` };
    const e = svg(doc, "g", id);
    if (over) e.setAttribute("class", "sw-tree-over");
    const tip = svg(doc, "title", {});
    tip.textContent = b.first < 0
      ? "a device of the mesh with nothing on it (the kernel sent no id for it)"
      : one
      ? `device ${b.first}: ${formatBytes(b.total)}` + (b.total === 0 ? " (empty)" : "")
      : `devices ${b.first}–${b.last} (${b.count}): mean ${formatBytes(b.total)}, ${formatBytes(b.min)} … ${formatBytes(b.max)}`;
    if (over) tip.textContent += " — over the HBM";
    e.append(tip, svg(doc, "rect", { x, width: w, y: PAD_TOP, height: HEIGHT - PAD_TOP, class: w < 3 ? "sw-tree-slot sw-tree-slot-thin" : "sw-tree-slot" }));
    let base = 0;
    b.stack.forEach((v, k) => {
      if (!v) return;
      const h = HEIGHT - y(v);
      e.append(svg(doc, "rect", { x, width: w, y: HEIGHT - base - h, height: h, fill: groupColor(g.index[k]) }));
      base += h;
    });
    if (!one && b.max > b.min) {
      const cx = x + w / 2;
      e.append(svg(doc, "line", { x1: cx, x2: cx, y1: y(b.max), y2: y(b.min), class: "sw-tree-range" }));
    }
    return e;
  }

  /** Device ids under the bars (a bin: its first device): every one when they have room, else
   *  every 2nd, 4th, 8th… (mesh sizes are mostly powers of two), at the bar's left edge. */
  private xLabels(root: SVGSVGElement, bars: Bar[], barW: number): void {
    const text = bars.map((b) => (b.first < 0 ? "" : String(b.first)));
    const need = Math.max(1, ...text.map((t) => t.length)) * 6.2 + 10;
    let step = 1;
    while (step * barW < need && step < bars.length) step *= 2;
    const centred = barW >= need;
    for (let i = 0; i < bars.length; i += step) {
      if (!text[i]) continue;
      const x = PAD_LEFT + i * barW + (centred ? barW / 2 : 0);
      if (!centred) root.append(svg(this.doc, "line", { x1: x, x2: x, y1: HEIGHT, y2: HEIGHT + 3, class: "sw-tree-axis" }));
      root.append(this.tick(centred ? x : x + 1, HEIGHT + 12, text[i], centred ? "middle" : "start"));
    }
  }

  /** A swatch per drawn group (the largest, then "others"), with the most any device holds of it. */
  private renderLegend(g: ChartGroups): void {
    this.legend.replaceChildren(
      ...g.names.map((name, k) => {
        const item = mk(this.doc, "span", "sw-tree-mem-key");
        const sw = mk(this.doc, "span", "sw-tree-swatch");
        sw.style.background = groupColor(g.index[k]);
        item.append(sw, this.doc.createTextNode(`${name} ${formatBytes(g.most[k])}`));
        if (g.index[k] < 0) item.title = `${g.others.toLocaleString()} smaller groups, summed into one: the leaf table lists them`;
        return item;
      }),
    );
  }

  dispose(): void {
    this.resize?.disconnect();
  }
}
