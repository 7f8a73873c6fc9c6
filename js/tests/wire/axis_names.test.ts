// The default mesh axis names, pinned to Python's (mesh.default_axis_names): axis_names.gen.json
// is written by tests/wire/test_axis_names.py, and both views' "number of axes" controls name new
// axes as it says, the a{i} fallback past four axes included.
import { describe, expect, it } from "vitest";
import { withNumAxes } from "../../array/state";
import { withTraceNumAxes } from "../../function/state";
import { defaultAxisNames } from "../../shared/spec";
import { fx8 } from "../fixtures";
import { fxTraceElementwise } from "../function_fixtures";
import python from "./axis_names.gen.json";

const counts = Object.keys(python).map(Number);
const want = (k: number): string[] => (python as Record<string, string[]>)[String(k)];
/** A k-axis mesh shape over 8 devices: 2 × 2 × 2 then axes of size 1. */
const shapeOf8 = (k: number): number[] => Array.from({ length: k }, (_, i) => (i < 3 ? 2 : 1));

describe("default axis names agree with Python's", () => {
  it("the fixture covers the fallback", () => {
    expect(counts).toContain(5);
    expect(want(5)).toEqual(["a0", "a1", "a2", "a3", "a4"]);
  });

  for (const k of counts) {
    it(`defaultAxisNames(${k})`, () => {
      expect(defaultAxisNames(k)).toEqual(want(k));
    });
  }

  for (const k of [1, 3, 4, 5, 6]) {
    it(`array view: ${k} axes`, () => {
      const f = fx8();
      const options = { ...f.options, own_factorizations: { [String(k)]: [shapeOf8(k)] } };
      const s = { ...f.state, devices: "array" as const };
      expect(withNumAxes(s, k, options).axis_names).toEqual(want(k));
    });

    it(`function view: ${k} axes`, () => {
      const f = fxTraceElementwise();
      const options = { ...f.options, factorizations: { [String(k)]: [shapeOf8(k)] } };
      expect(withTraceNumAxes(f.state, k, options).axis_names).toEqual(want(k));
    });
  }
});
