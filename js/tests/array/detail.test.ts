import { afterEach, describe, expect, it } from "vitest";
import { mount, unmountAll } from "../testing";
import * as fx from "../fixtures";

afterEach(() => unmountAll());

const rows = (el: HTMLElement) => [...el.querySelectorAll<HTMLTableRowElement>(".sw-detail .sw-devtable tbody tr")];
const cells = (tr: HTMLTableRowElement) => [...tr.cells].map((c) => c.textContent ?? "");
const heads = (el: HTMLElement) => [...el.querySelectorAll(".sw-detail .sw-devtable th")].map((t) => t.textContent);

describe("detail panel: holders", () => {
  it("lists all 64 holders of a 64-way replicated block, with process and memory kind", () => {
    const f = fx.fxReplicated(64);
    const { el } = mount(f);
    el.querySelector<HTMLElement>(".sw-grid .sw-block")!.click();
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.querySelector("h4")!.textContent).toBe("Held by 64 devices");
    expect(detail.querySelector(".sw-holder-ids")!.textContent).toBe("0–63");
    expect(heads(el)).toEqual(["device", "replica", "process", "memory"]);
    const rs = rows(el);
    expect(rs.length).toBe(64);
    rs.forEach((tr, r) => expect(cells(tr)).toEqual([String(r), String(r), "0", "device"]));
    // the list scrolls (never clipped) and the scrolling region is reachable by keyboard
    const wrap = detail.querySelector<HTMLElement>(".sw-holders")!;
    expect(wrap.tabIndex).toBe(0);
    expect(wrap.getAttribute("aria-label")).toContain("64 devices");
  });

  it("gives coords and core per device on TPU-like devices, and the memory kind", () => {
    const f = fx.namedFixture({
      shape: [32],
      meshShape: [64],
      spec: [null],
      platform: "tpu",
      memoryKind: "pinned_host",
      topology: { chips: [4, 4, 2], cores: 2 },
      processes: 2,
    });
    const { el } = mount(f);
    el.querySelector<HTMLElement>(".sw-grid .sw-block")!.click();
    expect(heads(el)).toEqual(["device", "replica", "process", "memory", "coords", "core", ""]);
    const rs = rows(el);
    expect(rs.length).toBe(64);
    const d = f.layout.devices;
    rs.forEach((tr, r) => {
      const id = f.layout.blocks[0].d[r];
      const i = d.ids.indexOf(id);
      const c = cells(tr);
      expect(c.slice(0, 6)).toEqual([String(id), String(r), String(d.process[i]), "pinned_host", `(${d.coords![i].join(",")})`, String(d.core_on_chip![i])]);
      expect(c[6]).toBe(d.process[i] === 0 ? "" : `not addressable (process ${d.process[i]})`);
    });
  });

  it("pinning a device from the mesh marks its row among the holders", () => {
    const { el } = mount(fx.fxPartial());
    el.querySelector<HTMLElement>('.sw-mesh .sw-dev[data-device="6"]')!.click();
    const cur = el.querySelectorAll<HTMLTableRowElement>(".sw-devtable tr.sw-current");
    expect(cur.length).toBe(1);
    expect(cur[0].dataset.device).toBe("6");
    expect(rows(el).map((tr) => tr.dataset.device)).toEqual(["4", "5", "6", "7"]);
  });
});

describe("detail panel: linked hover", () => {
  it("a holder row lights up its device in the mesh and its block in the grid", () => {
    const { el } = mount(fx.fxPartial()); // 2 blocks of 4 holders: 0-3 and 4-7
    el.querySelector<HTMLElement>(".sw-grid .sw-block[data-block='1']")!.click();
    const lit = () => [...el.querySelectorAll<HTMLElement>(".sw-mesh .sw-dev.sw-hl")].map((c) => c.dataset.device);
    const litBlocks = () => [...el.querySelectorAll<HTMLElement>(".sw-grid .sw-block.sw-hl")].map((b) => b.dataset.block);
    const row = rows(el).find((tr) => tr.dataset.device === "6")!;
    row.cells[2].dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    expect(lit()).toEqual(["6"]);
    expect(litBlocks()).toEqual(["1"]);
    el.querySelector(".sw-detail")!.dispatchEvent(new MouseEvent("mouseleave"));
    expect(lit()).toEqual([]);
  });
});
