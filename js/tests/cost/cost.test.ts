// The cost parts of the array view (issue 12): the "moved" line, the heat of bytes in / out, who
// sends to whom on hover, the reshard's collectives lighting their device groups, and the
// estimate bars with the hardware dropdown. Payloads are real ones from Python (fixtures.gen.ts).
import { afterEach, describe, expect, it } from "vitest";
import type { AnyModel } from "@anywidget/types";
import type { EstimateWire, TransferWire } from "../../wire";
import widget from "../../widget";
import { FakeModel } from "../fake_model";
import * as gen from "../wire/fixtures.gen";
import { heatColor, HEAT_ZERO } from "../../array/mesh/heat";
import { ticks, timeline } from "../../cost/estimate";
import { groupColor, groupPaint } from "../../cost/groups";
import { formatBytes, formatSeconds } from "../../shared/text";
import * as fx from "../fixtures";
import { mount, unmountAll } from "../testing";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  unmountAll();
});

const settle = () => new Promise<void>((r) => setTimeout(r, 0));

function draw(state: object): { el: HTMLElement; model: FakeModel } {
  const model = new FakeModel(structuredClone({ ...state }));
  const el = document.createElement("div");
  document.body.append(el);
  cleanups.push(widget.render({ model: model as unknown as AnyModel, el }));
  return { el, model };
}

function cell(el: HTMLElement, id: number): HTMLElement {
  return el.querySelector<HTMLElement>(`.sw-mesh .sw-dev[data-device="${id}"]`)!;
}

/** A CSS colour as the browser keeps it ("rgb(r, g, b)") back to "#rrggbb". */
function hexOf(css: string): string {
  const m = /rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(css);
  if (!m) return css.toLowerCase();
  return "#" + m.slice(1, 4).map((v) => Number(v).toString(16).padStart(2, "0")).join("");
}

const enter = (e: Element) => e.dispatchEvent(new MouseEvent("mouseenter", { bubbles: false }));
const leave = (e: Element) => e.dispatchEvent(new MouseEvent("mouseleave", { bubbles: false }));

const resharded = gen.arrayResharded8;
const T = resharded._transfer as TransferWire;

describe("the moved line", () => {
  it("a re-layout: the kernel's line, by the typeof", async () => {
    const { el } = draw(resharded);
    await settle();
    expect(T.status).toBe("ready");
    const line = el.querySelector<HTMLElement>(".sw-moved")!;
    expect(line.hidden).toBe(false);
    expect(line.textContent).toContain(T.line);
    expect(T.line).toContain(formatBytes(T.total));
  });

  it("the original layout: nothing moves, no heat or cost section", async () => {
    const { el } = draw(gen.array8);
    await settle();
    expect(gen.array8._transfer!.status).toBe("none");
    expect(el.querySelector(".sw-moved")!.textContent).toContain("nothing moves");
    expect(el.querySelector<HTMLElement>(".sw-xfer-side")!.hidden).toBe(true);
    expect(el.querySelector<HTMLElement>(".sw-xfer")!.hidden).toBe(true);
  });

  it("pending and closed: the bytes only, nothing compiling; the button asks for the collectives", async () => {
    const pending: TransferWire = { ...T, status: "pending", collectives: [], group_sets: [], estimate: null };
    const { el, model } = draw({ ...resharded, _transfer: pending, cost_open: false });
    await settle();
    expect(el.querySelector(".sw-moved")!.textContent).not.toContain("compiling");
    expect(el.querySelector(".sw-xfer")!.textContent).not.toContain("follow");
    expect(el.querySelector(".sw-xfer")!.textContent).toContain(formatBytes(T.total));
    const btn = el.querySelector<HTMLButtonElement>("[data-key=transfer-open]")!;
    expect(btn.getAttribute("aria-expanded")).toBe("false");
    expect(el.querySelector<HTMLElement>(".sw-xfer select")!.closest("[hidden]")).not.toBeNull();
    btn.click();
    expect(model.get("cost_open")).toBe(true);
    await settle();
    expect(btn.getAttribute("aria-expanded")).toBe("true");
    expect(el.querySelector(".sw-moved")!.textContent).toContain("compiling the reshard");
    // ready while closed (a pair compiled before): the collectives stay folded away
    model.set("cost_open", false);
    model.set("_transfer", T);
    await settle();
    expect(el.querySelectorAll(".sw-xfer .sw-tr-coll-row").length).toBe(0);
    expect(el.querySelector(".sw-moved")!.textContent).toContain(T.line);
  });

  it("pending: the bytes, and that the compile follows; unavailable: why, in words", async () => {
    const pending: TransferWire = { ...T, status: "pending", collectives: [], group_sets: [], estimate: null };
    const { el, model } = draw({ ...resharded, _transfer: pending });
    await settle();
    expect(el.querySelector(".sw-moved")!.textContent).toContain("compiling the reshard");
    expect(el.querySelector(".sw-xfer")!.textContent).toContain("follow");
    expect(el.querySelectorAll(".sw-xfer .sw-tr-coll-row").length).toBe(0);
    model.set("_transfer", { ...pending, status: "unavailable", message: "meshes differ in device order" });
    await settle();
    const line = el.querySelector<HTMLElement>(".sw-moved")!;
    expect(line.dataset.status).toBe("unavailable");
    expect(line.textContent).toContain("meshes differ in device order");
    expect(el.querySelector<HTMLElement>(".sw-xfer")!.hidden).toBe(true);
  });

  it("a transfer of another layout (an older key) is not shown as this one's", async () => {
    const { el } = draw({ ...resharded, _transfer: { ...T, key: resharded._layout.key - 1 } });
    await settle();
    expect(el.querySelector<HTMLElement>(".sw-moved")!.hidden).toBe(true);
  });
});

describe("heat on the mesh", () => {
  it("bytes in / bytes out paint each device by its bytes, with a key; device colours come back", async () => {
    const { el } = draw(resharded);
    await settle();
    const ids = resharded._layout.devices.ids;
    const before = ids.map((id) => cell(el, id).style.background);
    for (const [mode, values] of [
      ["in", T.received],
      ["out", T.sent],
    ] as const) {
      el.querySelector<HTMLButtonElement>(`[data-key="heat-${mode}"]`)!.click();
      const max = Math.max(...values);
      ids.forEach((id, i) => expect(hexOf(cell(el, id).style.background)).toBe(heatColor(values[i], max)));
      const key = el.querySelector(".sw-heat-key")!;
      expect(key.textContent).toContain(formatBytes(max));
      // Twice the bytes, a different colour: the heat says who moves more.
      const lo = ids[values.indexOf(Math.min(...values))];
      const hi = ids[values.indexOf(max)];
      if (Math.min(...values) < max) expect(cell(el, lo).style.background).not.toBe(cell(el, hi).style.background);
    }
    expect(el.querySelector(".sw-mesh")!.classList.contains("sw-heat-on")).toBe(true);
    el.querySelector<HTMLButtonElement>('[data-key="heat-off"]')!.click();
    expect(el.querySelector(".sw-mesh")!.classList.contains("sw-heat-on")).toBe(false);
    expect(ids.map((id) => cell(el, id).style.background)).toEqual(before);
    expect(el.querySelector(".sw-heat-key")).toBeNull();
  });

  it("stays on the devices when the pane switches to the physical view (TPU coords)", async () => {
    const f = fx.fxTpuV4();
    const ids = f.layout.devices.ids;
    const received = ids.map((_, i) => (i % 3) * 512);
    const t: TransferWire = { ...T, key: f.layout.key, received, sent: received, pairs: [], collectives: [], group_sets: [], estimate: null };
    const { el } = mount(f, { _transfer: t, hardware: "tpu-v5p", _hardware_presets: [] });
    await settle();
    el.querySelector<HTMLButtonElement>('[data-key="heat-in"]')!.click();
    const check = () => ids.forEach((id, i) => expect(hexOf(cell(el, id).style.background)).toBe(heatColor(received[i], 1024)));
    check();
    el.querySelector<HTMLButtonElement>('[data-key="mesh-view-physical"]')!.click();
    expect(el.querySelector(".sw-phys")).not.toBeNull();
    check();
  });

  it("a device that moves nothing is grey", () => {
    expect(heatColor(0, 100)).toBe(HEAT_ZERO);
    expect(heatColor(100, 100)).not.toBe(heatColor(10, 100));
  });
});

describe("who sends to whom", () => {
  it("hovering a device names its partners with bytes and outlines them", async () => {
    const { el } = draw(resharded);
    await settle();
    const ids = resharded._layout.devices.ids;
    for (const id of ids) {
      enter(cell(el, id));
      const to = T.pairs.filter(([s]) => s === id);
      const from = T.pairs.filter(([, r]) => r === id);
      const text = el.querySelector(".sw-xfer-pairs")!.textContent!;
      const i = ids.indexOf(id);
      expect(text).toContain(`device ${id}`);
      if (T.received[i] > 0) expect(text).toContain(`receives ${formatBytes(T.received[i])}`);
      for (const [s, , b] of from) expect(text).toContain(`${formatBytes(b)} from ${s}`);
      for (const [, r, b] of to) expect(text).toContain(`${formatBytes(b)} to ${r}`);
      const sendTo = [...el.querySelectorAll<HTMLElement>(".sw-dev.sw-sendto")].map((c) => Number(c.dataset.device));
      const recvFrom = [...el.querySelectorAll<HTMLElement>(".sw-dev.sw-recvfrom")].map((c) => Number(c.dataset.device));
      expect(sendTo.sort()).toEqual(to.map(([, r]) => r).sort());
      expect(recvFrom.sort()).toEqual(from.map(([s]) => s).sort());
      // The tooltip says it too.
      expect(cell(el, id).title).toContain(`device ${id} `);
      leave(cell(el, id));
    }
    expect(el.querySelectorAll(".sw-sendto, .sw-recvfrom").length).toBe(0);
  });
});

describe("the reshard's collectives", () => {
  it("listed; hovering one lights its device groups, one colour per group", async () => {
    const { el } = draw(resharded);
    await settle();
    const rows = el.querySelectorAll<HTMLElement>(".sw-xfer .sw-tr-coll-row");
    expect(rows.length).toBe(T.collectives.length);
    expect(T.collectives.length).toBeGreaterThan(0);
    const ids = resharded._layout.devices.ids;
    // Both cases are here: groups over every device (all-to-all), over some (the permute).
    const cover = T.collectives.map((c) => new Set(T.group_sets[c.group_set!].flat()).size);
    expect(cover).toContain(ids.length);
    expect(Math.min(...cover)).toBeLessThan(ids.length);
    const before = ids.map((id) => cell(el, id).style.background);
    T.collectives.forEach((c, k) => {
      expect(rows[k].textContent).toContain(c.kind);
      enter(rows[k]);
      const groups = T.group_sets[c.group_set!];
      const lit = new Set(groups.flat());
      const colourOf = (id: number) => cell(el, id).style.background;
      if (c.kind !== "collective-permute") {
        for (const g of groups) for (const id of g) expect(colourOf(id)).toBe(colourOf(g[0]));
        const firsts = groups.map((g) => colourOf(g[0]));
        expect(new Set(firsts).size).toBe(groups.length);
      }
      // Devices outside the groups fade; when every device is in one, the colours say it all.
      const some = lit.size < ids.length;
      for (const id of ids) expect(cell(el, id).classList.contains("sw-hl")).toBe(some && lit.has(id));
      expect(el.querySelector(".sw-mesh")!.classList.contains("sw-dimming")).toBe(some);
      leave(rows[k]);
      expect(ids.map((id) => cell(el, id).style.background)).toEqual(before);
    });
    expect(el.querySelector(".sw-mesh")!.classList.contains("sw-dimming")).toBe(false);
  });
});

describe("the transfer's estimate", () => {
  it("a bar per part, the total and the HBM line; the dropdown writes `hardware`", async () => {
    const { el, model } = draw(resharded);
    await settle();
    const est = T.estimate!;
    const bars = el.querySelectorAll<HTMLElement>(".sw-xfer .sw-est-row:not(.sw-est-axisrow)");
    expect(bars.length).toBe(est.parts.length);
    est.parts.forEach((p, i) => {
      expect(bars[i].textContent).toContain(p.label);
      expect(bars[i].textContent).toContain(formatSeconds(p.seconds));
      expect(bars[i].title).toContain(p.formula);
    });
    const text = el.querySelector(".sw-xfer")!.textContent!;
    expect(text).toContain(`total ${formatSeconds(est.total_s)}`);
    expect(text).toContain(est.fits_text);
    const sel = el.querySelector<HTMLSelectElement>('select[data-key="transfer-hardware"]')!;
    expect([...sel.options].map((o) => o.value)).toEqual(resharded._hardware_presets!.map((p) => p.name));
    expect(sel.value).toBe(resharded.hardware);
    const h100 = resharded._hardware_presets!.find((p) => p.name === "h100")!;
    expect([...sel.options].find((o) => o.value === "h100")!.title).toContain(h100.source);
    sel.value = "h100";
    sel.dispatchEvent(new Event("change"));
    expect(model.get("hardware")).toBe("h100");
    expect(model.saves).toBeGreaterThan(0);
    await settle();
    // Until the kernel answers, the old estimate is shown as such.
    expect(el.querySelector(".sw-xfer")!.textContent).toContain("estimating for h100");
  });
});

/** Equal within 1e-6 of `scale` (the wire rounds seconds to 7 digits). */
const near = (a: number, b: number, scale = Math.abs(b)) =>
  expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-6 * scale);

describe("the time axis", () => {
  const est = (gen.function8 as { _estimate: EstimateWire })._estimate;
  it("compute and memory from 0; the collectives one after another, ending at the total", () => {
    const { bars, end } = timeline(est);
    expect(end).toBeCloseTo(est.total_s, 15);
    const serial = bars.filter((b) => b.part.kind === "collective");
    expect(serial.length).toBeGreaterThan(0);
    for (const b of bars.filter((b) => b.part.kind !== "collective")) expect(b.start).toBe(0);
    for (let i = 1; i < serial.length; i++)
      expect(serial[i].start).toBeCloseTo(serial[i - 1].start + serial[i - 1].seconds, 18);
    const last = serial[serial.length - 1];
    near(last.start + last.seconds, est.total_s);
    // The rule as the wire states it: max(compute, memory) + sum of collectives.
    const cm = Math.max(...bars.filter((b) => b.part.kind !== "collective").map((b) => b.seconds));
    near(serial[0].start, cm, est.total_s);
  });

  it("ticks are round steps within the axis; seconds read as Python writes them", () => {
    expect(ticks(2.264e-9).map((t) => formatSeconds(t))).toEqual(["0 s", "1 ns", "2 ns"]);
    expect(ticks(0)).toEqual([0]);
    expect(formatSeconds(3.8123e-8)).toBe("38.1 ns");
    expect(formatSeconds(0.00456)).toBe("4.56 ms");
    expect(formatSeconds(1.2)).toBe("1.2 s");
    expect(formatSeconds(1.23e-5)).toBe("12.3 µs");
    expect(formatSeconds(3.49e-13)).toBe("0.349 ps"); // not "0.000349 ns"
    expect(formatSeconds(1.39e-10)).toBe("139 ps");
    expect(formatSeconds(5.56e-9)).toBe("5.56 ns");
  });
});


describe("group colours", () => {
  it("distinct for every group, up to 64 groups", () => {
    for (const n of [2, 4, 8, 12, 16, 64]) {
      const cs = Array.from({ length: n }, (_, g) => groupColor(g, n));
      expect(new Set(cs).size).toBe(n);
    }
  });

  it("a permute's device in two pairs keeps its first pair's colour; its title names both", () => {
    const p = groupPaint([[4, 2], [2, 4]], true);
    expect(p.colors.get(2)).toBe(p.colors.get(4));
    expect(p.titles.get(2)).toBe("pair 1 of 2: 4 → 2\npair 2 of 2: 2 → 4");
  });
});
