import { describe, expect, it } from "vitest";
import {
  bandColor,
  blockBackground,
  colorDistance,
  colorLegend,
  colorScheme,
  contrastRatio,
  deviceColor,
  hexToOklab,
  luminance,
  oklchToHex,
  PALETTE16,
  ramp,
  rampLUT,
  textColorOn,
} from "../../shared/colors";

const hueOf = (hex: string) => {
  const [, a, b] = hexToOklab(hex);
  return ((Math.atan2(b, a) * 180) / Math.PI + 360) % 360;
};
const hueGap = (x: number, y: number) => Math.min(Math.abs(x - y), 360 - Math.abs(x - y));

describe("deviceColor", () => {
  it("is stable per id", () => {
    for (const n of [1, 4, 8, 16, 256, 4096]) {
      for (let id = 0; id < Math.min(n, 64); id++) expect(deviceColor(id, n)).toBe(deviceColor(id, n));
    }
  });
  it("gives distinct palette colours for up to 16 devices", () => {
    for (const n of [2, 8, 9, 16]) {
      const cs = Array.from({ length: n }, (_, i) => deviceColor(i, n));
      expect(new Set(cs).size).toBe(n);
      cs.forEach((c, i) => expect(c).toBe(PALETTE16[i]));
    }
    expect(new Set(PALETTE16).size).toBe(16);
  });
  it("does not depend on the layout: same id, same n -> same colour in any order", () => {
    const a = [5, 3, 1].map((i) => deviceColor(i, 8));
    const b = [1, 3, 5].map((i) => deviceColor(i, 8)).reverse();
    expect(a).toEqual(b);
    expect(deviceColor(1234, 4096)).toBe(colorScheme(4096).color(1234));
  });
});

describe("colour scheme beyond 16 devices", () => {
  it("uses at most 12 hue bands of a power-of-two number of ids, and up to 8 lightness steps", () => {
    for (const n of [17, 24, 32, 48, 64, 100, 128, 256, 1000, 1024, 4096]) {
      const s = colorScheme(n);
      expect(s.kind).toBe("bands");
      expect(s.bands).toBeLessThanOrEqual(12);
      expect(s.bands * s.bandSize).toBeGreaterThanOrEqual(n);
      expect(Math.log2(s.bandSize) % 1).toBe(0);
      expect(s.steps).toBe(Math.min(8, s.bandSize));
    }
    expect(colorScheme(256)).toMatchObject({ bandSize: 32, bands: 8, steps: 8 });
    expect(colorScheme(4096)).toMatchObject({ bandSize: 512, bands: 8, steps: 8 });
    expect(colorScheme(32)).toMatchObject({ bandSize: 4, bands: 8, steps: 4 });
  });

  it("colours by (band, step) only: hue from the band, lightness from id mod steps", () => {
    const n = 256;
    const s = colorScheme(n);
    for (let id = 0; id < n; id++) {
      const band = Math.floor(id / 32);
      const step = id % 8;
      expect(s.place(id)).toEqual({ band, step });
      expect(deviceColor(id, n)).toBe(bandColor(band, 8, step, 8));
    }
    // a band keeps its hue; lightness rises with the step
    for (let band = 0; band < 8; band++) {
      const cs = Array.from({ length: 8 }, (_, k) => deviceColor(band * 32 + k, n));
      const h0 = hueOf(cs[3]);
      for (const c of cs.slice(1, 7)) expect(hueGap(hueOf(c), h0)).toBeLessThan(25);
      for (let k = 1; k < 8; k++) expect(hexToOklab(cs[k])[0]).toBeGreaterThan(hexToOklab(cs[k - 1])[0]);
    }
    // neighbouring bands are different hues
    for (let band = 1; band < 8; band++) {
      const a = hueOf(deviceColor(band * 32 + 3, n));
      const b = hueOf(deviceColor((band - 1) * 32 + 3, n));
      expect(hueGap(a, b)).toBeGreaterThan(25);
    }
    // as many colours as bands x steps
    expect(new Set(Array.from({ length: n }, (_, i) => deviceColor(i, n))).size).toBe(64);
    expect(new Set(Array.from({ length: 32 }, (_, i) => deviceColor(i, 32))).size).toBe(32);
  });

  it("keeps neighbouring ids visibly apart (OKLab distance > 0.05, ~3 just-noticeable steps)", () => {
    for (const n of [17, 64, 256, 1024, 4096]) {
      for (let id = 0; id + 1 < n; id++) {
        expect(colorDistance(deviceColor(id, n), deviceColor(id + 1, n))).toBeGreaterThan(0.05);
      }
    }
  });

  it("keeps text on any device colour readable (WCAG contrast >= 4.5)", () => {
    const all = new Set<string>(PALETTE16);
    for (const n of [17, 24, 48, 64, 100, 256, 4096])
      for (let id = 0; id < Math.min(n, 512); id++) all.add(deviceColor(id, n));
    for (const c of all) expect(contrastRatio(c, textColorOn(c))).toBeGreaterThanOrEqual(4.5);
    expect(textColorOn("#000000")).toBe("#ffffff");
    expect(textColorOn("#ffffff")).toBe("#000000");
    expect(luminance("#ffffff")).toBeCloseTo(1);
    expect(contrastRatio("#000000", "#ffffff")).toBeCloseTo(21);
  });

  it("colours ids that are not 0..n-1 (several processes) by rank, as distinct as dense ids", () => {
    const ids = [0, 1, 2, 3, 2048, 2049, 2050, 2051];
    const s = colorScheme(8, ids);
    expect(s.byRank).toBe(true);
    expect(ids.map((id) => s.color(id))).toEqual(PALETTE16.slice(0, 8));
    expect(colorScheme(8, [0, 1, 2, 3, 4, 5, 6, 7]).byRank).toBe(false);
  });

  it("converts OKLCH into sRGB, lowering chroma out of gamut", () => {
    for (const L of [0.45, 0.7, 0.9])
      for (const h of [25, 110, 250]) {
        const c = oklchToHex(L, 0.4, h); // far out of gamut at every L
        expect(c).toMatch(/^#[0-9a-f]{6}$/);
        expect(hexToOklab(c)[0]).toBeCloseTo(L, 1);
      }
    expect(oklchToHex(1, 0, 0)).toBe("#ffffff");
    expect(oklchToHex(0, 0, 0)).toBe("#000000");
  });
});

describe("colour legend", () => {
  it("is absent for at most 16 devices", () => {
    expect(colorLegend(colorScheme(16))).toBeNull();
  });

  it("explains the scheme and lists every colour: the chart cell of an id is its colour", () => {
    const n = 256;
    const s = colorScheme(n);
    const lg = colorLegend(s)!;
    expect(lg.summary).toContain("8 bands of 32 ids");
    expect(lg.summary).toContain("id mod 8");
    expect(lg.rows.map((r) => r.label)).toEqual(
      Array.from({ length: 8 }, (_, b) => `${b * 32}–${b * 32 + 31}`),
    );
    for (let id = 0; id < n; id++) {
      const p = s.place(id)!;
      expect(lg.rows[p.band].colors[p.step]).toBe(deviceColor(id, n));
    }
  });

  it("finds device 1234 of 4096: its band row and its step column", () => {
    const s = colorScheme(4096);
    const lg = colorLegend(s)!;
    const row = lg.rows.find((r) => {
      const [lo, hi] = r.label.split("–").map(Number);
      return lo <= 1234 && 1234 <= hi;
    })!;
    expect(row.label).toBe("1024–1535");
    expect(row.colors[1234 % 8]).toBe(deviceColor(1234, 4096));
    expect(lg.summary).toContain("repeating every 8 ids");
  });

  it("labels a partial last band and rank-coloured ids by their real ids", () => {
    expect(colorLegend(colorScheme(100))!.rows.at(-1)!.label).toBe("96–99");
    const ids = [...Array.from({ length: 16 }, (_, i) => i), ...Array.from({ length: 16 }, (_, i) => 2048 + i)];
    const lg = colorLegend(colorScheme(32, ids), ids)!;
    expect(lg.rows.map((r) => r.label).at(-1)).toBe("2060–2063");
    expect(lg.summary).toContain("position mod 4");
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

  it("rampLUT holds ramp(v / 255) of each byte value v, opaque", () => {
    const lut = rampLUT();
    for (let v = 0; v < 256; v++) expect([...lut.subarray(v * 4, v * 4 + 4)]).toEqual([...ramp(v / 255), 255]);
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
