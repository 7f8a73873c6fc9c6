import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import { JaxprPanel } from "../../function/jaxpr";
import * as tfx from "../function_fixtures";
import { flush } from "../testing";

const cleanups: (() => void)[] = [];

afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

const JAXPR = `{ lambda ; a:f32[8@x,16@y]. let
    b:f32[8@x,16@y] = sin a
    c:f32[8@x,16@y] = mul 2.0:f32[] b
  in (c,) }`;

function mountWith(jaxpr: string, cut = 0) {
  const f = tfx.fxTraceElementwise();
  f.trace = { ...f.trace, jaxpr, jaxpr_cut: cut };
  const model = new FakeModel(tfx.traceTraitsOf(f));
  const el = document.createElement("div");
  document.body.append(el);
  const view = new FunctionView(model, el);
  cleanups.push(() => view.dispose());
  return { f, model, el, view };
}

const panelOf = (el: HTMLElement) => el.querySelector<HTMLDetailsElement>("details.sw-tr-jaxpr")!;

describe("function view: the jaxpr panel", () => {
  it("is collapsed, titled, and holds the text exactly as sent", async () => {
    const { el, view } = mountWith(JAXPR);
    await flush();
    const panel = panelOf(el);
    expect(panel).not.toBeNull();
    expect(panel.hidden).toBe(false);
    expect(panel.open).toBe(false);
    const summary = panel.querySelector("summary")!.textContent ?? "";
    expect(summary).toContain("Program (jaxpr)");
    expect(summary).toContain("4 lines");
    expect(panel.querySelector("pre")!.textContent).toBe(JAXPR);
    expect(view.jaxprPanel.shownText).toBe(JAXPR);
    expect(panel.querySelector<HTMLElement>(".sw-tr-jaxpr-cut")!.hidden).toBe(true);
  });

  it("says when the kernel cut the text, and where the rest is", async () => {
    const { el } = mountWith(JAXPR, 12345);
    await flush();
    const cut = panelOf(el).querySelector<HTMLElement>(".sw-tr-jaxpr-cut")!;
    expect(cut.hidden).toBe(false);
    expect(cut.textContent).toContain("12345 more characters not sent");
    expect(cut.textContent).toContain("view.trace.jaxpr");
    expect(panelOf(el).querySelector("summary")!.textContent).toContain("4 lines shown");
  });

  it("stays open across a new trace and shows the new text", async () => {
    const { f, model, el } = mountWith(JAXPR);
    await flush();
    panelOf(el).open = true;
    const next = JAXPR.replace("sin", "cos");
    model.set("_trace", { ...f.trace, key: 2, jaxpr: next });
    model.set("_trace_stats", { ...f.stats, key: 2 });
    await flush();
    expect(panelOf(el).open).toBe(true);
    expect(panelOf(el).querySelector("pre")!.textContent).toBe(next);
  });

  it("is hidden while no layout has compiled and for kernels that send no jaxpr", async () => {
    const e = tfx.fxTraceErrorInitial();
    const model = new FakeModel(tfx.traceTraitsOf(e));
    const el = document.createElement("div");
    document.body.append(el);
    const view = new FunctionView(model, el);
    cleanups.push(() => view.dispose());
    await flush();
    expect(panelOf(el).hidden).toBe(true);
    const old = new JaxprPanel(document);
    old.update({ ...tfx.fxTraceSum().trace, jaxpr: undefined as unknown as string });
    expect(old.el.hidden).toBe(true);
  });
});
