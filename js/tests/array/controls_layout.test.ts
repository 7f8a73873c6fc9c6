import { afterEach, describe, expect, it } from "vitest";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";

afterEach(unmountAll);

describe("array view controls: where the buttons sit", () => {
  it("Reset / Undo / Redo act on the whole layout: beside the boxes, not in 'in memory'", async () => {
    const { el } = mount(fx.fx8(), {
      _history: { undo: 1, redo: 0, undo_label: "mesh x=2 × y=4 · P('x', 'y')", redo_label: "" },
    });
    await flush();
    const all = el.querySelector(".sw-controls-all")!;
    const row = all.querySelector(".sw-ctl-actions .sw-history-row")!;
    expect([...row.querySelectorAll("button")].map((b) => b.textContent)).toEqual(["Reset", "↶ Undo", "Redo ↷"]);
    for (const fs of all.querySelectorAll("fieldset.sw-fs")) expect(fs.querySelector("button")).toBeNull();
    expect(row.parentElement!.parentElement).toBe(all);
  });
});
