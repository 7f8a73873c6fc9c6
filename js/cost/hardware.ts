// The hardware dropdown: which preset the estimates are for. Its choice is the `hardware` trait
// (both directions); its options are `_hardware_presets`, each with its public source as title.
import type { HardwareWire } from "../wire";
import { formatBytes, formatCount, formatSeconds } from "../shared/text";
import { el } from "../shared/dom";

/** A preset's numbers and source, for its tooltip. */
export function presetTitle(p: HardwareWire): string {
  return [
    `${p.label}: ${formatCount(p.peak_flops, "FLOP/s")} (dense bf16), ${formatBytes(p.hbm_bytes)} HBM`,
    `HBM ${formatCount(p.hbm_bandwidth, "B/s")}, ICI ${formatCount(p.ici_bandwidth, "B/s")} per axis`,
    `latency per collective step: ICI ${formatSeconds(p.ici_latency)}, DCN ${formatSeconds(p.dcn_latency)}`,
    `source: ${p.source}`,
  ].join("\n");
}

export class HardwarePicker {
  readonly el: HTMLElement;
  private select: HTMLSelectElement;
  private key = "";

  constructor(
    doc: Document,
    private readonly choose: (name: string) => void,
    dataKey = "hardware",
  ) {
    this.el = el(doc, "label", "sw-field sw-hw");
    this.select = el(doc, "select");
    this.select.dataset.key = dataKey;
    this.select.setAttribute("aria-label", "hardware the estimate is for");
    this.select.addEventListener("change", () => {
      this.select.title = this.select.selectedOptions[0]?.title ?? "";
      this.choose(this.select.value);
    });
    this.el.append(el(doc, "span", "", "on"), this.select);
  }

  /** Options from the presets (rebuilt only when they change), `current` selected. A name that
   *  is not among the presets (an older kernel) is still shown. */
  update(presets: HardwareWire[], current: string, disabled = ""): void {
    const key = JSON.stringify(presets.map((p) => [p.name, p.label, p.source]).concat([[current]]));
    if (key !== this.key) {
      this.key = key;
      const doc = this.select.ownerDocument;
      const opts = presets.map((p) => {
        const o = el(doc, "option", "", p.label || p.name);
        o.value = p.name;
        o.title = presetTitle(p);
        return o;
      });
      if (current && !presets.some((p) => p.name === current)) {
        const o = el(doc, "option", "", current);
        o.value = current;
        opts.push(o);
      }
      this.select.replaceChildren(...opts);
    }
    if (this.select.value !== current) this.select.value = current;
    this.select.title = disabled || (this.select.selectedOptions[0]?.title ?? "");
    this.select.disabled = !!disabled;
  }

  get value(): string {
    return this.select.value;
  }
}
