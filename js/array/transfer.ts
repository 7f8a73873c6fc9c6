// What a re-layout moves (the array view's `_transfer`): the "moved" line under the header; beside
// the mesh, a heat of bytes in / out per device with its key and, for a hovered device, whom it
// sends to and receives from; under the grid, the collectives XLA compiles for the reshard and
// their estimated time on the chosen hardware. Wire format: wire/cost.ts (TransferWire).
import type { Collective, HardwareWire, Layout, TransferWire } from "../wire";
import { formatBytes } from "../shared/text";
import { el } from "../shared/dom";
import { renderCollectives } from "../shared/collectives";
import { hasEstimate, renderEstimate } from "../cost/estimate";
import { HardwarePicker } from "../cost/hardware";
import { collectivePaint, type GroupPaint } from "../cost/groups";
import { heatKey, heatPaint } from "./mesh/heat";

export type HeatMode = "off" | "in" | "out";

export interface TransferCallbacks {
  /** Paint the mesh with a heat (device id -> colour), or lift it (null). */
  setHeat(colors: Map<number, string> | null): void;
  /** Light a collective's device groups on the mesh, or stop (null). */
  lightGroups(paint: GroupPaint | null): void;
  chooseHardware(name: string): void;
  /** Open or close the re-layout's collectives and estimate (the kernel compiles the reshard
   *  for them only while open). */
  openCost(open: boolean): void;
}

/** The transfer, when it is published and belongs to `layout` (else null: not yet, or none). */
export function transferFor(t: TransferWire | undefined | null, layout: Layout | null): TransferWire | null {
  if (!t || !layout || typeof t.status !== "string" || t.key !== layout.key) return null;
  return t;
}

/** Who sends to whom: per device, its partners with bytes. */
export interface Partners {
  to: Map<number, [number, number][]>;
  from: Map<number, [number, number][]>;
}

export function partnersOf(pairs: [number, number, number][]): Partners {
  const to = new Map<number, [number, number][]>();
  const from = new Map<number, [number, number][]>();
  const add = (m: Map<number, [number, number][]>, k: number, v: [number, number]) => {
    let l = m.get(k);
    if (!l) m.set(k, (l = []));
    l.push(v);
  };
  for (const [s, r, b] of pairs) {
    add(to, s, [r, b]);
    add(from, r, [s, b]);
  }
  for (const m of [to, from]) for (const l of m.values()) l.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return { to, from };
}

/** "16 B from 4, 16 B from 5" (the largest first, the first `max`, then "+k more"). */
function listPartners(l: [number, number][], word: string, max = 6): string {
  const parts = l.slice(0, max).map(([d, b]) => `${formatBytes(b)} ${word} ${d}`);
  if (l.length > max) parts.push(`+${l.length - max} more`);
  return parts.join(", ");
}

/** The line for a device: what it receives and sends, and from / to whom. */
export function deviceTransferText(t: TransferWire, layout: Layout, p: Partners, id: number): string {
  const i = layout.devices.ids.indexOf(id);
  if (i < 0) return "";
  const rin = t.received[i] ?? 0;
  const rout = t.sent[i] ?? 0;
  const from = p.from.get(id) ?? [];
  const to = p.to.get(id) ?? [];
  const inText = rin > 0 ? `receives ${formatBytes(rin)}${from.length ? ` (${listPartners(from, "from")})` : ""}` : "receives nothing";
  const outText = rout > 0 ? `sends ${formatBytes(rout)}${to.length ? ` (${listPartners(to, "to")})` : ""}` : "sends nothing";
  return `device ${id} ${inText} · ${outText}`;
}

/** The "moved" line in words, by status; `open`: the collectives were asked for (a pending
 *  transfer is then being compiled; closed, it is the bytes alone, and nothing compiles). */
export function movedText(t: TransferWire | null, open = true): string {
  if (!t) return "";
  switch (t.status) {
    case "none":
      return t.line || "the original layout: nothing moves";
    case "pending":
      return `${t.line || `${formatBytes(t.total)} in all`}${open ? " · compiling the reshard…" : ""}`;
    case "unavailable":
      return `unavailable: ${t.message || "the kernel could not plan this re-layout"}`;
    default:
      return t.line || `${formatBytes(t.total)} in all`;
  }
}

export class TransferPanel {
  /** The "moved" line (under the header). */
  readonly line: HTMLElement;
  /** Beside the mesh: heat toggle, key, the hovered device's partners. */
  readonly side: HTMLElement;
  /** Under the grid: the reshard's collectives and estimate. */
  readonly section: HTMLElement;
  private lineText: HTMLElement;
  private seg: HTMLElement;
  private keyHost: HTMLElement;
  private pairText: HTMLElement;
  private collHost: HTMLElement;
  private estHost: HTMLElement;
  private sectionNote: HTMLElement;
  private picker: HardwarePicker;
  private openBtn: HTMLButtonElement;
  private open = false;
  private mode: HeatMode = "off";
  private t: TransferWire | null = null;
  private layout: Layout | null = null;
  private partners: Partners = { to: new Map(), from: new Map() };
  private drawnKey = "";

  constructor(
    private readonly doc: Document,
    private readonly cb: TransferCallbacks,
  ) {
    this.line = el(doc, "div", "sw-moved");
    this.line.setAttribute("role", "status");
    this.line.append(el(doc, "span", "sw-moved-label", "moved"));
    this.lineText = el(doc, "span", "sw-moved-text");
    this.line.append(this.lineText);
    this.line.title = "what moving the original array's layout to the one shown moves between devices";

    this.side = el(doc, "section", "sw-xfer-side");
    this.side.setAttribute("aria-label", "what the re-layout moves per device");
    const head = el(doc, "div", "sw-xfer-head");
    head.append(el(doc, "span", "sw-pane-title", "Colour devices by"));
    this.seg = this.heatToggle();
    head.append(this.seg);
    this.keyHost = el(doc, "div", "sw-xfer-key");
    this.pairText = el(doc, "div", "sw-xfer-pairs sw-hint", "hover a device: whom it sends to (orange) and receives from (blue)");
    this.pairText.setAttribute("aria-live", "polite");
    this.side.append(head, this.keyHost, this.pairText);

    this.section = el(doc, "section", "sw-xfer");
    this.section.setAttribute("aria-label", "cost of the re-layout");
    const h = el(doc, "div", "sw-xfer-h");
    h.append(el(doc, "span", "sw-pane-title", "Re-layout from the original"));
    this.sectionNote = el(doc, "span", "sw-hint");
    this.picker = new HardwarePicker(doc, (n) => cb.chooseHardware(n), "transfer-hardware");
    this.openBtn = el(doc, "button", "sw-button sw-xfer-open");
    this.openBtn.type = "button";
    this.openBtn.dataset.key = "transfer-open";
    this.openBtn.title = "the kernel compiles the reshard (XLA) for its collectives and time only when asked";
    this.openBtn.addEventListener("click", () => cb.openCost(!this.open));
    h.append(this.sectionNote, this.openBtn, this.picker.el);
    this.collHost = el(doc, "div", "sw-xfer-coll");
    this.estHost = el(doc, "div", "sw-xfer-est");
    this.section.append(h, this.collHost, this.estHost);
    this.hideAll();
  }

  private heatToggle(): HTMLElement {
    const g = el(this.doc, "div", "sw-seg");
    g.setAttribute("role", "group");
    g.setAttribute("aria-label", "colour devices by");
    for (const [m, text, tip] of [
      ["off", "device", "each device its own colour (as in the grid)"],
      ["in", "bytes in", "bytes each device receives in the re-layout"],
      [
        "out",
        "bytes out",
        "bytes each device sends in the re-layout (each piece comes from one holder of the old block it lies in, dealt round-robin among that block's holders)",
      ],
    ] as const) {
      const b = el(this.doc, "button", "sw-seg-btn", text);
      b.type = "button";
      b.dataset.key = `heat-${m}`;
      b.title = tip;
      b.setAttribute("aria-pressed", String(m === this.mode));
      b.addEventListener("click", () => this.setHeatMode(m));
      g.append(b);
    }
    return g;
  }

  get heatMode(): HeatMode {
    return this.mode;
  }

  setHeatMode(m: HeatMode): void {
    this.mode = m;
    for (const b of this.seg.querySelectorAll<HTMLElement>("button"))
      b.setAttribute("aria-pressed", String(b.dataset.key === `heat-${m}`));
    this.drawHeat();
  }

  private hideAll(): void {
    this.line.hidden = true;
    this.side.hidden = true;
    this.section.hidden = true;
  }

  /** Show `t` (the transfer of the shown layout, or null: none published for it). */
  update(
    t: TransferWire | null,
    layout: Layout | null,
    presets: HardwareWire[],
    hardware: string,
    staticPage = false,
    open = false,
  ): void {
    // A saved page has no kernel to ask: it shows what it was saved with.
    open = open || (staticPage && t?.status === "ready");
    const same = t === this.t && layout === this.layout && open === this.open;
    this.t = t;
    this.layout = layout;
    this.open = open;
    this.openBtn.hidden = staticPage;
    this.openBtn.textContent = open ? "hide" : "show what XLA compiles for it";
    this.openBtn.setAttribute("aria-expanded", String(open));
    this.picker.update(presets, hardware, staticPage ? "a saved page: the estimate is for the hardware it was saved with" : "");
    if (!t || !layout) {
      this.hideAll();
      this.cb.setHeat(null);
      return;
    }
    this.line.hidden = false;
    this.line.dataset.status = t.status;
    this.lineText.textContent = movedText(t, open);
    const moves = (t.status === "ready" || t.status === "pending") && t.received.length > 0;
    this.side.hidden = !moves;
    this.section.hidden = t.status !== "ready" && t.status !== "pending";
    const drawn = `${t.key}:${t.status}:${hardware}:${open}`;
    if (same && this.drawnKey === drawn) return;
    this.drawnKey = drawn;
    this.partners = partnersOf(t.pairs);
    this.drawHeat();
    this.drawSection(t, hardware);
  }

  private drawHeat(): void {
    const t = this.t;
    const layout = this.layout;
    if (!t || !layout || this.mode === "off" || t.received.length === 0) {
      this.keyHost.replaceChildren();
      this.cb.setHeat(null);
      return;
    }
    const values = this.mode === "in" ? t.received : t.sent;
    const { colors, max } = heatPaint(layout.devices.ids, values);
    this.keyHost.replaceChildren(heatKey(this.doc, max, this.mode === "in" ? "bytes in" : "bytes out"));
    this.cb.setHeat(colors);
  }

  private drawSection(t: TransferWire, hardware: string): void {
    const doc = this.doc;
    const cut = t.pairs_left_out > 0 ? ` (${t.pairs_left_out} smaller sender → receiver pairs not sent)` : "";
    this.picker.el.hidden = !this.open;
    if (!this.open) {
      this.sectionNote.textContent = `${formatBytes(t.total)} in all${cut}`;
      this.collHost.replaceChildren();
      this.estHost.replaceChildren();
      return;
    }
    if (t.status === "pending") {
      this.sectionNote.textContent = `${formatBytes(t.total)} in all; the collectives XLA compiles and their time follow…${cut}`;
      this.collHost.replaceChildren();
      this.estHost.replaceChildren();
      return;
    }
    this.sectionNote.textContent = `${formatBytes(t.total)} received in all, what XLA compiles for it:${cut}`;
    const light = (i: number | null) => this.cb.lightGroups(i === null ? null : collectivePaint(t.collectives[i], t.group_sets));
    this.collHost.replaceChildren(renderCollectives(doc, t.collectives, light));
    const est = t.estimate;
    if (hasEstimate(est)) {
      const pending = est.hardware !== hardware ? el(doc, "div", "sw-hint", `estimating for ${hardware}…`) : null;
      this.estHost.replaceChildren(
        ...(pending ? [pending] : []),
        renderEstimate(doc, est, { compact: true, hoverCollective: light }),
      );
    } else this.estHost.replaceChildren();
  }

  /** A device is hovered (or left): say whom it sends to and receives from; the partners. */
  hoverDevice(id: number | null): { to: Set<number>; from: Set<number> } {
    const t = this.t;
    const layout = this.layout;
    const none = { to: new Set<number>(), from: new Set<number>() };
    if (this.side.hidden || !t || !layout) return none;
    if (id === null) {
      this.pairText.textContent = "hover a device: whom it sends to (orange) and receives from (blue)";
      return none;
    }
    this.pairText.textContent = deviceTransferText(t, layout, this.partners, id);
    return {
      to: new Set((this.partners.to.get(id) ?? []).map(([d]) => d)),
      from: new Set((this.partners.from.get(id) ?? []).map(([d]) => d)),
    };
  }

  /** More words for a device's tooltip. */
  tooltip(id: number): string {
    const t = this.t;
    const layout = this.layout;
    if (!t || !layout || this.side.hidden) return "";
    return deviceTransferText(t, layout, this.partners, id);
  }

  /** The collectives shown (tests). */
  get collectives(): Collective[] {
    return this.t?.status === "ready" ? this.t.collectives : [];
  }
}
