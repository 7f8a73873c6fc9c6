import { describe, expect, it } from "vitest";
import { compressIds, deviceLabelCandidates, fitLabel, rangeLabelCandidates } from "./labels";
import { formatBytes, formatComplex, formatNumber, textWidth } from "./text";

describe("fitLabel", () => {
  it("returns the first candidate that fits, whole", () => {
    const c = ["0,1,2,3", "0–3 ×4", "×4"];
    expect(fitLabel(c, 1000)).toBe("0,1,2,3");
    expect(fitLabel(c, textWidth("0–3 ×4"))).toBe("0–3 ×4");
    expect(fitLabel(c, textWidth("×4"))).toBe("×4");
    expect(fitLabel(c, 5)).toBe("");
  });
  it("never returns a cut string", () => {
    const cands = deviceLabelCandidates(Array.from({ length: 256 }, (_, i) => i));
    for (let w = 0; w < 200; w += 3) {
      const l = fitLabel(cands, w);
      expect(l === "" || cands.includes(l)).toBe(true);
      if (l) expect(textWidth(l)).toBeLessThanOrEqual(w);
    }
  });
  it("respects the height", () => {
    expect(fitLabel(["3"], 100, 12, 8)).toBe("");
    expect(fitLabel(["3"], 100, 12, 20)).toBe("3");
  });
});

describe("device labels", () => {
  it("has the compact forms", () => {
    expect(deviceLabelCandidates([3])).toEqual(["3"]);
    expect(deviceLabelCandidates([0, 4])).toEqual(["0,4", "×2"]);
    expect(deviceLabelCandidates([0, 1, 2, 3])).toEqual(["0–3 ×4", "0,1,2,3", "×4"]);
    const many = deviceLabelCandidates(Array.from({ length: 256 }, (_, i) => i));
    expect(many).toEqual(["0–255 ×256", "×256"]);
    expect(deviceLabelCandidates(Array.from({ length: 32 }, (_, i) => i), true)).toEqual(["0–31"]);
  });
  it("compresses runs", () => {
    expect(compressIds([3, 0, 1, 2, 8])).toBe("0–3,8");
    expect(compressIds([0, 4, 8])).toBe("0,4,8");
    expect(compressIds([1, 2])).toBe("1,2");
  });
  it("ranges", () => {
    expect(rangeLabelCandidates([0, 2048])).toEqual(["0:2048", "0"]);
  });
});

describe("formatting", () => {
  it("bytes", () => {
    expect(formatBytes(64)).toBe("64 B");
    expect(formatBytes(2048)).toBe("2 KiB");
    expect(formatBytes(32 * 1024 * 1024)).toBe("32 MiB");
    expect(formatBytes(1536)).toBe("1.5 KiB");
  });
  it("numbers", () => {
    expect(formatNumber(3)).toBe("3");
    expect(formatNumber(0.123456)).toBe("0.12346");
    expect(formatNumber(NaN)).toBe("nan");
    expect(formatNumber(1e9 + 0.5)).toBe("1e+9");
    expect(formatComplex(1, -2)).toBe("1-2j");
    expect(formatComplex(0.5, 0.25)).toBe("0.5+0.25j");
  });
});
