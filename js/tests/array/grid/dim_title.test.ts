import { describe, expect, it } from "vitest";
import { dimTitle, dimTitleFitting } from "../../../array/grid/geometry";
import * as fx from "../../fixtures";

describe("a dimension's title says what the legend says", () => {
  it("over a mesh axis of size 1: not split, as the legend's 'y has size 1: not split'", () => {
    const f = fx.fx8();
    const mesh = { ...f.layout.mesh!, axis_sizes: [8, 1] };
    const layout = { ...f.layout, mesh, spec: [null, "y"] as (string | null)[] };
    expect(dimTitle(layout, 1)).toBe(`dim 1 (${layout.shape[1]}) · not split (y has size 1)`);
    expect(dimTitle(layout, 0)).toBe(`dim 0 (${layout.shape[0]}) · not sharded`);
    expect(dimTitleFitting(layout, 1, 60)).toBe("dim 1");
    expect(dimTitleFitting(layout, 1, 140)).toBe("dim 1 · not split");
    // an axis of size > 1 still shards
    expect(dimTitle(f.layout, 1)).toBe(`dim 1 (${f.layout.shape[1]}) · sharded over y`);
  });
});
