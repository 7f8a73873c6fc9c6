// Header: what the array is, how it is laid out; busy / error / statistics status.
import type { Layout, Stats } from "./types";
import { formatBytes, plural } from "./text";

export interface HeaderCallbacks {
  find(text: string): void;
}

export function summaryLine(layout: Layout): string {
  const rep = Number.isInteger(layout.replication)
    ? String(layout.replication)
    : layout.replication.toFixed(2);
  return [
    plural(layout.blocks.length, "block"),
    `replication ${rep}`,
    `${formatBytes(layout.bytes_per_device)} per device`,
    `${formatBytes(layout.logical_bytes)} logical`,
  ].join(" · ");
}

export function meshSummary(layout: Layout): string {
  const m = layout.mesh;
  const plat = `${layout.devices.platform}${layout.devices.kind && layout.devices.kind !== layout.devices.platform ? ` (${layout.devices.kind})` : ""}`;
  if (!m) return `${plural(layout.devices.ids.length, "device")} · ${plat}`;
  const axes = m.axis_names
    .map((n, i) => `${n}=${m.axis_sizes[i]}${m.axis_types[i] === "explicit" ? " (explicit)" : ""}`)
    .join(" × ");
  return `mesh ${axes} · ${plural(m.device_ids.length, "device")} · ${plat}`;
}

/** The statistics hint: "" when stats are ready for this layout. */
export function statsHint(layout: Layout | null, stats: Stats | null | undefined): string {
  if (!layout) return "";
  if (!stats || stats.key !== layout.key || stats.status === "pending") return "statistics pending…";
  if (stats.status === "unavailable") return stats.message || "statistics unavailable";
  return "";
}

export class Header {
  readonly el: HTMLElement;
  private typeofEl: HTMLElement;
  private badges: HTMLElement;
  private summary: HTMLElement;
  private note: HTMLElement;
  private busyEl: HTMLElement;
  private errorEl: HTMLElement;
  private hintEl: HTMLElement;
  readonly findInput: HTMLInputElement;
  private findMsg: HTMLElement;

  constructor(doc: Document, cb: HeaderCallbacks) {
    const mk = (tag: string, cls: string) => {
      const e = doc.createElement(tag);
      e.className = cls;
      return e;
    };
    this.el = mk("header", "sw-header");
    const top = mk("div", "sw-header-top");
    const left = mk("div", "sw-header-left");
    this.typeofEl = mk("code", "sw-typeof");
    this.badges = mk("span", "sw-badges");
    left.append(this.typeofEl, this.badges);
    const right = mk("div", "sw-header-right");
    this.busyEl = mk("span", "sw-busy");
    this.busyEl.setAttribute("role", "status");
    this.busyEl.hidden = true;
    this.busyEl.innerHTML = '<span class="sw-spinner" aria-hidden="true"></span>working…';
    const findLab = mk("label", "sw-find") as HTMLLabelElement;
    const findSpan = mk("span", "sw-visually-hidden");
    findSpan.textContent = "find device id";
    this.findInput = doc.createElement("input");
    this.findInput.type = "search";
    this.findInput.placeholder = "find device id";
    this.findInput.inputMode = "numeric";
    this.findInput.size = 12;
    this.findInput.addEventListener("input", () => cb.find(this.findInput.value));
    this.findMsg = mk("span", "sw-find-msg");
    findLab.append(findSpan, this.findInput);
    right.append(this.busyEl, findLab, this.findMsg);
    top.append(left, right);
    this.summary = mk("div", "sw-summary");
    this.note = mk("div", "sw-note");
    this.errorEl = mk("div", "sw-error");
    this.errorEl.setAttribute("role", "alert");
    this.errorEl.hidden = true;
    this.hintEl = mk("div", "sw-hint");
    this.hintEl.hidden = true;
    this.el.append(top, this.summary, this.note, this.errorEl, this.hintEl);
  }

  update(layout: Layout | null, stats: Stats | null | undefined): void {
    const doc = this.el.ownerDocument;
    if (!layout) {
      this.typeofEl.textContent = "waiting for the array…";
      this.badges.replaceChildren();
      this.summary.textContent = "";
      this.note.hidden = true;
      this.setHint("");
      return;
    }
    this.typeofEl.textContent = layout.typeof;
    this.typeofEl.title = `shape (${layout.shape.join(", ")}), ${layout.dtype}`;
    const badge = (text: string, title: string, cls = "") => {
      const b = doc.createElement("span");
      b.className = `sw-tag ${cls}`.trim();
      b.textContent = text;
      b.title = title;
      return b;
    };
    const bs: HTMLElement[] = [badge(layout.sharding, "sharding class")];
    if (layout.spec_str) bs.push(badge(layout.spec_str, "PartitionSpec", "sw-tag-code"));
    if (layout.memory_kind) bs.push(badge(layout.memory_kind, "memory kind"));
    bs.push(
      badge(
        layout.source === "resharded" ? "re-sharded" : "original array",
        layout.source === "resharded"
          ? "a copy made with device_put from the controls"
          : "the array you passed in",
        layout.source === "resharded" ? "sw-tag-accent" : "",
      ),
    );
    this.badges.replaceChildren(...bs);
    this.summary.textContent = `${meshSummary(layout)}  —  ${summaryLine(layout)}`;
    this.note.textContent = layout.note;
    this.note.hidden = !layout.note;
    this.setHint(statsHint(layout, stats));
  }

  setHint(text: string): void {
    this.hintEl.textContent = text;
    this.hintEl.hidden = !text;
  }

  setBusy(busy: boolean): void {
    this.busyEl.hidden = !busy;
  }

  setError(text: string): void {
    this.errorEl.textContent = text;
    this.errorEl.hidden = !text;
  }

  setFindMessage(text: string, invalid: boolean): void {
    this.findMsg.textContent = text;
    if (invalid) this.findInput.setAttribute("aria-invalid", "true");
    else this.findInput.removeAttribute("aria-invalid");
  }
}
