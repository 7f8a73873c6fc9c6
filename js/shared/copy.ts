// The "copy as code" button: copies the Python the kernel wrote for the layout shown
// (ArrayView.code / FunctionView.code, sent as Layout.code / Trace.code).
import { el } from "./dom";

/** Write text to the clipboard: the async Clipboard API where the page may use it (a secure
 *  context), else a hidden textarea and execCommand("copy"), which notebook frames served over
 *  plain http still allow. Resolves to whether the text was copied. */
export async function copyText(doc: Document, text: string): Promise<boolean> {
  const nav = doc.defaultView?.navigator;
  if (nav?.clipboard && doc.defaultView?.isSecureContext) {
    try {
      await nav.clipboard.writeText(text);
      return true;
    } catch {
      /* refused (no permission, no focus): try the old way */
    }
  }
  const area = el(doc, "textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  doc.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = doc.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

export class CopyButton {
  readonly el: HTMLButtonElement;
  private code = "";
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(doc: Document) {
    this.el = el(doc, "button", "sw-button sw-copy", "copy as code");
    this.el.type = "button";
    this.el.dataset.key = "copy-code";
    this.el.addEventListener("click", () => void this.copy());
    this.set("");
  }

  /** The code the button copies ("" hides it: function-view leaves carry none). */
  set(code: string): void {
    this.code = code;
    this.el.hidden = !code;
    this.el.title = code
      ? `Copy the Python that makes this layout:\n\n${code}`
      : "no code for this layout";
  }

  private async copy(): Promise<void> {
    if (!this.code) return;
    const ok = await copyText(this.el.ownerDocument, this.code);
    this.el.textContent = ok ? "copied ✓" : "copy failed: see the tooltip";
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.el.textContent = "copy as code";
    }, 1500);
  }
}
