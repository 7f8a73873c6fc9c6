// The jaxpr panel of the function view: the traced program as JAX prints it (shardings show in its
// types under Explicit axes), collapsed until opened. The kernel sends at most wire MAX_JAXPR
// characters; the panel says when the text was cut and where the whole of it is.
import type { Trace } from "../wire";
import { el as mk } from "../shared/dom";
import { plural } from "../shared/text";

/** Lines of a jaxpr text ("" has none). */
function lineCount(text: string): number {
  return text ? text.split("\n").length : 0;
}

export class JaxprPanel {
  /** A <details>: kept across traces so that an opened panel stays open. */
  readonly el: HTMLDetailsElement;
  private summaryNote: HTMLElement;
  private cutNote: HTMLElement;
  private pre: HTMLPreElement;
  private text = "";

  constructor(doc: Document) {
    this.el = mk(doc, "details", "sw-tr-section sw-tr-jaxpr");
    const summary = mk(doc, "summary", "sw-tr-h");
    this.summaryNote = mk(doc, "span", "sw-tr-h-note");
    summary.append(mk(doc, "span", "", "Program (jaxpr)"), this.summaryNote);
    this.cutNote = mk(doc, "div", "sw-note sw-tr-jaxpr-cut");
    this.cutNote.hidden = true;
    this.pre = mk(doc, "pre", "sw-tr-jaxpr-text");
    this.pre.tabIndex = 0; // scrollable by keyboard
    this.pre.setAttribute("aria-label", "jaxpr of the traced program");
    this.el.append(summary, this.cutNote, this.pre);
    this.el.hidden = true;
  }

  /** Show the jaxpr of `trace` (hidden when it has none: no layout compiled, an older kernel). */
  update(trace: Trace | null): void {
    const text = trace?.jaxpr ?? "";
    const cut = trace?.jaxpr_cut ?? 0;
    this.el.hidden = !text;
    if (!text) return;
    const lines = lineCount(text);
    this.summaryNote.textContent =
      `${plural(lines, "line")}${cut > 0 ? " shown" : ""}: what JAX traced, ` +
      "before XLA partitions it";
    this.cutNote.textContent =
      cut > 0
        ? `Cut: ${plural(cut, "more character")} not sent; the whole text is ` +
          "view.trace.jaxpr in Python."
        : "";
    this.cutNote.hidden = cut === 0;
    if (text !== this.text) {
      this.text = text;
      this.pre.textContent = text;
    }
  }

  /** The text shown (tests). */
  get shownText(): string {
    return this.text;
  }
}
