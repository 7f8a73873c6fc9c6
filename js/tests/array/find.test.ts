// Find by mesh coordinate (issue 14, item 7): "x=3", "y=*", "x=1,y=2" in the find box light up
// the devices JAX puts at those mesh positions (mesh_coords.gen.json: written by
// tests/wire/test_find_coords.py from jax's mesh.devices[...], device orders unlike id order too).
import { afterEach, describe, expect, it } from "vitest";
import type { Layout } from "../../wire";
import { coordText, devicesAt, parseCoordQuery } from "../../array/find";
import { matchFind } from "../../array/selection";
import { blocksByDevice } from "../../array/blocks";
import { ArrayView } from "../../array/view";
import { FakeModel } from "../fake_model";
import * as fx from "../fixtures";
import coords from "../wire/mesh_coords.gen.json";

const cases = coords as unknown as Record<string, { layout: Layout; queries: Record<string, number[]> }>;

const views: ArrayView[] = [];
afterEach(() => {
  views.splice(0).forEach((v) => v.dispose());
  document.body.replaceChildren();
});

describe("find by mesh coordinate", () => {
  for (const [name, c] of Object.entries(cases)) {
    for (const [query, want] of Object.entries(c.queries)) {
      it(`${name}: ${query} finds what mesh.devices[...] holds`, () => {
        const m = matchFind(query, c.layout, blocksByDevice(c.layout));
        expect(m.invalid).toBe(false);
        expect([...m.found].sort((a, b) => a - b)).toEqual(want);
        // the blocks lit are the blocks those devices hold
        const blocks = c.layout.blocks.flatMap((b, k) => (b.d.some((d) => want.includes(d)) ? [k] : []));
        expect([...m.foundBlocks].sort((a, b) => a - b)).toEqual(blocks);
      });
    }
  }

  it("says where one device sits; an id query says it too", () => {
    const c = cases.permuted2x2x2;
    const by = blocksByDevice(c.layout);
    expect(matchFind("a=0,b=1,c=1", c.layout, by).message).toBe("device 5 at a=0, b=1, c=1 · 1 block");
    expect(matchFind("5", c.layout, by).message).toBe("device 5 at a=0, b=1, c=1 · 1 block");
    expect(matchFind("a=1", c.layout, by).message).toBe("4 devices · 1 block");
    expect(coordText(c.layout.mesh, 3)).toBe("a=0, b=0, c=0");
  });

  it("refuses what it cannot read, in words", () => {
    const c = cases.reversed2x4;
    const by = blocksByDevice(c.layout);
    const err = (q: string) => {
      const m = matchFind(q, c.layout, by);
      expect(m.invalid).toBe(true);
      expect(m.found.size).toBe(0);
      return m.message;
    };
    expect(err("z=1")).toBe('no mesh axis "z" (axes: x, y)');
    expect(err("x=2")).toBe("x=2: x has size 2 (positions 0-1)");
    expect(err("x=1,x=0")).toBe("x is given twice");
    expect(err("x=1,5")).toBe('"5": use ids or axis=position, not both');
    expect(err("x=")).toBe('"x=" is not axis=position (use x=3, y=*, x=1,y=2)');
    expect(matchFind("x=1", fx.fxSingle().layout, new Map()).message).toBe(
      "this layout has no mesh: find devices by id",
    );
  });

  it("the find box lights the grid and the mesh", () => {
    const c = cases.reversed2x4;
    const f = fx.fx8();
    const model = new FakeModel({ ...fx.traitsOf(f), _layout: c.layout, _stats: { ...f.stats, key: c.layout.key } });
    const el = document.createElement("div");
    document.body.append(el);
    views.push(new ArrayView(model as never, el));
    const input = el.querySelector<HTMLInputElement>(".sw-find input")!;
    expect(input.placeholder).toBe("2, 0-3, 0,7, x=1,y=*");
    expect(input.title).toContain("or by mesh coordinate x=1,y=*");
    input.value = "y=2";
    input.dispatchEvent(new Event("input"));
    const lit = [...el.querySelectorAll<HTMLElement>(".sw-mesh .sw-dev.sw-found")].map((e) => Number(e.dataset.device));
    expect(lit.sort()).toEqual(c.queries["y=2"]);
    expect(el.querySelectorAll(".sw-grid .sw-block.sw-found").length).toBe(2);
  });

  it("parses ranges and stars", () => {
    const mesh = cases.reversed2x4.layout.mesh!;
    const q = parseCoordQuery("x=*  y=3-1", mesh);
    expect("axes" in q && [...q.axes.entries()]).toEqual([["x", null], ["y", [1, 3]]]);
    expect("axes" in q && devicesAt(mesh, q).length).toBe(6);
  });
});
