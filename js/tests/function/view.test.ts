import { afterEach, describe, expect, it } from "vitest";
import type { AnyModel } from "@anywidget/types";
import widget from "../../widget";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import * as tfx from "../function_fixtures";
import { NO_COLLECTIVES, axesLabel, groupsLabel } from "../../shared/collectives";
import { INPUT_STATS_MESSAGE, pyTuple } from "../../function/leaf";
import {
  leafSpecOptions,
  sanitizeTraceState,
  withTraceAxisName,
  withTraceMeshShape,
  withTraceNumAxes,
} from "../../function/state";
import { formatBytes, formatCount } from "../../shared/text";
import { flush, mount } from "../testing";
import * as fx from "../fixtures";
import type { TraceRequestMsg } from "../../wire";

const cleanups: (() => void)[] = [];

afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

function mountTrace(f: tfx.TraceFixture, extra: Record<string, unknown> = {}) {
  const model = new FakeModel({ ...tfx.traceTraitsOf(f), ...extra });
  const el = document.createElement("div");
  el.style.width = "1000px";
  document.body.append(el);
  const view = new FunctionView(model, el);
  cleanups.push(() => view.dispose());
  return { model, el, view };
}

const cards = (el: HTMLElement, side: "in" | "out") =>
  [...el.querySelectorAll<HTMLElement>(`.sw-tr-leaf[data-side="${side}"]`)];

function choose(el: HTMLElement, key: string, value: string): HTMLSelectElement {
  const s = el.querySelector<HTMLSelectElement>(`select[data-key="${key}"]`)!;
  expect(s, `select ${key}`).not.toBeNull();
  s.value = value;
  s.dispatchEvent(new Event("change"));
  return s;
}

describe("function view: rendering", () => {
  it("the widget entry renders a function view for _kind 'function' and an array view otherwise", () => {
    const f = tfx.fxTraceSum();
    const model = new FakeModel(tfx.traceTraitsOf(f));
    const el = document.createElement("div");
    document.body.append(el);
    const dispose = widget.render({ model: model as unknown as AnyModel, el });
    expect(el.querySelector(".sw-trace")).not.toBeNull();
    expect(el.querySelector(".sw-tr-fn")!.textContent).toBe("f");
    dispose();
    expect(model.listenerCount()).toBe(0);
    expect(el.querySelector(".sw-trace")).toBeNull();
  });

  it("a plan (mesh=AbstractMesh) shows its badge with the preset its estimates use", () => {
    const f = tfx.fxTraceSum();
    const note =
      "planned on AbstractMesh (32, 8) · no devices · planned: compiled by XLA's CPU compiler for 256 simulated devices.";
    f.options = { ...f.options, planned: note };
    const { el } = mountTrace(f, { hardware: "tpu-v5p" });
    const badge = el.querySelector<HTMLElement>(".sw-planned-badge")!;
    expect(badge.textContent).toBe("planned on AbstractMesh (32, 8) · no devices · estimates for tpu-v5p");
    expect(badge.title).toBe(note);
    expect(mountTrace(tfx.fxTraceSum()).el.querySelector(".sw-planned-badge")).toBeNull();
  });

  for (const [name, make] of Object.entries(tfx.TRACE_FIXTURES)) {
    it(`renders ${name}`, () => {
      const f = make();
      const { el } = mountTrace(f);
      expect(el.querySelector(".sw-tr-fn")!.textContent).toBe(f.options.fn_name);
      expect(el.querySelector(".sw-tr-mode")!.textContent).toBe(f.options.mode);
      expect(cards(el, "in").length).toBe(f.options.inputs.length);
      expect(cards(el, "out").length).toBe(f.trace.outputs.length);
      const compiled = f.trace.inputs.length > 0;
      // Every compiled leaf draws its grid with the array view, without its own controls.
      expect(el.querySelectorAll(".sw-tr-leaf .shardwidget.sw-embedded").length).toBe(
        compiled ? f.trace.inputs.length + f.trace.outputs.length : 0,
      );
      expect(el.querySelectorAll(".sw-embedded .sw-controls:not([hidden])").length).toBe(0);
      // One spec selector per input dimension.
      f.options.inputs.forEach((leaf, i) =>
        leaf.shape.forEach((_, d) =>
          expect(el.querySelector(`select[data-key="in-${i}-dim-${d}"]`)).not.toBeNull(),
        ),
      );
      const banner = el.querySelector<HTMLElement>(".sw-tr-error")!;
      expect(banner.hidden).toBe(!f.error);
      if (f.error) expect(banner.textContent).toContain(f.error);
    });
  }

  it("draws each leaf's grid short enough for several to share a page", () => {
    const { el } = mountTrace(tfx.fxTraceLayerJit()); // w is float32[16, 8]: twice as tall as wide
    const grids = [...el.querySelectorAll<HTMLElement>(".sw-tr-leaf .sw-grid")];
    expect(grids.length).toBe(4); // x, w, b, out
    for (const g of grids) expect(parseFloat(g.style.height)).toBeLessThanOrEqual(240);
    const w = grids[1];
    expect(parseFloat(w.style.height)).toBe(240);
  });

  it("shows the local shape of each leaf; in shard_map mode it is the headline", () => {
    const { el } = mountTrace(tfx.fxTraceLayerShardMap());
    const heads = [...el.querySelectorAll(".sw-tr-headline")].map((e) => e.textContent);
    expect(heads).toEqual([
      "device local shape: (4, 4)",
      "device local shape: (4, 8)",
      "device local shape: (8,)",
      "device local shape: (4, 8)",
    ]);
    expect(pyTuple([4])).toBe("(4,)");
    expect(pyTuple([])).toBe("()");
    const { el: el2 } = mountTrace(tfx.fxTraceSum());
    expect(el2.querySelector(".sw-tr-headline")).toBeNull();
    expect(cards(el2, "out")[0].textContent).toContain("device local shape: (16,)");
  });

  it("header: compile and run time, flops, collectives, mesh", () => {
    const { el } = mountTrace(tfx.fxTraceSum());
    const m = el.querySelector(".sw-tr-metrics")!.textContent!;
    expect(m).toContain("compiled in 53 ms");
    expect(m).toContain("ran in 0.4 ms");
    expect(m).toContain("64 FLOP per device");
    expect(m).toContain("1 collective · 64 B sent per device");
    expect(m).toContain("mesh x=2 × y=4 · 8 devices");
    expect(formatCount(2.4e6, "FLOP")).toBe("2.4 MFLOP");
  });

  it("header: a mesh of some of the devices says how many of them", () => {
    const f = tfx.fxTraceSum();
    const { el } = mountTrace(f, { mesh_shape: [2], axis_names: ["x"], axis_types: ["auto"] });
    const m = el.querySelector(".sw-tr-metrics")!.textContent!;
    expect(m).toContain("mesh x=2 · 2 of 8 devices");
  });

  it("busy shows the indicator", async () => {
    const { el, model } = mountTrace(tfx.fxTraceSum());
    const busy = el.querySelector<HTMLElement>(".sw-tr-header .sw-busy")!;
    expect(busy.hidden).toBe(true);
    model.set("busy", true);
    await flush();
    expect(busy.hidden).toBe(false);
  });
});

describe("both views word the controls alike", () => {
  it("a mesh axis's type: Auto / Explicit (JAX's AxisType), with the same tooltips", async () => {
    const options = (root: HTMLElement) =>
      [...root.querySelectorAll<HTMLOptionElement>('select[data-key="type-0"] option')].map(
        (o) => [o.value, o.textContent, o.title],
      );
    const fn = options(mountTrace(tfx.fxTraceLayerJit()).el);
    const arr = mount(fx.fx8()).el;
    await flush();
    expect(fn.map((o) => o[1])).toEqual(["Auto", "Explicit"]);
    expect(options(arr)).toEqual(fn);
  });
});

/** A collectives row's cells without the "why?" button's. */
function dataCells(r: HTMLTableRowElement): HTMLTableCellElement[] {
  return [...r.cells].filter((td) => !td.classList.contains("sw-tr-whycell"));
}

describe("function view: collectives, constraints, memory", () => {
  it("the collectives table has one row per collective, matching the data", () => {
    const f = tfx.fxTraceMixed();
    const { el } = mountTrace(f);
    const rows = [...el.querySelectorAll<HTMLTableRowElement>(".sw-tr-coll-table tbody tr")];
    expect(rows.length).toBe(f.trace.collectives.length);
    rows.forEach((r, i) => {
      const c = f.trace.collectives[i];
      expect(r.cells[1].textContent).toBe("why?"); // the why column (js/function/why.ts)
      const cells = dataCells(r).map((td) => td.textContent);
      expect(cells[0]).toBe(c.kind);
      expect(r.querySelector(`.sw-tr-kind-${c.kind}`)).not.toBeNull();
      expect(cells[1]).toBe(axesLabel(c.axes));
      expect(cells[2]).toBe(`${c.dtype}[${c.shape.join(",")}]`);
      expect(cells[3]).toBe(formatBytes(c.bytes));
      expect(cells[4]).toBe(groupsLabel(c));
      expect(r.tabIndex).toBe(0); // reachable by keyboard
      expect(r.title).toContain(c.groups_text);
    });
    expect(rows.map((r) => dataCells(r)[1].textContent)).toEqual(["x", "x", "x, y", "—"]);
    expect(dataCells(rows[1])[4].textContent).toBe("8 pairs");
    expect(el.querySelector(".sw-tr-empty-coll")).toBeNull();
  });

  it("the sum's all-reduce over x", () => {
    const { el } = mountTrace(tfx.fxTraceSum());
    const rows = [...el.querySelectorAll<HTMLTableRowElement>(".sw-tr-coll-table tbody tr")];
    expect(rows.map((r) => dataCells(r).slice(0, 4).map((c) => c.textContent))).toEqual([
      ["all-reduce", "x", "f32[16]", "64 B"],
    ]);
  });

  it("no collectives: says every device computes its part alone", () => {
    const { el } = mountTrace(tfx.fxTraceElementwise());
    expect(el.querySelector(".sw-tr-coll-table")).toBeNull();
    expect(el.querySelector(".sw-tr-empty-coll")!.textContent).toBe(NO_COLLECTIVES);
    expect(NO_COLLECTIVES).toBe("No collectives: every device computes its part alone");
  });

  it("constraints are listed when the function has some, and hidden otherwise", () => {
    const f = tfx.fxTraceLayerConstraint();
    const { el } = mountTrace(f);
    const rows = [...el.querySelectorAll<HTMLTableRowElement>(".sw-tr-cons-table tbody tr")];
    expect(rows.map((r) => [...r.cells].map((c) => c.textContent))).toEqual([
      ["with_sharding_constraint", "float32[8,8]", "P('x', None)", f.trace.constraints[0].source],
    ]);
    const { el: el2 } = mountTrace(tfx.fxTraceSum());
    expect(el2.querySelector<HTMLElement>(".sw-tr-cons-table")!.closest("section")!.hidden).toBe(true);
  });

  it("memory per device in human units, with their total (the peak is the memory panel's)", () => {
    const { el } = mountTrace(tfx.fxTraceMixed());
    const rows = [...el.querySelectorAll(".sw-tr-memrow")].map((r) => r.textContent);
    expect(rows).toEqual(["arguments256 B", "outputs288 B", "temporaries1 KiB", "total1.53 KiB"]);
    expect(el.querySelector(".sw-tr-flops")!.textContent).toBe("2.4 MFLOP per device");
  });
});

describe("function view: requests", () => {
  it("changing an input's spec sends a trace_request with the new in_specs", async () => {
    const { el, model } = mountTrace(tfx.fxTraceSum());
    choose(el, "in-0-dim-0", "");
    await flush();
    expect(model.sent.length).toBe(1);
    const msg = model.sent[0] as TraceRequestMsg;
    expect(msg.type).toBe("trace_request");
    expect(typeof msg.seq).toBe("number");
    expect(msg.state).toEqual({
      mesh_shape: [2, 4],
      axis_names: ["x", "y"],
      axis_types: ["auto", "auto"],
      in_specs: [[null, "y"]],
      out_specs: [null],
    });
    // While the answer is pending the controls show the state asked for.
    await flush();
    expect(el.querySelector<HTMLSelectElement>('select[data-key="in-0-dim-0"]')!.value).toBe("");
    expect(el.querySelector(".sw-tr-mesh")!.classList.contains("sw-pending")).toBe(true);
    expect(el.querySelector(".sw-tr-mesh .sw-ctl-status")!.textContent).toBe("applying…");
  });

  it("Reset sends the original layout with its donation (as view.reset() restores it)", async () => {
    // wire/function.py: options.original carries the donation the view was made with; a
    // request without donate (the controls') keeps the donation shown, so Reset must say it.
    const f = tfx.fxTraceSum();
    const original = { ...f.state, donate: [] };
    const { el, model } = mountTrace({ ...f, options: { ...f.options, original } }, { in_specs: [[null, "y"]] });
    el.querySelector<HTMLButtonElement>('button[data-key="reset"]')!.click();
    await flush();
    expect(model.sent.length).toBe(1);
    const msg = model.sent[0] as TraceRequestMsg;
    expect(msg.state).toEqual(original);
    expect(msg.state.donate).toEqual([]);
  });

  it("a newer request supersedes the pending one; seq strictly increases", async () => {
    const { el, model, view } = mountTrace(tfx.fxTraceLayerJit());
    choose(el, "in-0-dim-1", ""); // x: P('x', None)
    await flush();
    expect(model.sent.length).toBe(1);
    const first = model.sent[0] as TraceRequestMsg;
    // Two more changes while the first is in flight: only the newest goes out, after the answer.
    choose(el, "in-1-dim-0", "");
    await flush();
    choose(el, "in-2-dim-0", "x");
    await flush();
    expect(model.sent.length).toBe(1);
    model.emitCustom({ type: "result", seq: first.seq, ok: true, error: "" });
    await flush();
    expect(model.sent.length).toBe(2);
    const second = model.sent[1] as TraceRequestMsg;
    expect(second.seq).toBeGreaterThan(first.seq);
    expect(second.state.in_specs).toEqual([["x", null], [null, null], ["x"]]);
    expect(view.requestQueue.inFlightSeq).toBe(second.seq);
    // A stale answer is ignored.
    model.emitCustom({ type: "result", seq: first.seq, ok: false, error: "old" });
    await flush();
    expect(el.querySelector<HTMLElement>(".sw-tr-error")!.hidden).toBe(true);
  });

  it("a failed request shows the error and keeps the grids; the failed choice stays, marked", async () => {
    const { el, model } = mountTrace(tfx.fxTraceLayerJit());
    const gridsBefore = el.querySelectorAll(".sw-tr-leaf .sw-array").length;
    expect(gridsBefore).toBe(4);
    choose(el, "type-1", "explicit");
    await flush();
    const msg = model.sent[0] as TraceRequestMsg;
    expect(msg.state.axis_types).toEqual(["auto", "explicit"]);
    model.emitCustom({ type: "result", seq: msg.seq, ok: false, error: "ShardingTypeError: out_sharding" });
    await flush();
    const banner = el.querySelector<HTMLElement>(".sw-tr-error")!;
    expect(banner.hidden).toBe(false);
    expect(banner.textContent).toContain("ShardingTypeError: out_sharding");
    expect(banner.textContent).toContain("last layout that compiled");
    expect(el.querySelectorAll(".sw-tr-leaf .sw-array").length).toBe(gridsBefore);
    // The choice that failed stays visible, marked, with the error (issue 13 item 9).
    const failed = el.querySelector<HTMLSelectElement>('select[data-key="type-1"]')!;
    expect(failed.value).toBe("explicit");
    expect(failed.classList.contains("sw-failed")).toBe(true);
    expect(failed.getAttribute("aria-invalid")).toBe("true");
    expect(failed.title).toContain("ShardingTypeError: out_sharding");
    expect(failed.nextElementSibling!.textContent).toContain("did not compile");
    expect(el.querySelectorAll(".sw-failed").length).toBe(1);
    expect(el.querySelector(".sw-tr-mesh")!.classList.contains("sw-pending")).toBe(false);
    // The next choice clears the mark; its success leaves nothing marked.
    choose(el, "type-1", "auto");
    await flush();
    expect(el.querySelectorAll(".sw-failed, .sw-failed-note").length).toBe(0);
    const again = model.sent.at(-1) as TraceRequestMsg;
    expect(again.state.axis_types).toEqual(["auto", "auto"]);
    model.emitCustom({ type: "result", seq: again.seq, ok: true, error: "" });
    await flush();
    expect(el.querySelectorAll(".sw-failed").length).toBe(0);
    expect(el.querySelector<HTMLSelectElement>('select[data-key="type-1"]')!.value).toBe("auto");
  });

  it("an error trace with no leaves keeps the last good grids", async () => {
    const f = tfx.fxTraceSum();
    const { el, model } = mountTrace(f);
    const init = tfx.fxTraceErrorInitial().trace;
    model.set("_trace", { ...init, key: 9, message: "compile failed: bad layout" });
    await flush();
    expect(el.querySelector(".sw-tr-error")!.textContent).toContain("compile failed: bad layout");
    expect(el.querySelectorAll(".sw-tr-leaf .sw-array").length).toBe(2);
    expect(el.querySelector(".sw-tr-coll-table")).not.toBeNull();
    // The next good trace clears the banner.
    const g = tfx.buildTrace(f.def, f.state, 10);
    model.set("_trace", g.trace);
    await flush();
    expect(el.querySelector<HTMLElement>(".sw-tr-error")!.hidden).toBe(true);
  });

  it("jit outputs: auto (XLA chooses) by default; 'set' pins XLA's choice", async () => {
    const { el, model } = mountTrace(tfx.fxTraceSum());
    const modeSel = el.querySelector<HTMLSelectElement>('select[data-key="out-0-mode"]')!;
    expect(modeSel.value).toBe("auto");
    expect(modeSel.options[0].textContent).toBe("auto (XLA chooses)");
    expect(el.querySelector(".sw-tr-chose")!.textContent).toBe("XLA chose P('y')");
    choose(el, "out-0-mode", "set");
    await flush();
    expect((model.sent[0] as TraceRequestMsg).state.out_specs).toEqual([["y"]]);
    await flush();
    expect(el.querySelector('select[data-key="out-0-dim-0"]')).not.toBeNull();
  });

  it("shard_map outputs always have a spec; axes need not divide the local size", () => {
    const { el } = mountTrace(tfx.fxTraceLayerShardMap());
    expect(el.querySelector('select[data-key="out-0-mode"]')).toBeNull();
    const s0 = el.querySelector<HTMLSelectElement>('select[data-key="out-0-dim-0"]')!;
    expect(s0.value).toBe("x");
    const opt = (s: HTMLSelectElement, v: string) => [...s.options].find((o) => o.value === v)!;
    // x+y (8 devices) on a local size of 4: allowed (the global size becomes 32).
    expect(opt(s0, "x+y").disabled).toBe(false);
    const s1 = el.querySelector<HTMLSelectElement>('select[data-key="out-0-dim-1"]')!;
    expect(opt(s1, "x").disabled).toBe(true);
    expect(opt(s1, "x").textContent).toContain("x used by dim 0");
  });

  it("refused input choices say why in the option text", () => {
    const { el } = mountTrace(tfx.fxTraceLayerJit());
    const s = el.querySelector<HTMLSelectElement>('select[data-key="in-0-dim-1"]')!; // x dim 1 (16)
    const o = [...s.options].find((x) => x.value === "x")!;
    expect(o.disabled).toBe(true);
    expect(o.textContent).toBe("x — x used by dim 0");
  });

  it("mesh controls send the whole state with specs kept consistent", async () => {
    const { el, model } = mountTrace(tfx.fxTraceLayerJit());
    choose(el, "naxes", "1");
    await flush();
    const st = (model.sent[0] as TraceRequestMsg).state;
    expect(st.mesh_shape).toEqual([8]);
    expect(st.axis_names).toEqual(["x"]);
    // 'y' is gone; 'x' (8) still divides x's 8 rows; w keeps no axis.
    expect(st.in_specs).toEqual([["x", null], [null, null], [null]]);
  });
});

describe("function view: sub-views", () => {
  it("sub-views receive their Stats; inputs without any (an older kernel) say why", async () => {
    const f = tfx.fxTraceSum();
    const { el, model, view } = mountTrace(f);
    const out = view.cards.outputs[0].leafModel!;
    expect(out.get("_stats")).toBe(f.stats.outputs[0]);
    expect(out.get("_layout")).toBe(f.trace.outputs[0].layout);
    expect(view.cards.inputs[0].leafModel!.get("_stats")).toBe(f.stats.inputs![0]);
    const g = tfx.fxTraceSum();
    delete g.stats.inputs;
    const { view: old } = mountTrace(g);
    const inp = old.cards.inputs[0].leafModel!;
    expect(inp.get("_stats")!.status).toBe("unavailable");
    expect(inp.get("_stats")!.message).toBe(INPUT_STATS_MESSAGE);
    expect(inp.get("_stats")!.key).toBe(g.trace.inputs[0].layout.key);
    expect(inp.get("_options").reshard_disabled).not.toBe("");
    // The output grid draws the data (thumbnails), no "pending" hint.
    expect(cards(el, "out")[0].querySelector<HTMLElement>(".sw-hint")!.hidden).toBe(true);
    // New statistics (same trace) go to the same sub-view.
    const again = tfx.buildTrace(f.def, f.state, f.trace.key).stats;
    model.set("_trace_stats", again);
    await flush();
    expect(view.cards.outputs[0].leafModel).toBe(out);
    expect(out.get("_stats")).toBe(again.outputs[0]);
    // Statistics of another key are not shown: pending.
    model.set("_trace_stats", { key: 99, outputs: again.outputs });
    await flush();
    expect(out.get("_stats")).toBeNull();
    expect(cards(el, "out")[0].querySelector(".sw-hint")!.textContent).toBe("statistics pending…");
  });

  it("a new trace with the same leaves updates the sub-views in place", async () => {
    const f = tfx.fxTraceSum();
    const { model, view } = mountTrace(f);
    const before = [...view.cards.inputs, ...view.cards.outputs].map((c) => c.subView);
    const next = tfx.buildTrace(f.def, { ...f.state, in_specs: [[null, "y"]] }, 2);
    model.set("_trace", next.trace);
    model.set("_trace_stats", next.stats);
    await flush();
    const after = [...view.cards.inputs, ...view.cards.outputs].map((c) => c.subView);
    expect(after).toEqual(before);
    expect(view.cards.inputs[0].leafModel!.get("_layout")).toBe(next.trace.inputs[0].layout);
    expect(view.cards.outputs[0].leafModel!.get("_stats")).toBe(next.stats.outputs[0]);
  });

  it("view_dims changes stay in the sub-view's own model", () => {
    const { model, view } = mountTrace(tfx.fxTraceLayerJit());
    const lm = view.cards.inputs[0].leafModel!;
    lm.set("view_dims", [1, 0]);
    expect(model.get("view_dims")).toBeUndefined();
    expect(model.sent.length).toBe(0);
  });

  it("a change in the number of leaves disposes the old sub-views (no leaked listeners)", async () => {
    const a = tfx.fxTraceLayerJit(); // 3 inputs, 1 output
    const { el, model, view } = mountTrace(a);
    const base = model.listenerCount();
    const old = [...view.cards.inputs, ...view.cards.outputs].map((c) => c.leafModel!);
    expect(old.every((m) => m.listenerCount() > 0)).toBe(true);
    const b = tfx.fxTraceMixed(); // 1 input, 2 outputs
    model.set("_trace_options", b.options);
    model.set("_trace", b.trace);
    model.set("_trace_stats", b.stats);
    await flush();
    expect(old.map((m) => m.listenerCount())).toEqual([0, 0, 0, 0]);
    expect(cards(el, "in").length).toBe(1);
    expect(cards(el, "out").length).toBe(2);
    expect(el.querySelectorAll(".sw-tr-leaf .shardwidget.sw-embedded").length).toBe(3);
    expect(model.listenerCount()).toBe(base);
    view.dispose();
    expect(model.listenerCount()).toBe(0);
    expect([...view.cards.inputs, ...view.cards.outputs].length).toBe(0);
  });

  it("focus stays on a spec selector across re-renders", async () => {
    const { el, model } = mountTrace(tfx.fxTraceSum());
    el.querySelector<HTMLSelectElement>('select[data-key="in-0-dim-1"]')!.focus();
    model.set("busy", true);
    await flush();
    expect((document.activeElement as HTMLElement).dataset.key).toBe("in-0-dim-1");
  });
});

describe("trace state transitions", () => {
  const f = tfx.fxTraceLayerJit();
  it("a mesh shape change drops axes that no longer divide", () => {
    const s = withTraceMeshShape(f.state, [1, 8], f.options);
    // x dim 1 (16) keeps y=8; w dim 0 (16) keeps y=8; x dim 0 keeps x=1.
    expect(s.in_specs).toEqual([["x", "y"], ["y", null], [null]]);
    const s2 = withTraceNumAxes(f.state, 3, f.options);
    expect(s2.axis_names).toEqual(["x", "y", "z"]);
    expect(s2.mesh_shape).toEqual([2, 2, 2]);
  });

  it("renaming an axis renames it in every spec", () => {
    const g = tfx.fxTraceLayerConstraint();
    const s = withTraceAxisName(g.state, 1, "model");
    expect(s.in_specs).toEqual([["x", "model"], ["model", null], [null]]);
    expect(s.out_specs).toEqual([["x", null]]);
    expect(() => withTraceAxisName(g.state, 1, "x")).toThrow(/already used/);
  });

  it("sanitize keeps null (auto) outputs in jit and fills shard_map outputs", () => {
    expect(sanitizeTraceState(f.state, f.options).out_specs).toEqual([null]);
    const g = tfx.fxTraceLayerShardMap();
    expect(sanitizeTraceState({ ...g.state, out_specs: [null] }, g.options).out_specs).toEqual([
      [null, null],
    ]);
  });

  it("leafSpecOptions: the divisibility rule, off for free dimensions", () => {
    const st = { ...f.state, mesh_shape: [2, 4] };
    const o = leafSpecOptions(0, 6, st, [null, null], false).find((x) => x.value === "y")!;
    expect(o.disabled).toBe(true);
    expect(o.reason).toBe("6 not divisible by 4");
    expect(leafSpecOptions(0, 6, st, [null, null], true).find((x) => x.value === "y")!.disabled).toBe(
      false,
    );
  });
});

describe("function view: not run, run errors", () => {
  it("a function that is compiled only says so, on the header and on each output", () => {
    const base = tfx.fxTraceSum();
    const why = "not run: some inputs are jax.ShapeDtypeStruct (compiled only)";
    const f = tfx.makeFixture({ ...base.def, run_disabled: why }, base.state);
    const { el } = mountTrace(f);
    expect(el.querySelector(".sw-tr-header .sw-note")!.textContent).toBe(why);
    expect(el.querySelector(".sw-tr-metrics")!.textContent).toContain("not run");
    expect(cards(el, "out")[0].querySelector(".sw-hint")!.textContent).toBe(why);
  });

  it("a run that failed after compiling shows the message without calling the layout stale", async () => {
    const f = tfx.fxTraceSum();
    const { el, model } = mountTrace(f);
    const t = tfx.buildTrace(f.def, f.state, 5).trace;
    model.set("_trace", { ...t, status: "error", message: "compiled, but the run failed: OOM" });
    await flush();
    const banner = el.querySelector<HTMLElement>(".sw-tr-error")!;
    expect(banner.textContent).toBe("compiled, but the run failed: OOM");
    expect(el.querySelectorAll(".sw-tr-leaf .sw-array").length).toBe(2);
  });
});

describe("function view: saved pages", () => {
  it("options.static disables the controls and says why; nothing is sent", async () => {
    const f = tfx.fxTraceSum();
    f.options.static = "saved page: no kernel to re-compile the function";
    const { el, model } = mountTrace(f);
    expect(el.querySelector(".sw-tr-mesh .sw-disabled-note")!.textContent).toBe(f.options.static);
    expect(el.querySelector<HTMLFieldSetElement>(".sw-tr-mesh fieldset")!.disabled).toBe(true);
    const sel = el.querySelector<HTMLSelectElement>('select[data-key="in-0-dim-0"]')!;
    expect(sel.disabled).toBe(true);
    choose(el, "in-0-dim-0", "");
    await flush();
    expect(model.sent.length).toBe(0);
  });
});

describe("function view: input data", () => {
  it("each input card shows its per-shard data under the chosen layout", () => {
    const { el } = mountTrace(tfx.fxTraceSum()); // x = arange(512).reshape(8, 64)
    const card = cards(el, "in")[0];
    const blocks = [...card.querySelectorAll<HTMLElement>(".sw-grid .sw-block")];
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.every((b) => b.classList.contains("sw-has-thumb"))).toBe(true);
    blocks[0].click();
    const detail = card.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.hidden).toBe(false);
    // block [0:4) × [0:16) of arange(512).reshape(8, 64): 0 … 3·64 + 15, mean 103.5
    expect(detail.textContent).toContain("min0max207mean103.5");
  });
});
