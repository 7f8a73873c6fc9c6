import { describe, expect, it } from "vitest";
import { blockBackground, deviceColor, luminance, PALETTE16, ramp, rampLUT, textColorOn } from "./colors";

describe("deviceColor", () => {
  it("is stable per id", () => {
    for (const n of [1, 4, 8, 16, 256, 4096]) {
      for (let id = 0; id < Math.min(n, 64); id++) expect(deviceColor(id, n)).toBe(deviceColor(id, n));
    }
  });
  it("gives distinct colours for up to 16 devices", () => {
    for (const n of [2, 8, 9, 16]) {
      const cs = Array.from({ length: n }, (_, i) => deviceColor(i, n));
      expect(new Set(cs).size).toBe(n);
    }
    expect(new Set(PALETTE16).size).toBe(16);
  });
  it("does not depend on the layout: same id, same n -> same colour in any order", () => {
    const a = [5, 3, 1].map((i) => deviceColor(i, 8));
    const b = [1, 3, 5].map((i) => deviceColor(i, 8)).reverse();
    expect(a).toEqual(b);
  });
  it("is deterministic and well spread above 16 devices", () => {
    const n = 256;
    const cs = Array.from({ length: n }, (_, i) => deviceColor(i, n));
    expect(cs.every((c) => /^#[0-9a-f]{6}$/.test(c))).toBe(true);
    expect(new Set(cs).size).toBeGreaterThan(240);
    // neighbours differ
    for (let i = 0; i + 1 < n; i++) expect(cs[i]).not.toBe(cs[i + 1]);
    expect(deviceColor(1000, 4096)).toBe(deviceColor(1000, 4096));
  });
  it("picks readable text colours", () => {
    expect(textColorOn("#000000")).toBe("#ffffff");
    expect(textColorOn("#ffffff")).toBe("#111111");
    expect(luminance("#ffffff")).toBeCloseTo(1);
  });
});

describe("ramp", () => {
  it("goes from dark purple to yellow and clamps", () => {
    expect(ramp(0)).toEqual([68, 1, 84]);
    expect(ramp(1)).toEqual([253, 231, 37]);
    expect(ramp(-1)).toEqual(ramp(0));
    expect(ramp(NaN)).toEqual(ramp(0));
    expect(rampLUT().length).toBe(1024);
  });
});

describe("blockBackground", () => {
  it("is solid for one holder and striped for several", () => {
    expect(blockBackground(["#ff0000"])).toBe("#ff0000");
    const s = blockBackground(["#ff0000", "#00ff00", "#0000ff"]);
    expect(s).toContain("repeating-linear-gradient");
    expect(s).toContain("#00ff00");
  });
});
