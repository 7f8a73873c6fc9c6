// The undo / redo buttons beside Reset: step through the layouts shown (the kernel keeps them:
// ShardView.undo / redo). A saved page has no `_history` and no kernel: no buttons.
import type { HistoryWire } from "../wire";
import { el } from "./dom";

/** Undo and Redo for `history`, each disabled when it has nowhere to go; [] without one. */
export function historyButtons(
  doc: Document,
  history: HistoryWire | null | undefined,
  step: (by: -1 | 1) => void,
): HTMLButtonElement[] {
  if (!history || typeof history.undo !== "number") return [];
  const make = (by: -1 | 1, text: string, n: number, label: string): HTMLButtonElement => {
    const b = el(doc, "button", "sw-button sw-history", text);
    b.type = "button";
    b.dataset.key = by < 0 ? "undo" : "redo";
    b.disabled = n === 0;
    const what = by < 0 ? "back to" : "forward to";
    b.title = n === 0 ? `nothing to ${by < 0 ? "undo" : "redo"}` : `${what} ${label} (${n} step${n === 1 ? "" : "s"})`;
    b.setAttribute("aria-label", by < 0 ? "undo layout" : "redo layout");
    b.addEventListener("click", () => step(by));
    return b;
  };
  return [
    make(-1, "↶ Undo", history.undo, history.undo_label),
    make(1, "Redo ↷", history.redo, history.redo_label),
  ];
}
