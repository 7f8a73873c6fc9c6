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
    const others = sliderDims(ndim, viewDims);
    const key = JSON.stringify([layout.shape, viewDims, layout.blocks.length, layout.key]);
    if (ndim <= 2) {
      this.el.replaceChildren();
      this.el.hidden = true;
      this.key = key;
      return;
    }
    this.el.hidden = false;
    const doc = this.doc;
    if (key !== this.key) {
      this.key = key;
      const parts: HTMLElement[] = [];
      const mkSel = (which: 0 | 1, labelText: string) => {
        const lab = doc.createElement("label");
        lab.className = "sw-field";
        const span = doc.createElement("span");
        span.textContent = labelText;
        const s = doc.createElement("select");
        s.dataset.key = which === 0 ? "view-rows" : "view-cols";
        for (let d = 0; d < ndim; d++) {
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
      };
      const dimsBox = doc.createElement("div");
      dimsBox.className = "sw-viewdims";
      dimsBox.append(mkSel(0, "rows"), mkSel(1, "columns"));
      parts.push(dimsBox);
      for (const d of others) {
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
        parts.push(lab);
      }
      this.el.replaceChildren(...parts);
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
}
