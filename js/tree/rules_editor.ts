// The rules editor: one `regex  P(...)` per line (first match wins) or a logical rule
// `name -> mesh axis` (Python: model/rules_text.py), a line-number gutter that
// marks the line an error names, and the error in words under it. An edit is sent after a short
// pause; a valid one re-lays the tree out at once, a refused one keeps the last good layout.
import { el as mk } from "../shared/dom";

const DEBOUNCE_MS = 300;

/** The editor line an error message names ("… (line 3) …", "line 3: …"), or 0. */
export function errorLine(message: string): number {
  const m = /\bline (\d+)\b/.exec(message);
  return m ? Number(m[1]) : 0;
}

export class RulesEditor {
  readonly el: HTMLElement;
  private area: HTMLTextAreaElement;
  private gutter: HTMLElement;
  private errorEl: HTMLElement;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The text the kernel holds (the last one it accepted). */
  private kernelText = "";

  constructor(
    private readonly doc: Document,
    private readonly onText: (text: string) => void,
  ) {
    this.el = mk(doc, "section", "sw-tree-rules");
    const title = mk(doc, "div", "sw-tree-rules-title", "Partition rules");
    const hint = mk(
      doc,
      "span",
      "sw-hint",
      " one per line: a regex on the leaf's path, then its spec (the first match wins; unmatched leaves keep their layout), or a logical axis name -> mesh axis",
    );
    title.append(hint);
    const box = mk(doc, "div", "sw-tree-rules-box");
    this.gutter = mk(doc, "div", "sw-tree-gutter");
    this.gutter.setAttribute("aria-hidden", "true");
    this.area = mk(doc, "textarea", "sw-tree-rules-text");
    this.area.spellcheck = false;
    this.area.rows = 5;
    this.area.dataset.key = "tree-rules";
    this.area.placeholder = "embed  P('model', None)\nkernel  P('data', 'model')\nvocab -> model";
    this.area.setAttribute("aria-label", "partition rules, one per line");
    this.area.setAttribute("data-lm-suppress-shortcuts", "true"); // Lumino's own opt-out
    this.area.addEventListener("input", () => {
      this.drawGutter(0);
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.onText(this.area.value), DEBOUNCE_MS);
    });
    this.area.addEventListener("scroll", () => (this.gutter.scrollTop = this.area.scrollTop));
    // Keys typed here are the editor's: JupyterLab's notebook bindings listen on the document
    // and would take Enter (edit mode), Shift+Enter (run the cell), A / B / D D, … (as
    // ipywidgets' Textarea does, they stop here). Ctrl / Cmd + Enter sends the text now.
    for (const type of ["keydown", "keypress", "keyup"] as const)
      this.area.addEventListener(type, (e) => this.ownKey(e));
    box.append(this.gutter, this.area);
    this.errorEl = mk(doc, "div", "sw-error sw-tree-rules-error");
    this.errorEl.setAttribute("role", "alert");
    this.errorEl.hidden = true;
    this.el.append(title, box, this.errorEl);
  }

  /** The text the kernel holds, and the error of the last edit ("" when it was accepted). The
   *  text is put in the box only when the user is not typing there (their edit stays). */
  render(text: string, error: string): void {
    const typing = this.doc.activeElement === this.area;
    if (text !== this.kernelText && (!typing || this.area.value === this.kernelText)) {
      this.area.value = text;
    }
    this.kernelText = text;
    this.errorEl.hidden = !error;
    this.errorEl.textContent = error;
    this.area.classList.toggle("sw-failed", !!error);
    this.drawGutter(error ? errorLine(error) : 0);
  }

  /** Send the text now (tests, and Enter with Ctrl / Cmd). */
  flush(): void {
    clearTimeout(this.timer);
    this.onText(this.area.value);
  }

  private ownKey(e: KeyboardEvent): void {
    e.stopPropagation();
    if (e.type === "keydown" && e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.flush();
    }
  }

  get textarea(): HTMLTextAreaElement {
    return this.area;
  }

  private drawGutter(bad: number): void {
    const n = Math.max(this.area.rows, this.area.value.split("\n").length);
    const nodes: HTMLElement[] = [];
    for (let i = 1; i <= n; i++) {
      const l = mk(this.doc, "div", i === bad ? "sw-tree-gutter-bad" : "", String(i));
      if (i === bad) l.title = "this line is refused: see the message below";
      nodes.push(l);
    }
    this.gutter.replaceChildren(...nodes);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
