import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { colorDistance, deviceColor, PALETTE16, stripeColors } from "../../shared/colors";
import { compressIds, deviceLabelCandidates, fitLabel, rangeLabelCandidates } from "../../array/labels";
import { allocate, locate, selectGrid, sliderDims } from "../../array/blocks";
import { axisNameProblem, specOptions, specString } from "../../shared/spec";
import { RequestQueue } from "../../shared/requests";
import { layoutRequests } from "../../array/state";
import { withNumAxes, withSpecEntry } from "../../array/state";
import { textWidth } from "../../shared/text";
import { fx3d, fx8, fxPartial } from "../fixtures";
import type { LayoutState, RequestMsg } from "../../wire";

describe("colours", () => {
  it("are stable per device id, whatever the view", () => {
    for (const n of [8, 16, 256, 4096]) {
      for (const id of [0, 1, 7, 15]) {
        if (id < n) expect(deviceColor(id, n)).toBe(deviceColor(id, n));
      }
    }
    // the same device in two re-shards of one array (same device count) keeps its colour
    expect(deviceColor(5, 8)).toBe(PALETTE16[5]);
  });

  it("are distinct for up to 16 devices", () => {
    const cs = Array.from({ length: 16 }, (_, i) => deviceColor(i, 16));
    expect(new Set(cs).size).toBe(16);
  });

  it("stay apart for neighbouring ids beyond 16 devices", () => {
    // Perceptual distance (OKLab): neighbours share a hue band and differ by a lightness step.
    for (let id = 0; id < 4095; id += 97) {
      expect(colorDistance(deviceColor(id, 4096), deviceColor(id + 1, 4096))).toBeGreaterThan(0.05);
    }
    expect(deviceColor(1234, 4096)).toMatch(/^#[0-9a-f]{6}$/i);
  });

  it("stripes list every holder up to the cap", () => {
    expect(stripeColors([0, 4], 8)).toEqual([deviceColor(0, 8), deviceColor(4, 8)]);
    expect(stripeColors(Array.from({ length: 20 }, (_, i) => i), 32).length).toBeLessThanOrEqual(8);
  });
});

describe("labels", () => {
  it("compress id runs", () => {
    expect(compressIds([3, 0, 1, 2, 8])).toBe("0–3,8");
    expect(compressIds([0, 4])).toBe("0,4");
  });

  it("never cut a label: a candidate fits whole or a shorter one is taken", () => {
    const ids = Array.from({ length: 16 }, (_, i) => i * 16);
    const cands = deviceLabelCandidates(ids);
    for (const w of [4, 20, 40, 80, 200, 2000]) {
      const got = fitLabel(cands, w);
      if (got !== "") {
        expect(cands).toContain(got);
        expect(textWidth(got)).toBeLessThanOrEqual(w);
      }
    }
    expect(fitLabel(cands, 2000)).toBe(cands[0]);
    expect(fitLabel(cands, 30)).toBe("×16");
    expect(fitLabel(["12345"], 5)).toBe("");
    // contiguous holders read as a run, not a list
    expect(deviceLabelCandidates(Array.from({ length: 16 }, (_, i) => i))[0]).toBe("0–15 ×16");
    expect(deviceLabelCandidates([0, 4])[0]).toBe("0,4");
  });

  it("offer short range labels", () => {
    expect(rangeLabelCandidates([2048, 4096])).toEqual(["2048:4096", "2048"]);
  });
});

describe("grid selection", () => {
  it("draws the blocks of the chosen slice of an N-d array", () => {
    const f = fx3d(); // (6,8,16) on 2x4, P('x', None, 'y'), drawing dims (1, 2)
    expect(sliderDims(3, [1, 2])).toEqual([0]);
    const a = selectGrid(f.layout, [1, 2], [0, 0, 0]);
    const b = selectGrid(f.layout, [1, 2], [5, 0, 0]);
    expect(a.visible.length).toBe(4);
    expect(b.visible.length).toBe(4);
    const holders = (s: typeof a) => s.visible.map((k) => f.layout.blocks[k].d[0]).sort();
    expect(holders(a)).toEqual([0, 1, 2, 3]);
    expect(holders(b)).toEqual([4, 5, 6, 7]);
    expect(a.rowRanges).toEqual([[0, 8]]);
    expect(a.colRanges.length).toBe(4);
  });

  it("covers every cell of a 2-D layout exactly once", () => {
    const f = fx8();
    const s = selectGrid(f.layout, [0, 1], [0, 0]);
    expect(s.rowRanges.length * s.colRanges.length).toBe(8);
    expect([...s.cells].every((k) => k >= 0)).toBe(true);
    expect(new Set(s.cells).size).toBe(8);
  });

  it("allocates pixels proportionally with a minimum, and locates points", () => {
    const o = allocate([1, 1, 2], 400, 10);
    expect(o).toEqual([0, 100, 200, 400]);
    const tiny = allocate([1000, 1], 100, 20);
    expect(tiny[2] - tiny[1]).toBeGreaterThanOrEqual(20);
    expect(locate(o, 150)).toBe(1);
  });
});

describe("spec options", () => {
  it("disable what does not divide or is used elsewhere, with the reason", () => {
    const opts = specOptions(1, 6, ["x", "y"], [2, 4], ["x", null]);
    const by = Object.fromEntries(opts.map((o) => [o.value, o]));
    expect(by[""].disabled).toBe(false);
    expect(by["y"].disabled).toBe(true);
    expect(by["y"].reason).toMatch(/6 not divisible by 4/);
    expect(by["x"].disabled).toBe(true);
    expect(by["x"].reason).toMatch(/used by dim 0/);
    expect(specString(["x", null, ["x", "y"]])).toBe("P('x', None, ('x', 'y'))");
  });

  it("follow a change of the number of axes", () => {
    const f = fxPartial();
    const s3 = withNumAxes(f.state, 3, f.options);
    expect(s3.mesh_shape.length).toBe(3);
    expect(s3.mesh_shape.reduce((a, b) => a * b, 1)).toBe(8);
    expect(s3.axis_names).toEqual(["x", "y", "z"]);
    const s1 = withNumAxes(f.state, 1, f.options);
    expect(s1.spec.every((e) => e === null || e === "x")).toBe(true);
    expect(axisNameProblem(["x", "y"], 1, "x")).not.toBe("");
    expect(axisNameProblem(["x", "y"], 1, "1a")).not.toBe("");
    expect(axisNameProblem(["x", "y"], 1, "data")).toBe("");
  });
});

describe("request coalescing", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("keeps one request in flight and sends only the newest pending state", () => {
    const sent: RequestMsg[] = [];
    const q = new RequestQueue((m) => sent.push(m), { ...layoutRequests, debounceMs: 30, seqBase: 1 });
    const base = fx8().state;
    const states: LayoutState[] = [];
    for (let i = 0; i < 20; i++) {
      const s = withSpecEntry(base, 0, i % 2 ? "x" : null);
      states.push(s);
      q.submit(s);
      vi.advanceTimersByTime(5); // a slider drag: changes faster than the debounce
    }
    vi.advanceTimersByTime(40);
    expect(sent.length).toBe(1);
    expect(sent[0].state).toEqual(states[19]);
    // more changes while in flight: held, newest only, sent after the result
    q.submit(withSpecEntry(base, 1, null));
    q.submit(withSpecEntry(base, 1, "y"));
    vi.advanceTimersByTime(100);
    expect(sent.length).toBe(1);
    expect(q.handleResult({ type: "result", seq: sent[0].seq + 100, ok: true, error: "" })).toBe(false);
    expect(q.handleResult({ type: "result", seq: sent[0].seq, ok: true, error: "" })).toBe(true);
    expect(sent.length).toBe(2);
    expect(sent[1].seq).toBeGreaterThan(sent[0].seq);
    expect(sent[1].state.spec[1]).toBe("y");
    q.handleResult({ type: "result", seq: sent[1].seq, ok: true, error: "" });
    vi.advanceTimersByTime(100);
    expect(sent.length).toBe(2);
    expect(q.optimistic).toBeNull();
  });
});
