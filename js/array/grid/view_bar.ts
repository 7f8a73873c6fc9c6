// The view bar of an array with more than two dimensions: which dimensions are drawn as rows and
// columns, and a slider per other dimension choosing the slice shown.
import type { Layout } from "../../wire";
import { sliderDims } from "../blocks";
import { formatHalfOpen } from "../../shared/text";

export interface ViewBarCallbacks {
  setViewDims(dims: number[]): void;
  setSlice(dim: number, index: number): void;
}

export class ViewBar {
  readonly el: HTMLElement;
  /** What the controls were built for (rebuilt only when it changes). */
  private key = "";

  constructor(
    private readonly doc: Document,
    private readonly cb: ViewBarCallbacks,
  ) {
    this.el = doc.createElement("div");
    this.el.className = "sw-viewbar";
  }

  update(layout: Layout, viewDims: number[], slice: number[]): void {
    const ndim = layout.shape.length;
    const key = JSON.stringify([layout.shape, viewDims, layout.blocks.length, layout.key]);
    if (ndim <= 2) {
      this.el.replaceChildren();
      this.el.hidden = true;
      this.key = key;
      return;
    }
    this.show(layout, viewDims, slice, key);
  }

  /** The bar of an array of 3+ dimensions (its own method: a 2-D array's first render never
   *  compiles it). */
  private show(layout: Layout, viewDims: number[], slice: number[], key: string): void {
    this.el.hidden = false;
    const others = sliderDims(layout.shape.length, viewDims);
    if (key !== this.key) {
      this.key = key;
      const dimsBox = this.doc.createElement("div");
      dimsBox.className = "sw-viewdims";
      dimsBox.append(
        this.dimSelect(layout, viewDims, 0, "rows"),
        this.dimSelect(layout, viewDims, 1, "columns"),
      );
      this.el.replaceChildren(dimsBox, ...others.map((d) => this.slider(layout, d, slice)));
    }
    // Update slider readouts (and values, when changed from outside).
    for (const d of others) {
      const inp = this.el.querySelector<HTMLInputElement>(`input[data-key="slice-${d}"]`);
      const out = inp?.parentElement?.querySelector("output");
      if (!inp || !out) continue;
      const s = slice[d] ?? 0;
      if (inp.value !== String(s)) inp.value = String(s);
      const blk = layout.blocks.find((b) => b.i[d][0] <= s && s < b.i[d][1]);
      out.textContent = `${s} / ${layout.shape[d]}${blk ? `  ·  block ${formatHalfOpen(blk.i[d])}` : ""}`;
    }
  }

  /** Which dimension is drawn as rows (`which` 0) or columns (1); choosing the other drawn one
   *  swaps the two. */
  private dimSelect(layout: Layout, viewDims: number[], which: 0 | 1, labelText: string): HTMLElement {
    const doc = this.doc;
    const lab = doc.createElement("label");
    lab.className = "sw-field";
    const span = doc.createElement("span");
    span.textContent = labelText;
    const s = doc.createElement("select");
    s.dataset.key = which === 0 ? "view-rows" : "view-cols";
    for (let d = 0; d < layout.shape.length; d++) {
      const o = doc.createElement("option");
      o.value = String(d);
      o.textContent = `dim ${d} (${layout.shape[d]})`;
      s.append(o);
    }
    s.value = String(viewDims[which]);
    s.addEventListener("change", () => {
      const v = Number(s.value);
      const nd = [...viewDims];
      const other = 1 - which;
      if (nd[other] === v) nd[other] = nd[which];
      nd[which] = v;
      this.cb.setViewDims(nd);
    });
    lab.append(span, s);
    return lab;
  }

  /** The slider of dimension d (its readout is written by update). */
  private slider(layout: Layout, d: number, slice: number[]): HTMLElement {
    const doc = this.doc;
    const lab = doc.createElement("label");
    lab.className = "sw-slider";
    const span = doc.createElement("span");
    span.className = "sw-slider-name";
    span.textContent = `dim ${d}`;
    const inp = doc.createElement("input");
    inp.type = "range";
    inp.min = "0";
    inp.max = String(Math.max(0, layout.shape[d] - 1));
    inp.step = "1";
    inp.dataset.key = `slice-${d}`;
    inp.value = String(slice[d] ?? 0);
    inp.setAttribute("aria-label", `index along dim ${d}`);
    const out = doc.createElement("output");
    out.className = "sw-slider-value";
    inp.addEventListener("input", () => this.cb.setSlice(d, Number(inp.value)));
    lab.append(span, inp, out);
    return lab;
  }
}
