import { afterEach, describe, expect, it } from "vitest";
import { CUSTOM, EMPTY, isEmpty, matchDevices, parseDeviceQuery, statsHint } from "../../array/header";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";

afterEach(() => unmountAll());

describe("find box: parsing", () => {
  it("reads ids, ranges and lists", () => {
    expect(parseDeviceQuery("")).toBeNull();
    expect(parseDeviceQuery("   ")).toBeNull();
    expect(parseDeviceQuery("1234")).toEqual({ ranges: [[1234, 1234]], single: true });
    expect(parseDeviceQuery(" 12-15 ")).toEqual({ ranges: [[12, 15]], single: false });
    expect(parseDeviceQuery("12–15")).toEqual({ ranges: [[12, 15]], single: false });
    expect(parseDeviceQuery("12..15")).toEqual({ ranges: [[12, 15]], single: false });
    expect(parseDeviceQuery("15-12")).toEqual({ ranges: [[12, 15]], single: false });
    expect(parseDeviceQuery("3,7,9")).toEqual({ ranges: [[3, 3], [7, 7], [9, 9]], single: false });
    expect(parseDeviceQuery("0-3, 8 10")).toEqual({ ranges: [[0, 3], [8, 8], [10, 10]], single: false });
    expect(parseDeviceQuery("3,")).toEqual({ ranges: [[3, 3]], single: true });
  });

  it("explains what it cannot read", () => {
    expect(parseDeviceQuery("abc")).toHaveProperty("error");
    expect(parseDeviceQuery("-3")).toHaveProperty("error");
    expect((parseDeviceQuery("12-") as { error: string }).error).toContain("needs an end");
    expect(parseDeviceQuery("1.5")).toHaveProperty("error");
  });

  it("matches only known devices, without enumerating huge ranges", () => {
    expect(matchDevices([[2, 5]], [0, 1, 2, 3, 9, 4])).toEqual([2, 3, 4]);
    expect(matchDevices([[0, 999_999_999]], [7, 3, 3])).toEqual([3, 7]);
    expect(matchDevices([[9, 9]], [0, 1])).toEqual([]);
  });
});

describe("find box: highlighting", () => {
  const type = (el: HTMLElement, text: string) => {
    const input = el.querySelector<HTMLInputElement>(".sw-find input")!;
    input.value = text;
    input.dispatchEvent(new Event("input"));
    return input;
  };
  const found = (el: HTMLElement, sel: string, key: string) =>
    [...el.querySelectorAll<HTMLElement>(`${sel}.sw-found`)].map((e) => e.dataset[key]).sort((a, b) => Number(a) - Number(b));

  it("is labelled and says what it accepts", () => {
    const { el } = mount(fx.fx8());
    const input = el.querySelector<HTMLInputElement>(".sw-find input")!;
    expect(input.closest("label")!.textContent).toContain("find device");
    expect(input.title).toMatch(/a range 0-3, or a list 0,7/); // the layout's own ids (0–7)
    const msg = el.querySelector<HTMLElement>(`#${input.getAttribute("aria-describedby")}`)!;
    expect(msg.getAttribute("aria-live")).toBe("polite");
  });

  it("lights up a range in the grid and the mesh, dims the rest, counts the blocks", () => {
    const f = fx.fx256();
    const { el } = mount(f);
    type(el, "12-15");
    expect(found(el, ".sw-mesh .sw-dev", "device")).toEqual(["12", "13", "14", "15"]);
    const want = f.layout.blocks.flatMap((b, k) => (b.d.some((id) => id >= 12 && id <= 15) ? [String(k)] : []));
    expect(found(el, ".sw-grid .sw-block", "block")).toEqual(want);
    expect(el.querySelector(".sw-grid")!.classList.contains("sw-dimming")).toBe(true);
    expect(el.querySelector(".sw-mesh")!.classList.contains("sw-dimming")).toBe(true);
    expect(el.querySelector(".sw-find-msg")!.textContent).toBe("4 devices · 4 blocks");
  });

  it("takes lists, says which ids are missing, and counts replicated blocks once", () => {
    const { el } = mount(fx.fxPartial()); // 2 blocks of 4 holders: 0-3 and 4-7
    type(el, "3,7,9");
    expect(found(el, ".sw-mesh .sw-dev", "device")).toEqual(["3", "7"]);
    expect(found(el, ".sw-grid .sw-block", "block")).toEqual(["0", "1"]);
    expect(el.querySelector(".sw-find-msg")!.textContent).toBe("2 devices · 2 blocks · no device 9");
    type(el, "0-3");
    expect(el.querySelector(".sw-find-msg")!.textContent).toBe("4 devices · 1 block");
  });

  it("Escape clears the search (and only the search); a second Escape unpins", () => {
    const { el } = mount(fx.fx8());
    el.querySelector<HTMLElement>(".sw-grid .sw-block")!.click();
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.hidden).toBe(false);
    const input = type(el, "5");
    expect(el.querySelectorAll(".sw-found").length).toBe(2); // a block and a device cell
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(input.value).toBe("");
    expect(el.querySelectorAll(".sw-found").length).toBe(0);
    expect(el.querySelector(".sw-grid")!.classList.contains("sw-dimming")).toBe(false);
    expect(el.querySelector(".sw-find-msg")!.textContent).toBe("");
    expect(detail.hidden).toBe(false);
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(detail.hidden).toBe(true);
  });

  it("marks bad input and unknown ids as invalid", () => {
    const { el } = mount(fx.fx8());
    const input = type(el, "x1");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(el.querySelector(".sw-find-msg")!.classList.contains("sw-invalid")).toBe(true);
    type(el, "99");
    expect(el.querySelector(".sw-find-msg")!.textContent).toBe("no device 99");
    expect(el.querySelectorAll(".sw-found").length).toBe(0);
    type(el, "2");
    expect(input.hasAttribute("aria-invalid")).toBe(false);
  });

  it("follows a new layout: the found device's new block is marked", async () => {
    const { el, model } = mount(fx.fx8());
    type(el, "5");
    const g = fx.namedFixture({ shape: [8, 16], meshShape: [2, 4], spec: ["x", null], key: 2 });
    model.set("_layout", g.layout);
    model.set("_stats", g.stats);
    await new Promise((r) => setTimeout(r, 0));
    expect(found(el, ".sw-grid .sw-block", "block")).toEqual(["1"]);
    expect(el.querySelector(".sw-find-msg")!.textContent).toBe("device 5 at x=1, y=1 · 1 block");
  });
});

describe("busy indicator", () => {
  it("shows a styled spinner while the kernel works, and hides it after", async () => {
    const { el, model } = mount(fx.fx8());
    const busy = el.querySelector<HTMLElement>(".sw-busy")!;
    expect(busy.hidden).toBe(true);
    model.set("busy", true);
    await flush();
    expect(busy.hidden).toBe(false);
    expect(busy.textContent).toContain("working");
    // the spinner's class is one the injected stylesheet draws (an unstyled span shows nothing)
    const spinner = busy.querySelector<HTMLElement>("[aria-hidden=true]")!;
    const css = [...document.querySelectorAll("style")].map((s) => s.textContent).join("\n");
    for (const cls of spinner.classList) expect(css).toContain(`.${cls} {`);
    expect(css).toMatch(/animation: shardwidget-spin/);
    model.set("busy", false);
    await flush();
    expect(busy.hidden).toBe(true);
  });
});

describe("empty arrays", () => {
  it("say so in the summary line, and only then", () => {
    const f = fx.fx8();
    expect(isEmpty(f.layout)).toBe(false);
    const empty = { ...f.layout, shape: [0, ...f.layout.shape.slice(1)] };
    expect(isEmpty(empty)).toBe(true);
  });
  it("the header names an empty array", async () => {
    const f = fx.fx8();
    f.layout = { ...f.layout, shape: [0, ...f.layout.shape.slice(1)] };
    const { el } = mount(f);
    await flush();
    expect(el.querySelector(".sw-summary")!.textContent).toContain(EMPTY);
  });
  it("says it has no elements once: no statistics hint repeating it", () => {
    const f = fx.fx8();
    const empty = { ...f.layout, shape: [0, ...f.layout.shape.slice(1)] };
    const none = { ...f.stats, status: "unavailable" as const, message: "the array has no elements" };
    expect(statsHint(empty, none)).toBe("");
    expect(statsHint(f.layout, { ...none, key: f.layout.key })).toBe("the array has no elements");
  });
});

describe("the array's own layout in the header", () => {
  it("one device by its id; several devices with no mesh as a custom layout", async () => {
    const one = mount(fx.fxSingle()).el;
    await flush();
    expect(one.querySelector(".sw-summary")!.textContent).toContain("one device: cpu 0");
    const f = fx.fx8();
    f.layout = { ...f.layout, sharding: "GSPMDSharding", mesh: null, spec_str: "" };
    const custom = mount(f).el;
    await flush();
    expect(custom.querySelector(".sw-summary")!.textContent).toContain(`${CUSTOM} · 8 devices`);
  });
  it("a GSPMD layout's mesh is its tile assignment", async () => {
    const f = fx.fx8();
    f.layout = { ...f.layout, sharding: "GSPMDSharding" };
    const el = mount(f).el;
    await flush();
    expect(el.querySelector(".sw-summary")!.textContent).toContain("(its tile assignment)");
  });
});
