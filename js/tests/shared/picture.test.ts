// "save picture" (issue 14, item 2): the buttons ask the kernel for view.to_svg() and save what
// comes back; an error is said; no kernel (a saved page): no buttons.
import { afterEach, describe, expect, it } from "vitest";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";
import { answerFrom, createModel } from "../../static/page";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import * as tfx from "../function_fixtures";

afterEach(() => unmountAll());

const HISTORY = { _history: { undo: 0, redo: 0, undo_label: "", redo_label: "" } };
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10"/></svg>';

describe("save picture", () => {
  it("SVG: asks the kernel, saves its answer under the name it gives", async () => {
    const { el, model } = mount(fx.fx8(), HISTORY);
    const pic = el.querySelector<HTMLElement>(".sw-picture")!;
    expect(pic.hidden).toBe(false);
    el.querySelector<HTMLButtonElement>('[data-key="save-svg"]')!.click();
    expect(model.sent).toEqual([{ type: "picture_request" }]);
    expect(pic.textContent).toContain("drawing…");
    const saved: string[] = [];
    document.body.addEventListener("click", (e) => {
      const a = e.target as HTMLAnchorElement;
      if (a.tagName === "A") saved.push(a.download);
    });
    model.emitCustom({ type: "picture", ok: true, svg: SVG, name: "shardwidget_x", error: "" });
    await flush();
    expect(saved).toEqual(["shardwidget_x.svg"]);
    expect(pic.textContent).toContain("saved shardwidget_x.svg");
  });

  it("an answer nobody asked for is ignored; a failure is said", async () => {
    const { el, model } = mount(fx.fx8(), HISTORY);
    const pic = el.querySelector<HTMLElement>(".sw-picture")!;
    model.emitCustom({ type: "picture", ok: true, svg: SVG, name: "n", error: "" });
    await flush();
    expect(pic.textContent).not.toContain("saved");
    el.querySelector<HTMLButtonElement>('[data-key="save-png"]')!.click();
    model.emitCustom({ type: "picture", ok: false, svg: "", name: "", error: "no picture: boom" });
    await flush();
    expect(pic.querySelector(".sw-picture-status")!.textContent).toBe("no picture: boom");
  });

  it("no kernel (no _history, as on a saved page): no buttons; the page ignores the message", () => {
    const { el } = mount(fx.fx8());
    expect(el.querySelector<HTMLElement>(".sw-picture")!.hidden).toBe(true);
    const pushed: unknown[] = [];
    const model = createModel({} as never, answerFrom({}));
    model.push = (v: unknown) => void pushed.push(v);
    model.send({ type: "picture_request" });
    return new Promise<void>((r) =>
      setTimeout(() => {
        expect(pushed).toEqual([]);
        r();
      }, 5),
    );
  });

  it("function view: the buttons sit in its header and ask the kernel too", async () => {
    const model = new FakeModel({ ...tfx.traceTraitsOf(tfx.fxTraceLayerJit()), ...HISTORY });
    const el = document.createElement("div");
    document.body.append(el);
    const view = new FunctionView(model as never, el);
    await flush();
    const pic = el.querySelector<HTMLElement>(".sw-header-right .sw-picture")!;
    expect(pic.hidden).toBe(false);
    pic.querySelector<HTMLButtonElement>('[data-key="save-svg"]')!.click();
    expect(model.sent).toEqual([{ type: "picture_request" }]);
    view.dispose();
  });
});
