// Undo / redo beside Reset (issue 14, item 8): the buttons send a history message, are disabled
// when there is nowhere to go, say where a step leads, and are absent on a saved page.
import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import * as tfx from "../function_fixtures";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";

afterEach(() => unmountAll());

const btn = (el: HTMLElement, key: string) => el.querySelector<HTMLButtonElement>(`button[data-key="${key}"]`);

describe("history buttons", () => {
  it("array view: undo/redo send a history step and follow _history", async () => {
    const { el, model } = mount(fx.fx8(), {
      _history: { undo: 2, redo: 0, undo_label: "mesh x=2 × y=4 · P('y', None)", redo_label: "" },
    });
    const undo = btn(el, "undo")!;
    const redo = btn(el, "redo")!;
    expect(btn(el, "reset")!.parentElement).toBe(undo.parentElement); // beside Reset
    expect(undo.disabled).toBe(false);
    expect(undo.title).toBe("back to mesh x=2 × y=4 · P('y', None) (2 steps)");
    expect(redo.disabled).toBe(true);
    undo.click();
    expect(model.sent).toEqual([{ type: "history", step: -1 }]);
    model.set("_history", { undo: 1, redo: 1, undo_label: "mesh x=8 · P(None, None)", redo_label: "mesh x=2 × y=4 · P('x', 'y')" });
    await flush();
    const redo2 = btn(el, "redo")!;
    expect(redo2.disabled).toBe(false);
    expect(redo2.title).toContain("forward to mesh x=2 × y=4 · P('x', 'y') (1 step)");
    redo2.click();
    expect(model.sent[1]).toEqual({ type: "history", step: 1 });
  });

  it("no _history (a saved page): no buttons, Reset stays", () => {
    const { el } = mount(fx.fx8());
    expect(btn(el, "undo")).toBeNull();
    expect(btn(el, "reset")).not.toBeNull();
  });

  it("function view: the buttons sit with the mesh controls", async () => {
    const model = new FakeModel({
      ...tfx.traceTraitsOf(tfx.fxTraceLayerJit()),
      _history: { undo: 0, redo: 1, undo_label: "", redo_label: "mesh x=8 · P('x', None) → auto" },
    });
    const el = document.createElement("div");
    document.body.append(el);
    const view = new FunctionView(model as never, el);
    await flush();
    expect(btn(el, "undo")!.disabled).toBe(true);
    expect(btn(el, "undo")!.title).toBe("nothing to undo");
    btn(el, "redo")!.click();
    expect(model.sent).toEqual([{ type: "history", step: 1 }]);
    view.dispose();
  });
});
