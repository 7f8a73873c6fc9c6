import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import { CARDS_UP_TO } from "../../function/compact";
import { hloDtype, leafCollectives } from "../../function/leaf_table";
import { function8 } from "../wire/fixtures.gen";
import type { FunctionModel, TraceRequestMsg } from "../../wire";
import { flush } from "../testing";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

/** function8 (inputs a, b; outputs out['out'], out['total']) with `extra` more inputs, copies of
 *  a named p[0] … (a parameter tree's leaves). */
function withInputs(extra: number): FunctionModel {
  const f = structuredClone(function8);
  const copy = <T extends { path: string }>(x: T, i: number): T => ({ ...x, path: `p[${i}]` });
  for (let i = 0; i < extra; i++) {
    f._trace_options.inputs.push(copy(f._trace_options.inputs[0], i));
    f._trace.inputs.push(copy(f._trace.inputs[0], i));
    f.in_specs.push(f.in_specs[0]);
    f._trace_stats.inputs?.push(f._trace_stats.inputs[0]);
  }
  return f;
}

function mountFn(f: FunctionModel) {
  const model = new FakeModel(f);
  const el = document.createElement("div");
  el.style.width = "1000px";
  document.body.append(el);
  const view = new FunctionView(model as never, el);
  cleanups.push(() => view.dispose());
  return { model, el, view };
}

describe("function view: a table of leaves and one grid", () => {
  it("a few leaves keep a card each", () => {
    const { el, view } = mountFn(function8);
    expect(function8._trace.inputs.length + function8._trace.outputs.length).toBeLessThanOrEqual(CARDS_UP_TO);
    expect(el.querySelectorAll(".sw-tr-leaf").length).toBe(4);
    expect(view.compactLeaves).toBeNull();
  });

  it("more leaves: one row each, ONE card and ONE mesh; a click draws that leaf's grid", () => {
    const f = withInputs(10);
    const { el, view } = mountFn(f);
    const rows = el.querySelectorAll<HTMLElement>(".sw-tr-leafrow");
    expect(rows.length).toBe(12 + 2);
    expect(el.querySelectorAll(".sw-tr-leaf").length).toBe(1);
    expect(el.querySelectorAll(".sw-tr-leaf .sw-mesh").length).toBeLessThanOrEqual(1);
    expect(el.querySelectorAll(".shardwidget.sw-embedded").length).toBe(1);
    // Row a: its type, spec, bytes per device, and the collective of its local shape.
    const a = rows[0];
    const leaf = f._trace.inputs[0];
    expect(a.textContent).toContain(`${leaf.dtype}[${leaf.shape.join(",")}]`);
    expect(a.getAttribute("aria-selected")).toBe("true");
    const out = el.querySelector<HTMLElement>(".sw-tr-leafrow[data-side='out'][data-index='0']")!;
    out.click();
    expect(view.compactLeaves!.pickedLeaf).toEqual({ side: "out", index: 0 });
    const card = el.querySelector<HTMLElement>(".sw-tr-leaf")!;
    expect(card.dataset.side).toBe("out");
    expect(view.compactLeaves!.pickedCard!.leafModel!.get("_layout")).toBe(f._trace.outputs[0].layout);
    expect(el.querySelectorAll(".sw-tr-leaf").length).toBe(1);
    // Exactly one row is marked picked, and it is out 0's.
    const picked = [...el.querySelectorAll<HTMLElement>(".sw-tr-leafrow-selected")];
    expect(picked.map((r) => [r.dataset.side, r.dataset.index])).toEqual([["out", "0"]]);
  });

  it("an input's spec selectors sit on its one card and ask the kernel", async () => {
    const f = withInputs(6);
    const { el, model } = mountFn(f);
    (el.querySelector<HTMLElement>(".sw-tr-leafrow[data-side='in'][data-index='3']")!).click();
    // The card is input 3's (p[1], P('x', 'y')): its first dimension's selector shows 'x'.
    const card = el.querySelector<HTMLElement>(".sw-tr-leaf")!;
    expect([card.dataset.side, card.dataset.index]).toEqual(["in", "3"]);
    const sel = card.querySelector<HTMLSelectElement>("select[data-key='in-3-dim-0']")!;
    expect(sel.value).toBe("x");
    // Choosing "none" there asks the kernel for input 3 alone unsharded along that dimension.
    sel.value = "";
    sel.dispatchEvent(new Event("change"));
    await flush();
    expect(model.sent.length).toBe(1);
    const msg = model.sent[0] as TraceRequestMsg;
    expect(msg.type).toBe("trace_request");
    const want = f.in_specs.map((s, i) => (i === 3 ? [null, "y"] : s));
    expect(msg.state.in_specs).toEqual(want);
  });
});

describe("collectives a leaf touches", () => {
  it("are the kernel's dataflow answer, never a match of shape", () => {
    expect(hloDtype("float32")).toBe("f32");
    expect(hloDtype("bfloat16")).toBe("bf16");
    expect(hloDtype("int8")).toBe("s8");
    expect(hloDtype("bool")).toBe("pred");
    const cs = function8._trace.collectives;
    expect(cs.length).toBeGreaterThan(0);
    for (const side of ["in", "out"] as const) {
      const n = side === "in" ? function8._trace.inputs.length : function8._trace.outputs.length;
      for (let i = 0; i < n; i++) {
        const want = cs.flatMap((c, k) => ((side === "in" ? c.in_leaves : c.out_leaves)!.includes(i) ? [k] : []));
        expect(leafCollectives(side, i, cs)).toEqual(want);
      }
    }
    expect(cs.some((c) => (c.in_leaves ?? []).length > 0)).toBe(true);
    // one collective the kernel could not follow: the column says "not told", nothing guessed
    const untold = [{ ...cs[0], in_leaves: null, leaves_note: "unknown: …" }, ...cs.slice(1)];
    expect(leafCollectives("in", 0, untold)).toBeNull();
  });
});
