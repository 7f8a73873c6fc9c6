// The search panel in the tree view, on a real payload (treeSearched8: view.search() of a
// tree on 8 devices, from tests/wire_fixtures.py): the table in the search's ranking with the
// bytes each device holds, no step time and no scatter (a tree has no step), a head that says
// nothing was compiled, and a click that asks the kernel for that layout by id.
import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { TreeView } from "../../tree/view";
import { fitWord, headLine } from "../../search/panel";
import type { SearchWire } from "../../wire/search";
import { formatBytes } from "../../shared/text";
import * as gen from "../wire/fixtures.gen";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

const FOUND = gen.treeSearched8._search as SearchWire;

function mount(model: FakeModel) {
  const el = document.createElement("div");
  document.body.append(el);
  const view = new TreeView(model as never, el);
  cleanups.push(() => view.dispose());
  return el;
}

function section(el: HTMLElement): HTMLElement {
  return el.querySelector<HTMLElement>(".sw-search")!.closest("section")!;
}

describe("tree search panel", () => {
  it("is hidden until a search ran", () => {
    const el = mount(new FakeModel({ ...gen.tree8 } as never));
    expect(section(el).hidden).toBe(true);
  });

  it("lists the layouts with the bytes a device holds, no time, no scatter", () => {
    expect(FOUND.kind).toBe("tree");
    expect(FOUND.rows.length).toBeGreaterThan(3);
    const el = mount(new FakeModel({ ...gen.treeSearched8 } as never));
    expect(section(el).hidden).toBe(false);
    const rows = [...el.querySelectorAll<HTMLTableRowElement>(".sw-search-row")];
    expect(rows.map((r) => Number(r.dataset.id))).toEqual(FOUND.rows.map((r) => r.id));
    rows.forEach((tr, k) => {
      const r = FOUND.rows[k];
      const cells = [...tr.cells].map((c) => c.textContent);
      expect(cells[2]).toBe(fitWord(r.fits));
      expect(cells[3]).toBe(formatBytes(r.peak!));
      expect(cells[4]).toBe("—");
      expect(cells[5]).toBe("—");
    });
    const peaks = FOUND.rows.map((r) => r.peak!);
    expect(peaks).toEqual([...peaks].sort((a, b) => a - b)); // all fit: fewest bytes first
    expect(el.querySelector(".sw-search-table th:nth-child(4)")!.textContent).toBe("held per device");
    expect(el.querySelector(".sw-search-svg")).toBeNull();
    const head = el.querySelector(".sw-search-head")!.textContent!;
    expect(head).toBe(headLine(FOUND));
    expect(head).toContain("a tree has no step");
    expect(head).not.toContain("compiled ·");
  });

  it("asks the kernel for a layout by id on a click", () => {
    const model = new FakeModel({ ...gen.treeSearched8 } as never);
    const el = mount(model);
    el.querySelectorAll<HTMLElement>(".sw-search-row")[1].click();
    expect(model.sent.filter((m) => m.type === "search_apply")).toEqual([{ type: "search_apply", id: FOUND.rows[1].id }]);
  });
});
