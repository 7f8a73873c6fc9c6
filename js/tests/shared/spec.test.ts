import { describe, expect, it } from "vitest";
import {
  axisCombos,
  axisNameProblem,
  decodeEntry,
  encodeEntry,
  sanitizeSpec,
  specOptions,
  specString,
} from "../../shared/spec";
import { withAxisName, withMeshShape, withNumAxes, withSpecEntry } from "../../array/state";
import { fx8 } from "../fixtures";

describe("spec encoding", () => {
  it("round-trips", () => {
    for (const e of [null, "x", ["x", "y"]] as const) expect(decodeEntry(encodeEntry(e as never))).toEqual(e);
    // axis names JAX allows that are not identifiers, "+" and "[" included
    for (const e of ["data-parallel", "x y", "a+b", ["a+b", "c"], "[x"] as const)
      expect(decodeEntry(encodeEntry(e as never))).toEqual(e);
    expect(specString([["x", "y"], null, "z"])).toBe("P(('x', 'y'), None, 'z')");
  });
  it("combos in mesh order", () => {
    expect(axisCombos(["x", "y", "z"]).map((c) => c.join("+"))).toEqual([
      "x", "y", "z", "x+y", "x+z", "y+z", "x+y+z",
    ]);
  });
});

describe("specOptions", () => {
  it("disables non-dividing axes with a reason", () => {
    const o = specOptions(0, 6, ["x", "y"], [2, 4], [null, null]);
    const y = o.find((x) => x.value === "y")!;
    expect(y.disabled).toBe(true);
    expect(y.label).toBe("y — 6 not divisible by 4");
    expect(o.find((x) => x.value === "x")!.disabled).toBe(false);
    expect(o.find((x) => x.value === "x+y")!.reason).toContain("not divisible by 8");
    expect(o[0]).toMatchObject({ value: "", label: "None (replicated)", disabled: false });
  });
  it("disables axes used by another dimension", () => {
    const o = specOptions(1, 16, ["x", "y"], [2, 4], ["x", null]);
    const x = o.find((v) => v.value === "x")!;
    expect(x.disabled).toBe(true);
    expect(x.reason).toContain("used by dim 0");
    expect(o.find((v) => v.value === "y")!.disabled).toBe(false);
    expect(o.find((v) => v.value === "x+y")!.disabled).toBe(true);
  });
  it("keeps the current entry even when out of mesh order", () => {
    const o = specOptions(0, 16, ["x", "y"], [2, 4], [["y", "x"]]);
    expect(o.some((v) => v.value === "y+x")).toBe(true);
  });
});

describe("state transitions", () => {
  const f = fx8();
  it("changing the number of axes keeps the split (old axis sizes first) and default names", () => {
    const s = withNumAxes(f.state, 1, f.options);
    expect(s.mesh_shape).toEqual([8]);
    expect(s.axis_names).toEqual(["x"]);
    expect(s.spec).toEqual(["x", null]);
    const s3 = withNumAxes(f.state, 3, f.options);
    expect(s3.mesh_shape).toEqual([...f.state.mesh_shape, 1]); // x and y keep their sizes
    expect(s3.axis_names).toEqual(["x", "y", "z"]);
    expect(s3.spec).toEqual(["x", "y"]);
    expect(s3.axis_types).toEqual(["auto", "auto", "auto"]);
  });
  it("mesh shape change drops entries that no longer divide", () => {
    const s = withMeshShape({ ...f.state, spec: ["x", "y"] }, [8, 1], { ...f.options, shape: [4, 16] });
    expect(s.spec).toEqual([null, "y"]);
  });
  it("renames follow into the spec and are validated", () => {
    const s = withAxisName(f.state, 0, "data");
    expect(s.axis_names).toEqual(["data", "y"]);
    expect(s.spec).toEqual(["data", "y"]);
    expect(axisNameProblem(["x", "y"], 0, "y")).toContain("already used");
    expect(axisNameProblem(["x", "y"], 0, "1a")).not.toBe("");
    expect(() => withAxisName(f.state, 0, "")).toThrow();
  });
  it("sanitizeSpec removes reuse and unknown axes", () => {
    expect(sanitizeSpec(["x", "x", "q"], ["x", "y"], [2, 4], [8, 8, 8])).toEqual(["x", null, null]);
    expect(sanitizeSpec([["x", "y"]], ["x", "y"], [2, 4], [4])).toEqual(["x"]);
  });
  it("withSpecEntry pads", () => {
    expect(withSpecEntry({ ...f.state, spec: [] }, 1, "y").spec).toEqual([null, "y"]);
  });
});
