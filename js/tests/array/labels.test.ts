import { describe, expect, it } from "vitest";
import {
  canvasLabel,
  compressIds,
  deviceLabelCandidates,
  fitLabel,
  rangeLabelCandidates,
} from "../../array/labels";
import {
  FONT_3X5,
  FONT_5X7,
  lighten,
  PIXEL_FONTS,
  pixelTextWidth,
  writeText,
  type PixelFont,
} from "../../shared/pixelfont";
import { formatBytes, formatComplex, formatNumber, textWidth } from "../../shared/text";

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

describe("canvas labels (bitmap fonts)", () => {
  const face = (f: PixelFont) => ({ width: (t: string) => pixelTextWidth(f, t), height: f.h });
  const faces = PIXEL_FONTS.map(face);

  it("take the largest font that fits, then the smaller, then none", () => {
    // "512" is 3×6−1 = 17 px in 5×7 and 3×4−1 = 11 px in 3×5
    expect(canvasLabel([512], 17, 9, faces)).toEqual({ text: "512", face: 0 });
    expect(canvasLabel([512], 16, 9, faces)).toEqual({ text: "512", face: 1 });
    expect(canvasLabel([512], 11, 7, faces)).toEqual({ text: "512", face: 1 });
    expect(canvasLabel([512], 10, 30, faces)).toBeNull();
    expect(canvasLabel([512], 30, 6, faces)).toBeNull(); // no room for a line and its margin
  });

  it("never return a cut label; replicated blocks fall back to shorter whole forms", () => {
    const ids = [0, 1, 2, 3];
    const cands = deviceLabelCandidates(ids);
    const seen = new Set<string>();
    for (let w = 0; w < 60; w++) {
      const l = canvasLabel(ids, w, 12, faces);
      if (!l) continue;
      seen.add(l.text);
      expect(cands).toContain(l.text);
      expect(faces[l.face].width(l.text)).toBeLessThanOrEqual(w);
    }
    expect(seen).toEqual(new Set(["0–3 ×4", "×4"]));
  });

  it("measure only the characters they can draw", () => {
    expect(pixelTextWidth(FONT_3X5, "12")).toBe(7);
    expect(pixelTextWidth(FONT_5X7, "0–3 ×4")).toBe(35);
    expect(pixelTextWidth(FONT_5X7, "a")).toBe(Infinity);
    for (const ch of "0123456789,–× ") {
      expect(FONT_5X7.glyphs.has(ch)).toBe(true);
      expect(FONT_3X5.glyphs.has(ch)).toBe(true);
    }
  });

  it("write glyph pixels (scaled) and skip what falls outside", () => {
    const pw = 12;
    const ph = 12;
    const px = new Uint32Array(pw * ph);
    writeText(px, pw, ph, FONT_3X5, "1", 0, 0, 1, 7);
    // "1" in 3×5: .#. / ##. / .#. / .#. / ###
    const rows = [0, 1, 2, 3, 4].map((y) => [0, 1, 2].map((x) => (px[y * pw + x] ? "#" : ".")).join(""));
    expect(rows).toEqual([".#.", "##.", ".#.", ".#.", "###"]);
    const big = new Uint32Array(pw * ph);
    writeText(big, pw, ph, FONT_3X5, "1", 0, 0, 2, 7);
    expect(big.filter((v) => v === 7).length).toBe(4 * 8); // 8 glyph pixels, each 2×2
    const edge = new Uint32Array(pw * ph);
    writeText(edge, pw, ph, FONT_5X7, "8", 10, 8, 1, 9); // mostly off the buffer: no throw
    expect(edge.some((v) => v === 9)).toBe(true);
  });

  it("lighten a chip towards white, keeping opaque pixels opaque", () => {
    const px = new Uint32Array([0xff000000, 0xff000000]);
    lighten(px, 2, 1, 1, 0, 1, 1, 0.5);
    expect(px[0]).toBe(0xff000000);
    expect((px[1] & 255) === 128 || (px[1] & 255) === 127).toBe(true);
    expect(px[1] >>> 24).toBe(255);
  });
});
