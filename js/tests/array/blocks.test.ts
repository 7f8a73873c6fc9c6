import { describe, expect, it } from "vitest";
import { allocate, blocksByDevice, effectiveViewDims, locate, selectGrid, sliderDims } from "../../array/blocks";
import { fx3d, fx8, fxReplicated, namedFixture } from "../fixtures";

describe("effectiveViewDims", () => {
  it("handles 0-d, 1-d, invalid", () => {
    expect(effectiveViewDims(0, [])).toEqual([]);
    expect(effectiveViewDims(1, [])).toEqual([0]);
    expect(effectiveViewDims(3, [2, 1])).toEqual([2, 1]);
    expect(effectiveViewDims(3, [1, 1])).toEqual([0, 1]);
    expect(effectiveViewDims(3, [0, 5])).toEqual([0, 1]);
    expect(sliderDims(4, [1, 3])).toEqual([0, 2]);
  });
});

describe("selectGrid", () => {
  it("2-D: all blocks in a 2×4 grid", () => {
    const f = fx8();
    const s = selectGrid(f.layout, [0, 1], [0, 0]);
    expect(s.rowRanges).toEqual([[0, 4], [4, 8]]);
    expect(s.colRanges.length).toBe(4);
    expect(s.visible.length).toBe(8);
    expect([...s.cells].every((k) => k >= 0)).toBe(true);
  });
  it("transposed view swaps rows and columns", () => {
    const s = selectGrid(fx8().layout, [1, 0], [0, 0]);
    expect(s.rowRanges.length).toBe(4);
    expect(s.colRanges.length).toBe(2);
  });
  it("N-d: filters by the slice of the other dims", () => {
    const f = fx3d(); // (6,8,16), P('x', None, 'y'), view (1,2)
    const a = selectGrid(f.layout, [1, 2], [0, 0, 0]);
    const b = selectGrid(f.layout, [1, 2], [4, 0, 0]);
    expect(a.visible.length).toBe(4);
    expect(b.visible.length).toBe(4);
    expect(a.visible.some((k) => b.visible.includes(k))).toBe(false);
    for (const k of a.visible) expect(f.layout.blocks[k].i[0]).toEqual([0, 3]);
    for (const k of b.visible) expect(f.layout.blocks[k].i[0]).toEqual([3, 6]);
    // drawing dims (0, 2): slider over dim 1 (not sharded): all 8 blocks for any index
    const c = selectGrid(f.layout, [0, 2], [0, 7, 0]);
    expect(c.visible.length).toBe(8);
    // drawing dims (0, 1): slider over dim 2 picks one column of blocks
    const d = selectGrid(f.layout, [0, 1], [0, 0, 13]);
    expect(d.visible.length).toBe(2);
    for (const k of d.visible) expect(f.layout.blocks[k].i[2]).toEqual([12, 16]);
  });
  it("1-D and replicated", () => {
    const f = fxReplicated(8);
    const s = selectGrid(f.layout, [0], [0]);
    expect(s.rowDim).toBe(-1);
    expect(s.visible).toEqual([0]);
    expect(f.layout.blocks[0].d.length).toBe(8);
  });
  it("0-d", () => {
    const f = namedFixture({ shape: [], meshShape: [2], spec: [] });
    const s = selectGrid(f.layout, [], []);
    expect(s.visible).toEqual([0]);
    expect(s.cells.length).toBe(1);
  });
});

describe("allocate / locate", () => {
  it("is proportional with a minimum and exact total", () => {
    const o = allocate([1, 1, 2], 400, 8);
    expect(o).toEqual([0, 100, 200, 400]);
    const p = allocate([1, 1000], 200, 10);
    expect(p[1] - p[0]).toBeGreaterThanOrEqual(10);
    expect(p[2]).toBe(200);
    const q = allocate(new Array(100).fill(1), 50, 8);
    expect(q[100]).toBe(50);
  });
  it("locates", () => {
    const o = [0, 10, 30, 60];
    expect(locate(o, 0)).toBe(0);
    expect(locate(o, 29.5)).toBe(1);
    expect(locate(o, 59)).toBe(2);
    expect(locate(o, 60)).toBe(-1);
    expect(locate(o, -1)).toBe(-1);
  });
  it("maps devices to blocks", () => {
    const m = blocksByDevice(fxReplicated(8).layout);
    expect(m.get(5)).toEqual([0]);
  });
});
