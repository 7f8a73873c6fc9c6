import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import * as tfx from "../function_fixtures";
import type { FitWire, PeakWire } from "../../wire/function";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

/** A peak as wire/peak.py sends it: x (the input) and two temporaries at point 2 of 4. */
function peakOf(over = false, points = 4): PeakWire {
  const timeline = Array.from({ length: points }, (_, i) => (i === 2 ? 6000 : 1000 + i));
  return {
    unknown: "",
    bytes: 6000,
    title: "peak 5.86 KiB at jit(f)/dot_general at cell [3], line 2",
    timeline,
    at: 2,
    instructions: points,
    hbm: over ? 4096 : 16384,
    hbm_name: "tpu-v5e",
    groups: [
      { name: "parameters", bytes: 64, more: 0, rows: [{ label: "x", bytes: 64, shape: "f32[2,8]", path: "x", op_name: "x", aliased: false }] },
      {
        name: "saved activations",
        bytes: 5936,
        more: 3,
        rows: [{ label: "tanh (cell [3], line 2)", bytes: 5936, shape: "f32[8,16]", path: "", op_name: "jit(f)/jvp()/tanh", aliased: false }],
      },
    ],
  };
}

function mountWith(peak: PeakWire | null, extra: { over?: PeakWire; fit?: FitWire } = {}) {
  const f = tfx.fxTraceElementwise();
  const model = new FakeModel({ ...tfx.traceTraitsOf(f), _trace: { ...f.trace, peak, ...extra } });
  const el = document.createElement("div");
  document.body.append(el);
  const view = new FunctionView(model, el);
  cleanups.push(() => view.dispose());
  return el;
}

describe("memory panel", () => {
  it("names the peak, draws the timeline with the HBM line and marks the peak", () => {
    const el = mountWith(peakOf());
    const panel = el.querySelector<HTMLElement>(".sw-peak")!;
    expect(panel.querySelector(".sw-peak-title")!.textContent).toBe(peakOf().title);
    const d = panel.querySelector(".sw-peak-area")!.getAttribute("d")!;
    expect(d.match(/L/g)!.length).toBe(4 + 1); // one point per timeline entry, and the close
    const hbm = panel.querySelector(".sw-peak-hbm")!;
    expect(hbm.textContent).toContain("HBM of tpu-v5e: 16 KiB");
    const mark = panel.querySelector(".sw-peak-mark")!;
    expect(Number(mark.getAttribute("x1"))).toBeCloseTo((2 * 600) / 3, 0);
    expect(panel.classList.contains("sw-peak-over")).toBe(false);
  });

  it("groups what is live at the peak, and a leaf's row lights its card", () => {
    const el = mountWith(peakOf());
    const rows = [...el.querySelectorAll(".sw-peak-table tr")].map((r) => r.textContent);
    expect(rows[0]).toContain("parameters");
    expect(rows[2]).toContain("saved activations");
    expect(rows.at(-1)).toContain("3 more");
    const card = el.querySelector<HTMLElement>('[data-side="in"][data-index="0"]')!;
    expect(card.classList.contains("sw-why-lit")).toBe(false);
    el.querySelector<HTMLElement>(".sw-peak-leaf")!.click();
    expect(card.classList.contains("sw-why-lit")).toBe(true);
  });

  it("keeps the timeline readable where the HBM is far above the peak", () => {
    const p = { ...peakOf(), hbm: 16 * 2 ** 30 };
    const panel = mountWith(p).querySelector<HTMLElement>(".sw-peak")!;
    expect(panel.querySelector(".sw-peak-hbm")).toBeNull();
    expect(panel.querySelector(".sw-peak-label")!.textContent).toContain("16 GiB, above this scale");
    const ys = panel.querySelector(".sw-peak-area")!.getAttribute("d")!.match(/L[\d.]+ ([\d.]+)/g)!;
    expect(Math.min(...ys.map((t) => Number(t.split(" ")[1])))).toBeLessThan(10); // the peak near the top
  });

  it("says does not fit when the peak is over the HBM", () => {
    const el = mountWith(peakOf(true));
    const panel = el.querySelector<HTMLElement>(".sw-peak")!;
    expect(panel.classList.contains("sw-peak-over")).toBe(true);
    expect(panel.querySelector(".sw-peak-title")!.textContent).toMatch(/^does not fit: peak/);
  });

  it("says why where the peak is unknown, and draws nothing from older kernels", () => {
    const p = { ...peakOf(), unknown: "the compiler wrote no live-range report" };
    expect(mountWith(p).querySelector(".sw-peak")!.textContent).toContain("unknown (the compiler wrote no");
    expect(mountWith(null).querySelector(".sw-peak")!.textContent).toBe("");
  });

  it("shows what is over for a layout the compiler refused, above the layout shown", () => {
    const refused = { ...peakOf(true), title: "peak 5.86 KiB at jit(f)/dot_general (1.86 KiB over the 4 KiB of HBM)" };
    const el = mountWith(peakOf(), { over: refused });
    const parts = [...el.querySelectorAll<HTMLElement>(".sw-peak-part")];
    expect(parts.length).toBe(2);
    expect(parts[0].classList.contains("sw-peak-refused")).toBe(true);
    expect(parts[0].querySelector(".sw-peak-title")!.textContent).toBe(`the layout asked for does not fit: ${refused.title}`);
    expect(parts[0].querySelector(".sw-peak-hbm")!.textContent).toContain("HBM of tpu-v5e: 4 KiB");
    expect(parts[0].querySelector(".sw-peak-table")!.textContent).toContain("x");
    expect(parts[1].querySelector(".sw-peak-title")!.textContent).toBe(peakOf().title);
    const onlyOver = mountWith(null, { over: refused }).querySelectorAll(".sw-peak-part"); // nothing fit yet
    expect(onlyOver.length).toBe(1);
  });

  it("shows largest_fit's progress, then its answer", () => {
    const fit: FitWire = { input: "x", dim: 0, compiles: 3, of: 8, done: false, error: "", text: "largest x dim 0 that fits in 4 KiB: compile 4 of at most 8: 512 fits …" };
    const line = mountWith(peakOf(), { fit }).querySelector<HTMLElement>(".sw-peak-fit")!;
    expect(line.getAttribute("role")).toBe("status");
    const bar = line.querySelector("progress")!;
    expect([bar.value, bar.max]).toEqual([3, 8]);
    expect(line.textContent).toContain(fit.text);
    const done = { ...fit, compiles: 8, done: true, text: "largest x dim 0 that fits in 4 KiB: 512 (peak 3.9 KiB); 520 does not (4.1 KiB); 8 compiles" };
    const after = mountWith(peakOf(), { fit: done }).querySelector<HTMLElement>(".sw-peak-fit")!;
    expect(after.querySelector("progress")).toBeNull();
    expect(after.textContent).toBe(done.text);
  });

  it("draws a 20,000-instruction timeline as one path", () => {
    const el = mountWith(peakOf(false, 20000));
    const d = el.querySelector(".sw-peak-area")!.getAttribute("d")!;
    expect(d.match(/L/g)!.length).toBe(20001);
  });
});
