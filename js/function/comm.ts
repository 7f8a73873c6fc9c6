// The function view's "Communication" section: the collectives XLA inserted (each row lights
// its device groups on the devices picture beside the table, and asks the "why" panel for its
// cause), the devices picture (only its caption when a leaf card shows the mesh: the mesh is
// drawn once), and the why panel under them.
import type { Trace } from "../wire";
import { collectivesSummary, renderCollectives } from "../shared/collectives";
import { el as mk } from "../shared/dom";
import type { DevicesPicture } from "./devices";
import type { WhyPanel } from "./why";

/** A titled section of the function view. */
export interface Section {
  el: HTMLElement;
  title: HTMLElement;
  note: HTMLElement;
  body: HTMLElement;
}

export interface CommParts {
  why: WhyPanel;
  devices: DevicesPicture;
  /** Light collective i's device groups (null: none). */
  light: (i: number | null) => void;
  /** The devices a layout spans (the options' count), when published. */
  nDevices?: number;
  /** Whether a leaf card shows the mesh: then it is lit there, not drawn again here. */
  meshOnCard?: boolean;
  /** Ask for collective i's cause; undefined on a saved page (no kernel to ask). */
  ask?: (i: number) => void;
}

/** Fill the Communication section with the collectives of the trace shown. */
export function renderComm(doc: Document, comm: Section, shown: Trace, parts: CommParts): void {
  const cut = shown.left_out?.collectives ?? 0;
  comm.note.textContent =
    (shown.collectives.length > 0
      ? `${collectivesSummary(shown.collectives)}: what XLA inserted`
      : "what XLA inserted") + (cut > 0 ? ` (${cut} more not listed)` : "");
  const row = mk(doc, "div", "sw-tr-comm");
  row.append(renderCollectives(doc, shown.collectives, parts.light, parts.ask));
  const leaf = [...shown.inputs, ...shown.outputs].find((l) => l.layout.mesh);
  parts.devices.update(
    shown.collectives.length > 0 ? leaf?.layout ?? null : null,
    parts.nDevices ?? leaf?.layout.devices.ids.length ?? 1,
    260,
    parts.meshOnCard ?? false,
  );
  row.append(parts.devices.el);
  comm.body.replaceChildren(row, parts.why.el);
}
