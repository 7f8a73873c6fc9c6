// Layers painted over the mesh pane's device cells: the heat of a re-layout (bytes in or out per
// device) and the device groups of a hovered collective. A layer overrides a cell's background;
// lifting it restores the device colour the cell was drawn with.
import { ramp, textColorOn } from "../../shared/colors";
import { formatBytes } from "../../shared/text";
import { el } from "../../shared/dom";

/** Cells that move nothing: a neutral grey, apart from the ramp. */
export const HEAT_ZERO = "#e6e8eb";

const hex = (rgb: [number, number, number]) => "#" + rgb.map((v) => v.toString(16).padStart(2, "0")).join("");

/** The heat colour of `v` bytes when the most any device moves is `max`: grey for 0, then the
 *  viridis ramp (dark: little, yellow: the most). */
export function heatColor(v: number, max: number): string {
  if (!(v > 0) || !(max > 0)) return HEAT_ZERO;
  return hex(ramp(0.08 + 0.92 * Math.min(1, v / max)));
}

/** Device id -> heat colour, for values parallel to `ids`; and the largest value. */
export function heatPaint(ids: number[], values: number[]): { colors: Map<number, string>; max: number } {
  let max = 0;
  for (const v of values) if (v > max) max = v;
  const colors = new Map<number, string>();
  ids.forEach((id, i) => colors.set(id, heatColor(values[i] ?? 0, max)));
  return { colors, max };
}

/** The key of the heat: grey "0", the ramp from a byte to `max`. */
export function heatKey(doc: Document, max: number, what: string): HTMLElement {
  const k = el(doc, "div", "sw-heat-key");
  k.setAttribute("aria-label", `${what}: 0 to ${formatBytes(max)}`);
  const zero = el(doc, "span", "sw-heat-zero");
  zero.style.background = HEAT_ZERO;
  zero.title = "moves nothing";
  const bar = el(doc, "span", "sw-heat-bar");
  const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => `${hex(ramp(0.08 + 0.92 * t))} ${t * 100}%`);
  bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
  bar.title = `${what}, up to ${formatBytes(max)}`;
  k.append(
    el(doc, "span", "sw-heat-what", what),
    zero,
    el(doc, "span", "sw-heat-lab", "0"),
    bar,
    el(doc, "span", "sw-heat-lab", formatBytes(max)),
  );
  return k;
}

/** Background overrides on a set of cells, restored when lifted. The top layer wins. */
export class CellPaint {
  private layers = new Map<string, Map<number, string>>();
  private order: string[] = [];
  private painted = new Map<number, { bg: string; fg: string }>();

  /** Put a layer (`colors` null: lift it). Later layers go on top of earlier ones. */
  set(layer: string, colors: Map<number, string> | null): void {
    if (colors) {
      this.layers.set(layer, colors);
      if (!this.order.includes(layer)) this.order.push(layer);
    } else {
      this.layers.delete(layer);
      this.order = this.order.filter((l) => l !== layer);
    }
  }

  has(layer: string): boolean {
    return this.layers.has(layer);
  }

  /** The colour a device shows now, or undefined when no layer paints it. */
  colorOf(id: number): string | undefined {
    for (let i = this.order.length - 1; i >= 0; i--) {
      const c = this.layers.get(this.order[i])?.get(id);
      if (c !== undefined) return c;
    }
    return undefined;
  }

  /** Paint `cells` (asked for only when there is something to paint or restore); `fresh`: they
   *  were just drawn (nothing of ours is on them). */
  apply(cellsOf: () => Map<number, HTMLElement>, fresh: boolean): void {
    if (fresh) this.painted.clear();
    if (this.painted.size === 0 && this.order.length === 0) return;
    this.repaint(cellsOf());
  }

  /** Restore the cells no layer paints now, paint the rest (its own method: a first render, with
   *  nothing to paint, never compiles it). */
  private repaint(cells: Map<number, HTMLElement>): void {
    for (const [id, orig] of this.painted) {
      if (this.colorOf(id) !== undefined) continue;
      const c = cells.get(id);
      if (c) {
        c.style.background = orig.bg;
        c.style.color = orig.fg;
      }
      this.painted.delete(id);
    }
    if (this.order.length === 0) return;
    for (const [id, c] of cells) {
      const col = this.colorOf(id);
      if (col === undefined) continue;
      if (!this.painted.has(id)) this.painted.set(id, { bg: c.style.background, fg: c.style.color });
      c.style.background = col;
      if (c.textContent) c.style.color = textColorOn(col);
    }
  }
}
