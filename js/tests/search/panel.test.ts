// The search panel on a real payload (functionSearched8: view.search() of an 8-device matmul,
// from tests/wire_fixtures.py): its rows in the search's ranking with their figures, the
// scatter's points where the figures put them, the device-memory line, a click that asks the
// kernel for that candidate by id, streaming updates, and a saved page that offers no click.
import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { flush } from "../testing";
import { FunctionView } from "../../function/view";
import { fitWord, headLine } from "../../search/panel";
import type { SearchWire } from "../../wire/search";
import { formatBytes, formatSeconds } from "../../shared/text";
import * as gen from "../wire/fixtures.gen";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

const FOUND = gen.functionSearched8._search as SearchWire;

function mount(search: SearchWire | undefined, patch: Record<string, unknown> = {}) {
  const model = new FakeModel({ ...gen.functionSearched8, _search: search, ...patch } as never);
  const el = document.createElement("div");
  document.body.append(el);
  const view = new FunctionView(model as never, el);
  cleanups.push(() => view.dispose());
  return { el, model, view };
}

function section(el: HTMLElement): HTMLElement {
  return el.querySelector<HTMLElement>(".sw-search")!.closest("section")!;
}

describe("search panel", () => {
  it("is hidden until a search ran", () => {
    const { el } = mount(gen.function8._search as SearchWire);
    expect((gen.function8._search as SearchWire).state).toBe("none");
    expect(section(el).hidden).toBe(true);
  });

  it("lists every candidate in the search's ranking with its figures", () => {
    const { el } = mount(FOUND);
    expect(section(el).hidden).toBe(false);
    expect(FOUND.rows.length).toBeGreaterThan(3);
    const rows = [...el.querySelectorAll<HTMLTableRowElement>(".sw-search-row")];
    expect(rows.map((r) => Number(r.dataset.id))).toEqual(FOUND.rows.map((r) => r.id));
    rows.forEach((tr, k) => {
      const r = FOUND.rows[k];
      const cells = [...tr.cells].map((c) => c.textContent);
      expect(cells[0]).toBe(String(k + 1));
      expect(cells[1]).toBe(r.name + r.layout);
      expect(cells[2]).toBe(fitWord(r.fits));
      expect(cells[3]).toBe(formatBytes(r.peak!));
      expect(cells[4]).toBe(formatSeconds(r.step_s!));
      expect(cells[5]).toBe(formatBytes(r.moved));
    });
    const head = el.querySelector(".sw-search-head")!.textContent!;
    expect(head).toBe(headLine(FOUND));
    expect(head).toContain(`${FOUND.done} of ${FOUND.total} candidates compiled`);
  });

  it("puts each point at its step time and peak, the device memory dashed", () => {
    const w: SearchWire = { ...FOUND, hbm: 2 * Math.max(...FOUND.rows.map((r) => r.peak!)) };
    const { el } = mount(w);
    const dots = [...el.querySelectorAll<SVGCircleElement>(".sw-search-dot")];
    expect(dots.length).toBe(w.rows.length);
    const slow = w.rows.reduce((a, b) => (a.step_s! > b.step_s! ? a : b));
    const right = dots.reduce((a, b) => (Number(a.getAttribute("cx")) > Number(b.getAttribute("cx")) ? a : b));
    expect(Number(right.dataset.id)).toBe(slow.id); // the slowest is rightmost
    const line = el.querySelector(".sw-search-hbm")!;
    const top = Math.min(...dots.map((d) => Number(d.getAttribute("cy"))));
    expect(Number(line.getAttribute("y1"))).toBeLessThan(top); // above every peak: all fit
    expect(el.querySelector(".sw-search-svg")!.textContent).toContain(`device memory ${formatBytes(w.hbm!)}`);
  });

  it("marks the candidates that do not fit, in the table and the scatter", () => {
    const w: SearchWire = { ...FOUND, rows: FOUND.rows.map((r, k) => ({ ...r, fits: k === 0 ? false : r.fits })) };
    const { el } = mount(w);
    const first = el.querySelector<HTMLTableRowElement>(".sw-search-row")!;
    expect(first.classList.contains("sw-search-no")).toBe(true);
    expect(first.cells[2].textContent).toBe("does not fit");
    const dot = el.querySelector<SVGElement>(`.sw-search-dot[data-id="${w.rows[0].id}"]`)!;
    expect(dot.classList.contains("sw-search-no")).toBe(true);
  });

  it("asks the kernel for a candidate by id on a click of its row or point", () => {
    const { el, model } = mount(FOUND);
    const rows = el.querySelectorAll<HTMLElement>(".sw-search-row");
    rows[2].click();
    el.querySelector<SVGElement>(`.sw-search-dot[data-id="${FOUND.rows[4].id}"]`)!.dispatchEvent(new Event("click"));
    const asked = model.sent.filter((m) => m.type === "search_apply");
    expect(asked).toEqual([
      { type: "search_apply", id: FOUND.rows[2].id },
      { type: "search_apply", id: FOUND.rows[4].id },
    ]);
  });

  it("redraws as results stream in", async () => {
    const part: SearchWire = { ...FOUND, state: "running", done: 2, rows: FOUND.rows.slice(0, 2) };
    const { el, model } = mount(part);
    expect(el.querySelectorAll(".sw-search-row").length).toBe(2);
    expect(el.querySelector(".sw-search-head")!.textContent).toContain(`2 of ${FOUND.total} candidates compiled · running`);
    model.set("_search", FOUND);
    await flush();
    expect(el.querySelectorAll(".sw-search-row").length).toBe(FOUND.rows.length);
  });

  it("says where a peak is the memory totals", () => {
    const w: SearchWire = { ...FOUND, rows: FOUND.rows.map((r) => ({ ...r, peak_is_totals: true })) };
    const { el } = mount(w);
    const cell = el.querySelector<HTMLTableRowElement>(".sw-search-row")!.cells[3];
    expect(cell.textContent).toBe(`${formatBytes(w.rows[0].peak!)} (totals)`);
  });

  it("offers no click on a saved page (no kernel to lay the view out)", () => {
    const opts = { ...gen.functionSearched8._trace_options, static: "a saved page" };
    const { el, model } = mount(FOUND, { _trace_options: opts });
    const row = el.querySelector<HTMLElement>(".sw-search-row")!;
    row.click();
    expect(row.tabIndex).toBe(-1);
    expect(model.sent.filter((m) => m.type === "search_apply")).toEqual([]);
  });
});
