// Titles of the function view: the Inputs / Outputs section titles and notes, and a plan's
// badge (what it is, and the preset its estimates use).
import { el } from "../shared/dom";
import type { TraceOptions } from "../wire";
import type { Section } from "./comm";

/** "Inputs (12, the first 8 shown)" and the note under each side's title. `ins`, `outs`:
 *  [all leaves, leaves drawn]. */
export function sectionTitles(
  inputs: Section,
  outputs: Section,
  mode: TraceOptions["mode"],
  ins: [number, number],
  outs: [number, number],
): void {
  const sm = mode === "shard_map";
  const more = (all: number, n: number) => (all > n ? `, the first ${n} shown` : "");
  inputs.title.textContent = `Inputs (${ins[0]}${more(ins[0], ins[1])})`;
  inputs.note.textContent = sm
    ? "in_specs: the block each device's body receives"
    : "in_shardings: how each argument is laid out";
  outputs.title.textContent = `Outputs (${outs[0]}${more(outs[0], outs[1])})`;
  outputs.note.textContent = sm
    ? "out_specs: how the devices' local results form each output"
    : mode === "pmap"
      ? "as pmap stacks the devices' results, with each device's data"
      : "as XLA laid them out, with each device's data";
}

/** A plan (mesh=AbstractMesh): what it is, and the preset its estimates use (`hw`). */
export function plannedBadge(doc: Document, note: string, hw: string): HTMLElement {
  const what = note.split(" · planned:")[0];
  const badge = el(doc, "span", "sw-planned-badge", `${what}${hw ? ` · estimates for ${hw}` : ""}`);
  badge.title = note;
  return badge;
}
