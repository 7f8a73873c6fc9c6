// The function view's "Estimated time" section: the hardware dropdown, then the estimate of the
// shown layout on that preset (the kernel's `_estimate`, drawn by cost/estimate.ts). While a new
// preset's estimate is on its way, the last one stays, said so.
import type { EstimateWire, HardwareWire, Trace } from "../wire";
import { HardwarePicker } from "../cost/hardware";
import { hasEstimate, renderEstimate } from "../cost/estimate";
import { el } from "../shared/dom";

export interface EstimateSectionParts {
  el: HTMLElement;
  note: HTMLElement;
  body: HTMLElement;
}

export interface EstimateInput {
  /** The trace whose layout is drawn (the last one that compiled), or null. */
  shown: Trace | null;
  estimate: EstimateWire | undefined;
  hardware: string;
  presets: HardwareWire[];
  /** Why the dropdown cannot ask the kernel (a saved page), or "". */
  disabled: string;
}

export class EstimateSection {
  private picker: HardwarePicker;
  private key = "";

  constructor(
    private readonly doc: Document,
    private readonly parts: EstimateSectionParts,
    choose: (name: string) => void,
    private readonly hoverCollective: (index: number | null) => void,
  ) {
    this.picker = new HardwarePicker(doc, choose);
    parts.note.after(this.picker.el);
  }

  update(inp: EstimateInput): void {
    const { shown, estimate, hardware, presets } = inp;
    const compiled = !!shown && (shown.inputs.length > 0 || shown.outputs.length > 0);
    const mine = hasEstimate(estimate) && !!shown && estimate.key === shown.key ? estimate : null;
    this.parts.el.hidden = !compiled || (!mine && presets.length === 0);
    this.picker.update(presets, hardware, inp.disabled);
    const key = JSON.stringify([shown?.key ?? -1, mine ? [mine.hardware, mine.total_s, mine.parts.length] : null, hardware]);
    if (key === this.key) return;
    this.key = key;
    const doc = this.doc;
    const waiting = el(doc, "div", "sw-hint", `estimating for ${hardware}…`);
    if (!mine) {
      this.parts.note.textContent = "";
      this.parts.body.replaceChildren(waiting);
      return;
    }
    const p = presets.find((h) => h.name === mine.hardware);
    this.parts.note.textContent = `per device on ${p?.label ?? mine.hardware}: roofline and ring model, not a measurement`;
    const drawn = renderEstimate(doc, mine, { hoverCollective: this.hoverCollective });
    this.parts.body.replaceChildren(...(mine.hardware !== hardware ? [waiting] : []), drawn);
  }
}
