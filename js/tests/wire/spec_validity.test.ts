// Which specs are valid for a mesh and a shape, pinned to Python's (spec.validate, itself checked
// against JAX's NamedSharding): spec_validity.gen.json is written by
// tests/wire/test_spec_validity.py. The controls keep a valid spec as it is and change an invalid
// one (sanitizeSpec), and offer a valid spec's entries enabled (specOptions).
import { describe, expect, it } from "vitest";
import { encodeEntry, sanitizeSpec, specOptions } from "../../shared/spec";
import type { SpecEntry } from "../../wire";
import python from "./spec_validity.gen.json";

interface Case {
  mesh: string;
  axis_names: string[];
  mesh_shape: number[];
  shape: number[];
  spec: SpecEntry[];
  valid: boolean;
}

const cases = python as Case[];
const label = (c: Case): string => `${c.mesh} ${JSON.stringify(c.shape)} ${JSON.stringify(c.spec)}`;

describe("spec validity agrees with Python's", () => {
  it("the fixture has valid and invalid specs on every mesh", () => {
    for (const mesh of new Set(cases.map((c) => c.mesh))) {
      const mine = cases.filter((c) => c.mesh === mesh);
      expect(mine.some((c) => c.valid) && mine.some((c) => !c.valid)).toBe(true);
    }
  });

  it("sanitizeSpec keeps exactly the specs Python accepts", () => {
    const differ = cases
      .filter((c) => {
        const kept = sanitizeSpec(c.spec, c.axis_names, c.mesh_shape, c.shape);
        return (JSON.stringify(kept) === JSON.stringify(c.spec)) !== c.valid;
      })
      .map((c) => `${label(c)}: Python says ${c.valid ? "valid" : "invalid"}`);
    expect(differ).toEqual([]);
  });

  it("specOptions offers every entry of a valid spec enabled", () => {
    const disabled = cases
      .filter((c) => c.valid)
      .filter((c) =>
        c.spec.some((e, d) => {
          const opts = specOptions(d, c.shape[d], c.axis_names, c.mesh_shape, c.spec);
          return opts.find((o) => o.value === encodeEntry(e))?.disabled ?? true;
        }),
      )
      .map(label);
    expect(disabled).toEqual([]);
  });
});
