// The "why" panel of the function view: why XLA inserted one collective (the inputs, constraint
// lines and outputs whose shardings met at an op), and the layouts that remove it, one click
// each. Mirrors src/shardwidget/wire/why.py (WhyMsg); the kernel answers each request.
import { el } from "../shared/dom";
import { injectCss } from "../shared/styles";
import { formatBytes, plural } from "../shared/text";

const WHY_CSS = `
.shardwidget .sw-tr-why { font: inherit; font-size: 12px; padding: 1px 6px; cursor: pointer; }
.shardwidget .sw-why { margin: 8px 0 0; padding: 8px 10px; border: 1px solid var(--sw-border); border-radius: 6px; background: var(--sw-bg2); max-width: 60em; }
.shardwidget .sw-why-head { display: flex; justify-content: space-between; font-weight: 600; font-size: 12.5px; }
.shardwidget .sw-why-close { border: none; background: none; cursor: pointer; font-size: 14px; color: var(--sw-fg2); }
.shardwidget .sw-why-text { margin: 6px 0; font-size: 12.5px; line-height: 1.45; color: var(--sw-fg); }
.shardwidget .sw-why-places { margin: 4px 0; padding-left: 18px; font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-why-fix { display: flex; gap: 8px; align-items: center; font-size: 12px; margin: 3px 0; }
.shardwidget .sw-why-removes { color: var(--sw-fg); font-weight: 600; }
.shardwidget .sw-why-touches { margin: 4px 0; padding-left: 18px; font-size: 12px; color: var(--sw-fg2); }
.shardwidget .sw-why-lit { outline: 2px solid var(--sw-accent); outline-offset: 2px; }
`;

/** An input, output or constraint a cause involves (wire/why.py PlaceWire). */
export interface WhyPlace {
  index: number;
  label: string;
  spec: string;
  where: string;
}

/** One array the collective carries and the leaves it touches (wire/why.py TouchWire). */
export interface WhyTouch {
  what: string;
  gradient_of: string;
  inputs: string[];
  outputs: string[];
}

/** One layout that may remove the collective (wire/why.py FixWire). */
export interface WhyFix {
  what: string;
  removes: boolean;
  collectives: number;
  peak: number | null;
  error: string;
}

/** The kernel's answer to a "why" request (wire/why.py WhyMsg). */
export interface WhyMsg {
  type: "why";
  index: number;
  ok: boolean;
  error: string;
  text: string;
  known: boolean;
  checked: string;
  op: string;
  inputs: WhyPlace[];
  outputs: WhyPlace[];
  constraints: WhyPlace[];
  fixes: WhyFix[] | null;
  applied: number;
  /** Per array it carries, the leaves it touches by dataflow ([]: not told, see leaves_note). */
  touches: WhyTouch[];
  leaves_note: string;
}

/** What the panel sends: a cause, its fixes, or applying fix `apply`. */
export interface WhyRequest {
  type: "why";
  index: number;
  fixes?: boolean;
  apply?: number;
}

export function isWhy(msg: unknown): msg is WhyMsg {
  return typeof msg === "object" && msg !== null && (msg as { type?: unknown }).type === "why";
}

/** Light the leaves a cause involves: elements carrying `data-side` ("in" / "out") and
 *  `data-index` under root get the class `sw-why-lit` (others lose it). One small function, so
 *  that another leaf layout (cards, a table) only needs those two data attributes. */
export function highlightLeaves(root: HTMLElement, inputs: number[], outputs: number[]): void {
  const want = new Set([...inputs.map((i) => `in:${i}`), ...outputs.map((i) => `out:${i}`)]);
  root.querySelectorAll<HTMLElement>("[data-side][data-index]").forEach((e) => {
    e.classList.toggle("sw-why-lit", want.has(`${e.dataset.side}:${e.dataset.index}`));
  });
}

/** The leaves the collective touches, per array it carries (a combined all-reduce: each
 *  gradient with its parameter); the reason in words where they are not told. */
export function touches(doc: Document, msg: WhyMsg): HTMLElement[] {
  const note = msg.leaves_note ? [el(doc, "p", "sw-hint", `leaves: ${msg.leaves_note}`)] : [];
  if (!msg.touches.length) return note;
  const list = el(doc, "ul", "sw-why-touches");
  list.setAttribute("aria-label", "the leaves it touches");
  for (const t of msg.touches) {
    const words = [
      `carries ${t.what}`,
      t.gradient_of ? `gradient of ${t.gradient_of}` : "",
      t.inputs.length ? `from ${t.inputs.join(", ")}` : "from no input",
      t.outputs.length ? `into ${t.outputs.join(", ")}` : "",
    ];
    list.append(el(doc, "li", "sw-why-touch", words.filter(Boolean).join(" · ")));
  }
  return [el(doc, "p", "sw-hint", "touches (by dataflow through the compiled program):"), list, ...note];
}

/** The panel under the collectives table: hidden until a row's "why?" is clicked. */
export class WhyPanel {
  readonly el: HTMLElement;
  private asked = -1;

  constructor(
    private readonly doc: Document,
    private readonly send: (msg: WhyRequest) => void,
    private readonly light: (inputs: number[], outputs: number[]) => void,
  ) {
    this.el = el(doc, "div", "sw-why");
    this.el.setAttribute("role", "region");
    this.el.setAttribute("aria-label", "why this collective");
    this.el.hidden = true;
  }

  /** Ask the kernel why collective i is there. */
  ask(i: number): void {
    this.asked = i;
    injectCss(this.el, "shardwidget-why", WHY_CSS); // (attached by now: its shadow root, if any)
    this.el.hidden = false;
    this.el.replaceChildren(el(this.doc, "p", "sw-muted", `asking why collective ${i + 1} is there…`));
    this.send({ type: "why", index: i });
  }

  /** The table was drawn again (a new layout): the panel's answer no longer holds. */
  reset(): void {
    this.asked = -1;
    this.el.hidden = true;
    this.el.replaceChildren();
    this.light([], []);
  }

  receive(msg: WhyMsg): void {
    if (msg.index !== this.asked) return;
    const doc = this.doc;
    const head = el(doc, "div", "sw-why-head", `Why collective ${msg.index + 1}`);
    const close = el(doc, "button", "sw-why-close", "×");
    close.type = "button";
    close.title = "close";
    close.addEventListener("click", () => this.reset());
    head.append(close);
    if (!msg.ok) {
      this.el.replaceChildren(head, el(doc, "p", "sw-error", msg.error));
      return;
    }
    const text = el(doc, "p", msg.known ? "sw-why-text" : "sw-why-text sw-muted", msg.text);
    const parts: HTMLElement[] = [head, text];
    if (msg.checked) parts.push(el(doc, "p", "sw-hint", msg.checked));
    const list = el(doc, "ul", "sw-why-places");
    for (const [what, ps] of [["input", msg.inputs], ["constraint", msg.constraints], ["output", msg.outputs]] as const) {
      for (const p of ps) {
        const words = [what, p.label, p.spec, p.where].filter(Boolean).join(" · ");
        list.append(el(doc, "li", `sw-why-${what}`, words));
      }
    }
    if (list.childElementCount) parts.push(list);
    parts.push(...touches(doc, msg));
    parts.push(this.fixes(msg));
    this.el.replaceChildren(...parts);
    this.light(msg.inputs.map((p) => p.index), msg.outputs.map((p) => p.index));
  }

  private fixes(msg: WhyMsg): HTMLElement {
    const doc = this.doc;
    const box = el(doc, "div", "sw-why-fixes");
    if (!msg.known) return box;
    if (msg.fixes === null) {
      const b = el(doc, "button", "sw-why-find", "find layouts that remove it");
      b.type = "button";
      b.title = "compiles each candidate layout once";
      b.addEventListener("click", () => {
        b.disabled = true;
        b.textContent = "compiling the candidates…";
        this.send({ type: "why", index: msg.index, fixes: true });
      });
      box.append(b);
      return box;
    }
    if (msg.fixes.length === 0) box.append(el(doc, "p", "sw-muted", "no layout the view can change removes it"));
    msg.fixes.forEach((f, k) => {
      const row = el(doc, "div", f.removes ? "sw-why-fix sw-why-removes" : "sw-why-fix");
      const peak = f.peak === null ? "" : ` · peak ${formatBytes(f.peak)} per device`;
      const says = f.error || `${f.removes ? "removes it" : "keeps it"} · ${plural(f.collectives, "collective")}${peak}`;
      row.append(el(doc, "span", "", `${f.what}: ${says}`));
      if (!f.error) {
        const b = el(doc, "button", "sw-why-apply", "apply");
        b.type = "button";
        b.title = "a layout change: undo restores";
        b.addEventListener("click", () => this.send({ type: "why", index: msg.index, apply: k }));
        row.append(b);
      }
      box.append(row);
    });
    return box;
  }
}
