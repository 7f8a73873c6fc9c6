import { afterEach, describe, expect, it, vi } from "vitest";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";

afterEach(() => {
  unmountAll();
  vi.useRealTimers();
});

const labels = (el: HTMLElement) =>
  [...el.querySelectorAll<HTMLElement>(".sw-grid .sw-block")].map((b) => b.textContent!.trim());

describe("rendering against a fake model", () => {
  it("draws one block per device of an 8-device 2x4 layout, with thumbnails", () => {
    const { el } = mount(fx.fx8());
    expect(el.querySelector(".shardwidget")).not.toBeNull();
    expect(labels(el).sort()).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    expect(el.querySelectorAll(".sw-mesh .sw-dev").length).toBe(8);
    expect(el.querySelectorAll(".sw-block.sw-has-thumb").length).toBe(8);
    expect(el.querySelector(".sw-typeof")!.textContent).toContain("float32[8@x,16@y]");
  });

  it("shows replication as such: every holder, not a clipped list", () => {
    const { el } = mount(fx.fxReplicated(8));
    const blocks = el.querySelectorAll<HTMLElement>(".sw-grid .sw-block");
    expect(blocks.length).toBe(1);
    const b = blocks[0];
    b.dispatchEvent(new MouseEvent("mouseenter")); // the tooltip is made on first hover
    const text = (b.textContent ?? "") + " " + (b.getAttribute("title") ?? "");
    expect(text).toMatch(/×8|0–7/);
    expect(b.getAttribute("title")).toContain("0, 1, 2, 3, 4, 5, 6, 7");
    expect(b.style.background).toContain("gradient"); // stripes of the holders' colours
  });

  it("keeps the last good grid under an error banner", async () => {
    const { el, model } = mount(fx.fx8());
    const before = labels(el);
    model.set("error", "dimension 1 has size 16, which 'q' does not divide");
    await flush();
    const banner = el.querySelector<HTMLElement>(".sw-error")!;
    expect(banner.hidden).toBe(false);
    expect(banner.textContent).toContain("does not divide");
    expect(labels(el)).toEqual(before);
    model.set("error", "");
    await flush();
    expect(banner.hidden).toBe(true);
  });

  it("pins a detail panel on click with ranges, devices and statistics", () => {
    const { el } = mount(fx.fx8());
    const b = el.querySelector<HTMLElement>(".sw-grid .sw-block")!;
    b.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.hidden).toBe(false);
    const t = detail.textContent!;
    expect(t).toMatch(/0:4|\[0:4\)/);
    expect(t).toMatch(/device/i);
    expect(t).toMatch(/min/i);
  });

  it("moves the slider of a 3-D array to another block position", async () => {
    const { el } = mount(fx.fx3d());
    const held = () => labels(el).sort().join();
    expect(held()).toBe("0,1,2,3");
    const s = el.querySelector<HTMLInputElement>("[data-key=slice-0]")!;
    s.value = "5";
    s.dispatchEvent(new Event("input", { bubbles: true }));
    await flush();
    expect(held()).toBe("4,5,6,7");
  });

  it("sends one coalesced request for a burst of control changes", () => {
    vi.useFakeTimers();
    const { el, model } = mount(fx.fxPartial());
    const sel = el.querySelector<HTMLSelectElement>("[data-key=spec-1]")!;
    for (const v of ["y", "", "y"]) {
      sel.value = v;
      sel.dispatchEvent(new Event("change", { bubbles: true }));
    }
    vi.advanceTimersByTime(100);
    expect(model.sent.length).toBe(1);
    expect(model.sent[0].type).toBe("request");
    expect(model.sent[0].state.spec).toEqual(["x", "y"]);
  });

  it("renders 256 and 4096 devices and single-device arrays without throwing", () => {
    for (const f of [fx.fx256(), fx.fx4096(), fx.fxSingle(), fx.fx3axis()]) {
      const { el } = mount(f);
      expect(el.querySelector(".sw-grid, canvas")).not.toBeNull();
    }
  });

  it("removes its listeners on cleanup", () => {
    const { model, dispose } = mount(fx.fx8());
    expect(model.listenerCount()).toBeGreaterThan(0);
    dispose();
    expect(model.listenerCount()).toBe(0);
  });
});
