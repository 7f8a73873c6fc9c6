// Issue 13 item 8: a mesh change that rewrites the spec says what changed and why, beside it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mount, unmountAll } from "../testing";
import * as fx from "../fixtures";
import { specRewrite, withMeshShape, withNumAxes } from "../../array/state";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import * as tfx from "../function_fixtures";

afterEach(() => {
  unmountAll();
  vi.useRealTimers();
});

describe("spec rewrites on a mesh change", () => {
  it("names the dropped axis and the reason", () => {
    const f = fx.namedFixture({ shape: [8, 12], meshShape: [2, 4], spec: ["x", "y"] });
    // 8 devices as 8×1: x=8 divides 8, y=1 divides 12: nothing dropped.
    expect(specRewrite(f.state, withMeshShape(f.state, [8, 1], f.options), [8, 12])).toBe("");
    // 1×8: y=8 does not divide 12.
    const n = withMeshShape(f.state, [1, 8], f.options);
    expect(n.spec).toEqual(["x", null]);
    expect(specRewrite(f.state, n, [8, 12])).toBe(
      "P('x', 'y') → P('x', None): dim 1 drops 'y' (y=8 does not divide 12)",
    );
    // One axis: 'y' is gone.
    const one = withNumAxes(f.state, 1, f.options);
    expect(specRewrite(f.state, one, [8, 12])).toMatch(/dim 1 drops 'y' \('y' is no longer a mesh axis\)/);
  });

  it("fewer axes keep the array split: 3 -> 2 on 2x2x2 with P('x', None, 'z') picks 2x4", () => {
    // issue 38 item 5: it picked the first shape, 1x8, where x has size 1 (replicated).
    const f = fx.namedFixture({ shape: [8, 8, 8], meshShape: [2, 2, 2], spec: ["x", null, "z"] });
    const two = withNumAxes(f.state, 2, f.options);
    expect(two.mesh_shape).toEqual([2, 4]);
    expect(two.spec).toEqual(["x", null, null]);
    // and back to three axes: still split over x, the old sizes kept where they fit
    const three = withNumAxes(two, 3, f.options);
    expect(three.mesh_shape.slice(0, 2)).toEqual([2, 4]);
    expect(three.spec).toEqual(["x", null, null]);
    // one axis: the only shape
    expect(withNumAxes(f.state, 1, f.options).mesh_shape).toEqual([8]);
  });

  it("shows the note beside the spec after the change, and hides it on the next change", async () => {
    vi.useFakeTimers();
    const f = fx.namedFixture({ shape: [8, 12], meshShape: [2, 4], spec: ["x", "y"] });
    const { el, model } = mount(f);
    const shape = el.querySelector<HTMLSelectElement>("[data-key=shape]")!;
    shape.value = "1,8";
    shape.dispatchEvent(new Event("change", { bubbles: true }));
    await vi.advanceTimersByTimeAsync(0);
    const note = () => el.querySelector<HTMLElement>(".sw-controls .sw-spec-note");
    expect(note()?.textContent).toContain("dim 1 drops 'y' (y=8 does not divide 12)");
    // It sits in the PartitionSpec fieldset, next to the spec preview.
    expect(note()!.previousElementSibling!.classList.contains("sw-spec-preview")).toBe(true);
    // The kernel answers with the new layout: still shown.
    vi.advanceTimersByTime(100);
    const sent = model.sent.at(-1);
    expect(sent.state.spec).toEqual(["x", null]);
    model.set("mesh_shape", [1, 8]);
    model.set("spec", ["x", null]);
    await vi.advanceTimersByTimeAsync(0);
    expect(note()).not.toBeNull();
    // The next change (a spec entry) hides it.
    const s0 = el.querySelector<HTMLSelectElement>("[data-key=spec-0]")!;
    s0.value = "";
    s0.dispatchEvent(new Event("change", { bubbles: true }));
    await vi.advanceTimersByTimeAsync(0);
    expect(note()).toBeNull();
  });
});

describe("spec rewrites in the function view", () => {
  it("a mesh change names each leaf whose spec it rewrote, under the mesh", async () => {
    const f = tfx.fxTraceSum(); // x (8, 64) with in_specs P('x', 'y') on a 2×4 mesh
    const model = new FakeModel(tfx.traceTraitsOf(f));
    const el = document.createElement("div");
    document.body.append(el);
    const view = new FunctionView(model, el);
    const axes = el.querySelector<HTMLSelectElement>('select[data-key="naxes"]')!;
    axes.value = "1";
    axes.dispatchEvent(new Event("change"));
    await new Promise((r) => setTimeout(r, 0));
    const note = el.querySelector<HTMLElement>(".sw-tr-mesh .sw-spec-note");
    expect(note?.textContent).toContain("x: P('x', 'y') → P('x', None): dim 1 drops 'y' ('y' is no longer a mesh axis)");
    view.dispose();
  });
});
