import { afterEach, describe, expect, it } from "vitest";
import { LeafTable } from "../../tree/leaf_table";
import type { TreeWire } from "../../wire";
import { tree8 } from "../wire/fixtures.gen";

afterEach(() => document.body.replaceChildren());

function mountTable(t: TreeWire): LeafTable {
  const table = new LeafTable(document, () => {});
  document.body.append(table.el);
  table.render({ tree: t, selected: 0, largeBytes: 1 << 30 });
  return table;
}

describe("leaf table columns", () => {
  it("says what ∅ means when a leaf is a ShapeDtypeStruct", () => {
    const t = structuredClone(tree8._tree);
    t.abstract = t.abstract.map((_, i) => i === 0);
    const table = mountTable(t);
    expect(table.el.querySelector(".sw-tree-count")!.textContent).toContain("∅ = no data (a ShapeDtypeStruct)");
    const cell = table.el.querySelector<HTMLElement>(".sw-tree-row[data-leaf='0'] .sw-tree-type")!;
    expect(cell.textContent).toMatch(/ ∅$/);
    expect(cell.title).toContain("ShapeDtypeStruct");
    // No ∅, no words for it.
    const concrete = { ...t, abstract: t.abstract.map(() => false) };
    expect(mountTable(concrete).el.querySelector(".sw-tree-count")!.textContent).not.toContain("∅");
  });

  it("sizes the spec column to its longest spec, so the path gives way first", () => {
    const t = structuredClone(tree8._tree);
    t.specs[0] = "P(('data', 'model'), None, 'expert')";
    const table = mountTable(t);
    const w = parseInt(table.el.style.getPropertyValue("--sw-spec-w"), 10);
    expect(w).toBeGreaterThanOrEqual(t.specs[0].length * 7);
    const spec = table.el.querySelector<HTMLElement>(".sw-tree-row[data-leaf='0'] .sw-tree-spec")!;
    expect(spec.title).toContain(t.specs[0]);
  });
});
