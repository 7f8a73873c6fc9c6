// Header: what the array is, how it is laid out; busy / error / statistics status.
import type { Layout, Stats } from "../wire";
import { CopyButton } from "../shared/copy";
import { formatBytes, plural } from "../shared/text";

let findCount = 0;

export interface HeaderCallbacks {
  find(text: string): void;
}

function summaryLine(layout: Layout): string {
  const rep = Number.isInteger(layout.replication)
    ? String(layout.replication)
    : layout.replication.toFixed(2);
  const parts = [
    plural(layout.blocks.length, "block"),
    `replication ${rep}`,
    `${formatBytes(layout.bytes_per_device)} per device`,
    `${formatBytes(layout.logical_bytes)} logical`,
  ];
  if (isEmpty(layout)) parts.push(EMPTY);
  const partial = partialNote(layout);
  if (partial) parts.push(partial);
  return parts.join(" · ");
}

/** A layout no mesh and spec describe (gspmd.CUSTOM in Python). */
export const CUSTOM = "custom layout";

/** What the header says of an array with a dimension of size 0 (text.EMPTY in Python). */
export const EMPTY = "empty array: no elements, the layout only";

/** Whether the array has no elements (a dimension of size 0): its layout is still drawn. */
export function isEmpty(layout: Layout): boolean {
  return layout.shape.some((n) => n === 0);
}

/** An unreduced layout in words (Layout.partial_note in Python); "" for other layouts. */
export function partialNote(layout: Layout): string {
  const u = layout.unreduced ?? [];
  if (u.length === 0) return "";
  const axes = u.map((a) => `'${a}'`).join(", ");
  return `unreduced over ${axes}: each device holds a partial value; the array is the sum of the partials over ${axes} (statistics are of each partial)`;
}

function meshSummary(layout: Layout): string {
  const m = layout.mesh;
  const plat = `${layout.devices.platform}${layout.devices.kind && layout.devices.kind !== layout.devices.platform ? ` (${layout.devices.kind})` : ""}`;
  const ids = layout.devices.ids;
  // No mesh: one device, or a layout no mesh and spec describe (Python: gspmd.CUSTOM).
  if (!m && ids.length === 1) return `one device: ${layout.devices.platform} ${ids[0]} · ${plat}`;
  if (!m) return `${CUSTOM} · ${plural(ids.length, "device")} · ${plat}`;
  const axes = m.axis_names
    .map((n, i) => `${n}=${m.axis_sizes[i]}${m.axis_types[i] === "explicit" ? " (explicit)" : ""}`)
    .join(" × ");
  const tiles = layout.sharding === "NamedSharding" ? "" : " (its tile assignment)";
  return `mesh ${axes}${tiles} · ${plural(m.device_ids.length, "device")} · ${plat}`;
}

/** The statistics hint: "" when stats are ready for this layout. */
export function statsHint(layout: Layout | null, stats: Stats | null | undefined): string {
  if (!layout) return "";
  if (!stats || stats.key !== layout.key || stats.status === "pending") return "statistics pending…";
  // An empty array's summary line already says it has no elements: not a second time here.
  if (stats.status === "unavailable") {
    return isEmpty(layout) ? "" : stats.message || "statistics unavailable";
  }
  return "";
}

/** A parsed find-box query: id ranges [lo, hi] (inclusive); `single` when it is one id. */
export type DeviceQuery = { ranges: [number, number][]; single: boolean } | { error: string };

/** Examples for the find box made of the layout's own device ids: an id, a range, a list
 *  ("12", "12-15", "3,7,9" with 4096 devices; "0" alone with one device). */
export function findExamples(ids: number[]): string[] {
  const s = [...new Set(ids)].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return [];
  if (n === 1) return [String(s[0])];
  const has = new Set(s);
  if ([3, 7, 9, 12, 13, 14, 15].every((i) => has.has(i))) return ["12", "12-15", "3,7,9"];
  if (n === 2) return [String(s[1]), `${s[0]},${s[1]}`];
  const run = s.length >= 4 && s[3] - s[0] === 3 ? `${s[0]}-${s[3]}` : `${s[0]}-${s[n - 1]}`;
  return [String(s[Math.min(2, n - 1)]), run, `${s[0]},${s[n - 1]}`];
}

/**
 * Parse the find box: ids and ranges separated by commas or spaces: "1234", "12-15" (also
 * "12–15", "12..15"), "3,7,9", "0-3, 8". null for an empty box; { error } for anything else.
 */
export function parseDeviceQuery(text: string): DeviceQuery | null {
  const t = text.trim();
  if (t === "") return null;
  const ranges: [number, number][] = [];
  for (const part of t.split(/[\s,;]+/)) {
    if (part === "") continue;
    const m = /^(\d{1,9})(?:(?:-|–|—|\.\.)(\d{1,9}))?$/.exec(part);
    if (!m) {
      return { error: /^\d+(-|–|—|\.\.)$/.test(part) ? `${part}: the range needs an end` : `"${part}" is not an id or a range (use 12, 12-15 or 3,7,9)` };
    }
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    ranges.push(lo <= hi ? [lo, hi] : [hi, lo]);
  }
  if (ranges.length === 0) return null;
  return { ranges, single: ranges.length === 1 && ranges[0][0] === ranges[0][1] };
}

/** The ids among `known` that the ranges cover, sorted and distinct. */
export function matchDevices(ranges: [number, number][], known: Iterable<number>): number[] {
  const out = new Set<number>();
  for (const id of known) if (ranges.some(([lo, hi]) => lo <= id && id <= hi)) out.add(id);
  return [...out].sort((a, b) => a - b);
}

export class Header {
  readonly el: HTMLElement;
  private typeofEl: HTMLElement;
  private badges: HTMLElement;
  private summary: HTMLElement;
  private note: HTMLElement;
  private busyEl: HTMLElement;
  /** The error banner: placed by the view below the controls (an error appearing must not move
   *  the controls under the pointer). */
  readonly errorEl: HTMLElement;
  private hintEl: HTMLElement;
  readonly findInput: HTMLInputElement;
  private findMsg: HTMLElement;
  readonly copy: CopyButton;
  private right: HTMLElement;

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
    this.busyEl.innerHTML = '<span class="shardwidget-spinner" aria-hidden="true"></span>working…';
    const findLab = mk("label", "sw-find") as HTMLLabelElement;
    const findSpan = mk("span", "sw-find-label");
    findSpan.textContent = "find device";
    // ids or mesh coordinates (array/find.ts)
    this.findInput = doc.createElement("input");
    this.findInput.type = "search";
    this.findInput.placeholder = "12, 12-15, x=1,y=*";
    this.findInput.autocomplete = "off";
    this.findInput.spellcheck = false;
    this.findInput.size = 14;
    this.findInput.dataset.key = "find";
    this.findInput.title =
      "Highlight devices by id: 1234, a range 12-15, a list 3,7,9; or by mesh coordinate: x=3, y=*, x=1,y=2, x=0-1. Esc clears.";
    this.findMsg = mk("span", "sw-find-msg");
    this.findMsg.id = `sw-find-msg-${++findCount}`;
    this.findMsg.setAttribute("aria-live", "polite");
    this.findInput.setAttribute("aria-describedby", this.findMsg.id);
    this.findInput.addEventListener("input", () => cb.find(this.findInput.value));
    this.findInput.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || this.findInput.value === "") return;
      // Esc clears the box (and nothing else: a pinned detail stays until the next Esc).
      e.preventDefault();
      e.stopPropagation();
      this.findInput.value = "";
      cb.find("");
    });
    findLab.append(findSpan, this.findInput);
    this.copy = new CopyButton(doc);
    right.append(this.busyEl, findLab, this.findMsg, this.copy.el);
    this.right = right;
    top.append(left, right);
    this.summary = mk("div", "sw-summary");
    this.note = mk("div", "sw-note");
    this.errorEl = mk("div", "sw-error");
    this.errorEl.setAttribute("role", "alert");
    this.errorEl.hidden = true;
    this.hintEl = mk("div", "sw-hint");
    this.hintEl.hidden = true;
    this.el.append(top, this.summary, this.note, this.hintEl);
  }

  update(layout: Layout | null, stats: Stats | null | undefined): void {
    const doc = this.el.ownerDocument;
    if (!layout) {
      this.typeofEl.textContent = "waiting for the array…";
      this.badges.replaceChildren();
      this.summary.textContent = "";
      this.note.hidden = true;
      this.setHint("");
      this.copy.set("");
      return;
    }
    this.copy.set(layout.code ?? "");
    const ex = findExamples(layout.devices.ids);
    // A mesh coordinate example (x=1,y=*) when the layout has a mesh of more than one device.
    const m = layout.mesh;
    const coord =
      m && m.axis_names.length && layout.devices.ids.length > 1
        ? `${m.axis_names[0]}=${m.axis_sizes[0] > 1 ? 1 : 0}` + (m.axis_names.length > 1 ? `,${m.axis_names[1]}=*` : "")
        : "";
    this.findInput.placeholder = [...ex, ...(coord ? [coord] : [])].join(", ");
    // Wide enough for its examples (4096 devices, long axis names), never narrower than the CSS's.
    this.findInput.style.width = `max(12.5em, ${this.findInput.placeholder.length + 3}ch)`;
    this.findInput.title =
      layout.devices.ids.length === 1
        ? `Highlight device ${ex[0]} (the only device). Esc clears.`
        : `Highlight devices by id: ${ex[0]}, a range ${ex[1]}${ex[2] ? `, or a list ${ex[2]}` : ""}` +
          `${coord ? `, or by mesh coordinate ${coord}` : ""}. Esc clears.`;
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

  /** Put an action (the "save picture" buttons) beside "copy as code". */
  addAction(action: HTMLElement): void {
    this.right.append(action);
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
    this.findMsg.classList.toggle("sw-invalid", invalid);
    if (invalid) this.findInput.setAttribute("aria-invalid", "true");
    else this.findInput.removeAttribute("aria-invalid");
  }
}
