// The cost parts of the function view (issue 12): the "Estimated time" section (hardware dropdown,
// a bar per part on one time axis, total, bound, HBM) and hovering a collective (its table row or
// its bar) lighting the collective's device groups. Payloads are real ones from Python.
import { afterEach, describe, expect, it } from "vitest";
import type { AnyModel } from "@anywidget/types";
import type { EstimateWire, FunctionModel } from "../../wire";
import widget from "../../widget";
import { FakeModel } from "../fake_model";
import * as gen from "../wire/fixtures.gen";
import { formatSeconds } from "../../shared/text";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

const settle = () => new Promise<void>((r) => setTimeout(r, 0));

function draw(state: FunctionModel): { el: HTMLElement; model: FakeModel } {
  const model = new FakeModel(structuredClone({ ...state }));
  const el = document.createElement("div");
  document.body.append(el);
  cleanups.push(widget.render({ model: model as unknown as AnyModel, el }));
  return { el, model };
}

const enter = (e: Element) => e.dispatchEvent(new MouseEvent("mouseenter"));
const leave = (e: Element) => e.dispatchEvent(new MouseEvent("mouseleave"));

const F = gen.function8;
const E = F._estimate as EstimateWire;

function estSection(el: HTMLElement): HTMLElement {
  return el.querySelector<HTMLElement>(".sw-est")!.closest("section")!;
}

describe("Estimated time", () => {
  it("a collective shows both terms: steps × latency (a hatched share of its bar) and bandwidth", async () => {
    const { el } = draw(F);
    await settle();
    const rows = estSection(el).querySelectorAll<HTMLElement>(".sw-est-row:not(.sw-est-axisrow)");
    const colls = E.parts.map((p, i) => [p, rows[i]] as const).filter(([p]) => p.kind === "collective");
    expect(colls.length).toBeGreaterThan(0);
    for (const [p, row] of colls) {
      expect(p.latency_s).toBeGreaterThanOrEqual(1e-6); // a tiny collective: microseconds, not picoseconds
      expect(p.formula).toContain("latency");
      const val = row.querySelector<HTMLElement>(".sw-est-val")!;
      expect(val.dataset.terms).toBe(`${formatSeconds(p.latency_s)} latency + ${formatSeconds(p.seconds - p.latency_s)}`);
      expect(row.title).toContain(`${formatSeconds(p.latency_s)} latency + `);
      const lat = row.querySelector<HTMLElement>(".sw-est-lat")!;
      expect(parseFloat(lat.style.width)).toBeCloseTo((100 * p.latency_s) / p.seconds, 3);
    }
    for (const [i, p] of E.parts.entries()) {
      if (p.kind === "compute" || p.kind === "memory") expect(rows[i].querySelector(".sw-est-lat")).toBeNull();
    }
  });

  it("a bar per part with its seconds and formula, the total, overlap rule, bound and HBM", async () => {
    const { el } = draw(F);
    await settle();
    expect(E.key).toBe(F._trace.key);
    const sec = estSection(el);
    expect(sec.hidden).toBe(false);
    expect(sec.querySelector("h3")!.textContent).toContain("Estimated time");
    const rows = sec.querySelectorAll<HTMLElement>(".sw-est-row:not(.sw-est-axisrow)");
    expect([...rows].map((r) => r.dataset.kind)).toEqual(E.parts.map((p) => p.kind));
    E.parts.forEach((p, i) => {
      expect(rows[i].querySelector(".sw-est-name")!.textContent).toBe(p.label);
      expect(rows[i].querySelector(".sw-est-val")!.textContent).toBe(formatSeconds(p.seconds));
      expect(rows[i].title).toContain(p.formula);
    });
    // Bars on one axis (0..total): widths in proportion to the seconds; the last collective
    // ends at the right edge.
    const pct = (r: HTMLElement, k: "width" | "left") => parseFloat(r.querySelector<HTMLElement>(".sw-est-fill")!.style[k]);
    E.parts.forEach((p, i) => expect(pct(rows[i], "width")).toBeCloseTo((100 * p.seconds) / E.total_s, 3));
    const last = rows[rows.length - 1];
    expect(pct(last, "left") + pct(last, "width")).toBeCloseTo(100, 3);
    const text = sec.textContent!;
    expect(text).toContain(`total ${formatSeconds(E.total_s)}`);
    expect(text).toContain(`${E.bound}-bound`);
    expect(text).toContain(E.overlap);
    expect(sec.querySelector(".sw-est-fits")!.textContent).toBe(E.fits_text);
    expect(E.fits_text).toMatch(/^fits in HBM \(.+ of .+ GiB\)$/);
  });

  it("does not fit: said in words, marked", async () => {
    const { el } = draw({ ...F, _estimate: { ...E, fits: false, fits_text: "does not fit in HBM (120 of 95 GiB)" } });
    await settle();
    const fit = el.querySelector(".sw-est-fits")!;
    expect(fit.textContent).toBe("does not fit in HBM (120 of 95 GiB)");
    expect(fit.classList.contains("sw-est-nofit")).toBe(true);
  });

  it("the dropdown offers the presets (source as title) and writes `hardware`; the new estimate replaces the old", async () => {
    const { el, model } = draw(F);
    await settle();
    const sel = estSection(el).querySelector<HTMLSelectElement>('select[data-key="hardware"]')!;
    const presets = F._hardware_presets!;
    expect([...sel.options].map((o) => o.value)).toEqual(presets.map((p) => p.name));
    presets.forEach((p, i) => expect(sel.options[i].title).toContain(p.source));
    expect(sel.value).toBe(F.hardware);
    sel.value = "a100";
    sel.dispatchEvent(new Event("change"));
    expect(model.get("hardware")).toBe("a100");
    expect(model.saves).toBeGreaterThan(0);
    await settle();
    expect(estSection(el).textContent).toContain("estimating for a100");
    // The kernel answers: every part twice as long.
    const parts = E.parts.map((p) => ({ ...p, seconds: 2 * p.seconds }));
    model.set("_estimate", { ...E, hardware: "a100", parts, total_s: 2 * E.total_s });
    await settle();
    const sec = estSection(el);
    expect(sec.textContent).not.toContain("estimating");
    expect(sec.textContent).toContain(`total ${formatSeconds(2 * E.total_s)}`);
    expect(sec.querySelector(".sw-est")!.getAttribute("data-hardware")).toBe("a100");
  });

  it("an estimate of another trace is not shown as this one's", async () => {
    const { el } = draw({ ...F, _estimate: { ...E, key: F._trace.key + 1 } });
    await settle();
    expect(el.querySelector(".sw-est")).toBeNull();
    expect(el.textContent).toContain("estimating for");
  });
});

describe("hovering a collective lights its device groups", () => {
  const T = F._trace;
  const sets = T.group_sets!;

  // The mesh is drawn once: on the leaf cards, lit there (the Communication section keeps only
  // its caption, which names the lit groups).
  function pictureCell(el: HTMLElement, id: number): HTMLElement {
    return el.querySelector<HTMLElement>(`.sw-tr-leaf .sw-mesh .sw-dev[data-device="${id}"]`)!;
  }

  it("the mesh is drawn once: the Communication section draws no devices picture of its own", async () => {
    const { el } = draw(F);
    await settle();
    const pic = el.querySelector<HTMLElement>(".sw-tr-devices")!;
    expect(pic.hidden).toBe(false); // its caption
    expect(pic.querySelectorAll(".sw-dev").length).toBe(0);
    expect(el.querySelector(".sw-tr-devices-caption")!.textContent).toContain("on the leaf's mesh");
    const ids = T.inputs[0].layout.mesh!.device_ids;
    expect(el.querySelectorAll(".sw-tr-leaf .sw-mesh").length).toBeGreaterThan(0);
    for (const id of ids) expect(pictureCell(el, id)).not.toBeNull();
  });

  it("a table row: one colour per group on the cards' meshes, named in the caption", async () => {
    const { el } = draw(F);
    await settle();
    expect(T.collectives.length).toBeGreaterThan(0);
    const rows = el.querySelectorAll<HTMLElement>(".sw-tr-coll-row");
    const ids = T.inputs[0].layout.mesh!.device_ids;
    const before = ids.map((id) => pictureCell(el, id).style.background);
    const card = el.querySelector<HTMLElement>(".sw-tr-leaf .sw-mesh")!;
    T.collectives.forEach((c, k) => {
      enter(rows[k]);
      const groups = sets[c.group_set!];
      expect(groups.length).toBe(c.n_groups);
      const colour = (id: number) => pictureCell(el, id).style.background;
      for (const g of groups) for (const id of g) expect(colour(id)).toBe(colour(g[0]));
      expect(new Set(groups.map((g) => colour(g[0]))).size).toBe(groups.length);
      const some = new Set(groups.flat()).size < ids.length;
      for (const id of ids)
        expect(pictureCell(el, id).classList.contains("sw-hl")).toBe(some && groups.flat().includes(id));
      expect(card.classList.contains("sw-dimming")).toBe(some);
      expect(el.querySelector(".sw-tr-devices-caption")!.textContent).toContain(c.kind);
      // Every card's mesh lights the same groups in the same colours.
      for (const other of el.querySelectorAll<HTMLElement>(".sw-tr-leaf .sw-mesh"))
        for (const g of groups)
          for (const id of g)
            expect(other.querySelector<HTMLElement>(`.sw-dev[data-device="${id}"]`)!.style.background).toBe(colour(g[0]));
      leave(rows[k]);
      expect(ids.map((id) => pictureCell(el, id).style.background)).toEqual(before);
    });
    expect(card.classList.contains("sw-dimming")).toBe(false);
  });

  it("an estimate bar of a collective lights the same groups", async () => {
    const { el } = draw(F);
    await settle();
    const bar = el.querySelector<HTMLElement>('.sw-est-row[data-collective="0"]')!;
    enter(bar);
    const groups = sets[T.collectives[0].group_set!];
    const colour = (id: number) => pictureCell(el, id).style.background;
    for (const g of groups) for (const id of g) expect(colour(id)).toBe(colour(g[0]));
    expect(new Set(groups.map((g) => colour(g[0]))).size).toBe(groups.length);
    expect(el.querySelector(".sw-tr-devices-caption")!.textContent).toContain(T.collectives[0].kind);
    leave(bar);
    expect(el.querySelector(".sw-tr-devices-caption")!.textContent).toContain("hover a collective");
  });

  it("a collective whose groups the payload left out says so", async () => {
    const colls = T.collectives.map((c) => ({ ...c, group_set: -1 }));
    const { el } = draw({ ...F, _trace: { ...T, collectives: colls } });
    await settle();
    enter(el.querySelector(".sw-tr-coll-row")!);
    expect(el.querySelector(".sw-tr-devices-caption")!.textContent).toContain("not sent");
    expect(el.querySelector(".sw-tr-devices")!.classList.contains("sw-dimming")).toBe(false);
  });
});
