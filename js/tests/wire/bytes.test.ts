// Byte formatting pinned to Python's (units.fmt_bytes): bytes.gen.json is written by
// tests/wire/test_byte_format.py, so the kernel's lines and the widget's tables write one text.
import { describe, expect, it } from "vitest";
import { formatBytes } from "../../shared/text";
import python from "./bytes.gen.json";

const table = python as [number, string][];

describe("formatBytes agrees with Python's fmt_bytes", () => {
  it("the fixture covers ties, PiB and negatives", () => {
    const ns = table.map(([n]) => n);
    expect(ns).toContain(1152);
    expect(ns).toContain(2 ** 50);
    expect(ns.some((n) => n < 0)).toBe(true);
  });

  it("every byte count in the fixture", () => {
    const differ = table.filter(([n, text]) => formatBytes(n) !== text);
    expect(differ.map(([n, text]) => [n, text, formatBytes(n)])).toEqual([]);
  });

  it("not finite (JSON cannot carry these): the text tests/wire/test_byte_format.py asserts", () => {
    expect([Infinity, -Infinity, NaN].map(formatBytes)).toEqual(["Infinity", "-Infinity", "NaN"]);
  });
});
