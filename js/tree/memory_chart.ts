// Memory per device: one bar per device, stacked by top-level group (params, optimizer state, …),
// with a line at the chosen hardware preset's HBM. A device over the line is marked. Drawn as an
// SVG whose width follows the pane; thousands of devices draw as thin bars (one rect per group).
import type { HardwareWire, TreeMemory } from "../wire";
import { formatBytes, plural } from "../shared/text";
import { el as mk } from "../shared/dom";
import { selectField } from "../shared/fields";
import { PALETTE16 } from "../shared/colors";

const NS = "http://www.w3.org/2000/svg";
const HEIGHT = 120;
const PAD_LEFT = 56;
/** The HBM line is drawn inside the chart when it is at most this many times the fullest device;
 *  further up, the bars would be slivers: the line's value is said in words instead. */
const LINE_RANGE = 4;

export interface ChartInput {
  memory: TreeMemory;
  groupNames: string[];
  presets: HardwareWire[];
  hardware: string;
}

/** Device ids whose total is over `limit` bytes. */
export function overLimit(m: TreeMemory, limit: number): number[] {
  return m.ids.filter((_, i) => m.by_group.reduce((s, row) => s + row[i], 0) > limit);
}

/** A group's colour (the group palette, not the device colours: groups are not devices). */
export function groupColor(g: number): string {
  return PALETTE16[(g * 5) % PALETTE16.length];
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
  }

  render(inp: ChartInput): void {
    const { memory: m, presets } = inp;
    const totals = m.ids.map((_, i) => m.by_group.reduce((s, row) => s + row[i], 0));
    const most = Math.max(0, ...totals);
    const hw = presets.find((p) => p.name === inp.hardware) ?? null;
    const limit = hw ? hw.hbm_bytes : Infinity;
    const over = overLimit(m, limit);
    this.head.textContent = `Memory per device · max ${formatBytes(most)}`;
    this.renderPicker(presets, inp.hardware);
    const lineInside = hw !== null && limit <= most * LINE_RANGE;
    this.plot.replaceChildren(this.drawPlot(m, totals, new Set(over), lineInside ? hw : null));
    this.renderLegend(m, inp.groupNames);
    this.note.classList.toggle("sw-tree-mem-bad", over.length > 0);
    if (!hw) this.note.textContent = "";
    else if (over.length)
      this.note.textContent =
        `${plural(over.length, "device")} over the ${hw.name} HBM (${formatBytes(limit)}): ` +
        `${over.slice(0, 16).join(", ")}${over.length > 16 ? " …" : ""}`;
    else
      this.note.textContent =
        `fits the ${hw.name} HBM (${formatBytes(limit)}): the fullest device uses ` +
        `${((100 * most) / limit).toPrecision(2)}%` + (lineInside ? "" : " (the line is above the chart)");
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

  /** The bars (one group of rects per device), the axis, and the HBM line of `hw` (null: none
   *  inside the chart). */
  private drawPlot(m: TreeMemory, totals: number[], over: Set<number>, hw: HardwareWire | null): SVGSVGElement {
    const doc = this.doc;
    const most = Math.max(0, ...totals);
    const top = Math.max(most, hw ? hw.hbm_bytes : 0, 1);
    const n = Math.max(1, m.ids.length);
    const width = PAD_LEFT + Math.max(240, Math.min(720, n * 14));
    const barW = (width - PAD_LEFT) / n;
    const root = svg(doc, "svg", { viewBox: `0 0 ${width} ${HEIGHT + 18}`, width: "100%", role: "img" });
    root.setAttribute("aria-label", `bytes per device, ${m.ids.length} devices, max ${formatBytes(most)}`);
    const y = (b: number) => HEIGHT - (b / top) * (HEIGHT - 6);
    const tick = (at: number, text: string, cls = "") => {
      const t = svg(doc, "text", { x: PAD_LEFT - 4, y: y(at) + 4, class: `sw-tree-tick ${cls}`.trim(), "text-anchor": "end" });
      t.textContent = text;
      return t;
    };
    root.append(svg(doc, "line", { x1: PAD_LEFT, x2: width, y1: HEIGHT, y2: HEIGHT, class: "sw-tree-axis" }));
    root.append(tick(most, formatBytes(most)));
    const gap = barW > 4 ? 1 : 0; // thin bars (hundreds of devices) touch
    m.ids.forEach((id, i) => {
      const x = PAD_LEFT + i * barW + gap;
      const w = Math.max(0.5, barW - 2 * gap);
      const g = svg(doc, "g", { "data-device": id, class: over.has(id) ? "sw-tree-over" : "" });
      const tip = svg(doc, "title", {});
      tip.textContent = `device ${id}: ${formatBytes(totals[i])}` + (over.has(id) ? " — over the HBM" : "");
      g.append(tip);
      let base = 0;
      m.by_group.forEach((row, gi) => {
        if (!row[i]) return;
        const h = (row[i] / top) * (HEIGHT - 6);
        g.append(svg(doc, "rect", { x, width: w, y: HEIGHT - base - h, height: h, fill: groupColor(gi) }));
        base += h;
      });
      if (barW >= 12 && n <= 64) {
        const t = svg(doc, "text", { x: x + w / 2, y: HEIGHT + 12, class: "sw-tree-tick", "text-anchor": "middle" });
        t.textContent = String(id);
        g.append(t);
      }
      root.append(g);
    });
    if (hw) {
      const at = y(hw.hbm_bytes);
      root.append(svg(doc, "line", { x1: PAD_LEFT, x2: width, y1: at, y2: at, class: "sw-tree-hbm" }));
      root.append(tick(hw.hbm_bytes, `HBM ${formatBytes(hw.hbm_bytes)}`, "sw-tree-hbm-label"));
    }
    return root;
  }

  /** A swatch per top-level group, with the most any device holds of it. */
  private renderLegend(m: TreeMemory, names: string[]): void {
    this.legend.replaceChildren(
      ...names.map((name, gi) => {
        const item = mk(this.doc, "span", "sw-tree-mem-key");
        const sw = mk(this.doc, "span", "sw-tree-swatch");
        sw.style.background = groupColor(gi);
        const most = m.by_group[gi]?.reduce((a, b) => Math.max(a, b), 0) ?? 0;
        item.append(sw, this.doc.createTextNode(`${name} ${formatBytes(most)}`));
        return item;
      }),
    );
  }
}
