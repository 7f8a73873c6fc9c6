import { afterEach, describe, expect, it, vi } from "vitest";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";
import { CSS } from "../../shared/styles";

afterEach(() => {
  unmountAll();
  vi.useRealTimers();
});

const blocks = (el: HTMLElement) => [...el.querySelectorAll<HTMLElement>(".sw-grid .sw-block")];

describe("interaction", () => {
  it("hovering a block highlights its devices, hovering a device its block", () => {
    const { el } = mount(fx.fxPartial()); // 2 blocks, 4 holders each
    const bs = blocks(el);
    expect(bs.length).toBe(2);
    bs[1].dispatchEvent(new MouseEvent("mouseenter"));
    const hl = [...el.querySelectorAll<HTMLElement>(".sw-dev.sw-hl")].map((c) => c.dataset.device);
    expect(hl.sort()).toEqual(["4", "5", "6", "7"]);
    bs[1].dispatchEvent(new MouseEvent("mouseleave"));
    expect(el.querySelectorAll(".sw-dev.sw-hl").length).toBe(0);
    el.querySelector<HTMLElement>('.sw-dev[data-device="2"]')!.dispatchEvent(new MouseEvent("mouseenter"));
    expect(blocks(el).filter((b) => b.classList.contains("sw-hl")).map((b) => b.dataset.block)).toEqual(["0"]);
  });

  it("stripes up to 8 holders and adds a ×N badge beyond", () => {
    const { el } = mount(fx.fxReplicated(16));
    const [b] = blocks(el);
    expect(b.style.background).toContain("repeating-linear-gradient");
    expect(el.querySelector(".sw-badge")!.textContent).toBe("×16");
    b.dispatchEvent(new MouseEvent("mouseenter")); // the tooltip is made on first hover
    expect(b.title).toContain("devices 0, 1, 2");
  });

  it("finds a device: its block and its cell are marked", () => {
    const { el } = mount(fx.fx8());
    const input = el.querySelector<HTMLInputElement>(".sw-find input")!;
    input.value = "6";
    input.dispatchEvent(new Event("input"));
    expect(el.querySelector<HTMLElement>(".sw-block.sw-found")!.dataset.block).toBe(
      String(fx.fx8().layout.blocks.findIndex((b) => b.d.includes(6))),
    );
    expect(el.querySelector<HTMLElement>(".sw-dev.sw-found")!.dataset.device).toBe("6");
    input.value = "99";
    input.dispatchEvent(new Event("input"));
    expect(el.querySelector(".sw-block.sw-found")).toBeNull();
    expect(input.getAttribute("aria-invalid")).toBe("true");
  });

  it("Escape and the close button unpin; clicking the same block again unpins", () => {
    const { el } = mount(fx.fx8());
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    blocks(el)[2].click();
    expect(detail.hidden).toBe(false);
    blocks(el)[2].click();
    expect(detail.hidden).toBe(true);
    blocks(el)[3].click();
    detail.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(detail.hidden).toBe(true);
    blocks(el)[3].click();
    detail.querySelector<HTMLButtonElement>(".sw-close")!.click();
    expect(detail.hidden).toBe(true);
  });

  it("pins a device from the mesh pane and shows remote devices as not addressable", () => {
    const { el } = mount(fx.fx3axis()); // 2 processes
    el.querySelector<HTMLElement>('.sw-dev[data-device="7"]')!.click();
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.textContent).toContain("Device 7");
    expect(detail.textContent).toContain("not addressable (process 1)");
    expect(el.querySelector(".sw-disabled-note")!.textContent).toContain("several processes");
  });

  it("shows values of small blocks, complex as a+bj", () => {
    const { el } = mount(fx.fx3axis());
    blocks(el)[0].click();
    const cells = [...el.querySelectorAll(".sw-values td")].map((t) => t.textContent!);
    expect(cells.length).toBeGreaterThan(0);
    expect(cells[0]).toMatch(/^-?[\d.e+-]+[+-][\d.e+-]+j$/);
  });

  it("single-device arrays list the device with the holder highlighted", () => {
    const { el } = mount(fx.fxSingle());
    expect(el.querySelectorAll(".sw-dev").length).toBe(1);
    expect(el.querySelector(".sw-dev.sw-holder")).not.toBeNull();
    expect(el.querySelector(".sw-note")!.textContent).toContain("CpuDevice");
    expect(el.querySelector<HTMLButtonElement>('[data-key="reset"]')!.disabled).toBe(true);
  });

  it("the devices choice offers the array's own devices and all; choosing asks for that set", async () => {
    vi.useFakeTimers();
    const f = fx.fx8();
    // an array on 2 of the 8 devices (a sub-mesh): its own set, its own mesh shapes
    f.options = { ...f.options, own_devices: [2, 3], own_factorizations: { "1": [[2]], "2": [[1, 2], [2, 1]] } };
    f.state = { ...f.state, mesh_shape: [2], axis_names: ["x"], axis_types: ["auto"], spec: ["x", null], devices: "array" };
    const { model, el } = mount(f);
    const sel = el.querySelector<HTMLSelectElement>('select[data-key="devices"]')!;
    expect([...sel.options].map((o) => o.textContent)).toEqual(["the array's 2 devices (2,3)", "all 8 devices"]);
    expect(sel.value).toBe("array");
    const shapes = [...el.querySelector<HTMLSelectElement>('select[data-key="shape"]')!.options].map((o) => o.value);
    expect(shapes).toEqual(["2"]);
    expect(el.querySelector("legend")!.textContent).toBe("Re-lay out onto: mesh");
    sel.value = "all";
    sel.dispatchEvent(new Event("change"));
    await vi.advanceTimersByTimeAsync(50);
    expect(model.sent.length).toBe(1);
    expect(model.sent[0].state.devices).toBe("all");
    expect(model.sent[0].state.mesh_shape).toEqual([8]);
    vi.useRealTimers();
  });

  it("controls show the pending state, then snap back after a failed result", async () => {
    vi.useFakeTimers();
    const { model, el } = mount(fx.fx8());
    const sel = el.querySelector<HTMLSelectElement>('select[data-key="spec-1"]')!;
    sel.value = "";
    sel.dispatchEvent(new Event("change"));
    await vi.advanceTimersByTimeAsync(50);
    expect(model.sent.length).toBe(1);
    expect(el.querySelector<HTMLSelectElement>('select[data-key="spec-1"]')!.value).toBe("");
    model.set("error", "cannot do that");
    model.emitCustom({ type: "result", seq: model.sent[0].seq, ok: false, error: "cannot do that" });
    await vi.advanceTimersByTimeAsync(1);
    expect(el.querySelector<HTMLSelectElement>('select[data-key="spec-1"]')!.value).toBe("y");
    expect(el.querySelector(".sw-error")!.textContent).toBe("cannot do that");
    expect(blocks(el).length).toBe(8);
  });

  it("statistics arriving do not rebuild the controls", async () => {
    const f = fx.fx8();
    const { model, el } = mount(f, { _stats: { ...f.stats, status: "pending", key: 0 } });
    expect(el.querySelector(".sw-hint")!.textContent).toBe("statistics pending…");
    const form = el.querySelector("form.sw-controls")!;
    const before = form.firstElementChild;
    model.set("_stats", f.stats);
    await flush();
    expect(form.firstElementChild).toBe(before);
    expect(el.querySelector<HTMLElement>(".sw-hint")!.hidden).toBe(true);
    expect(el.querySelectorAll(".sw-block.sw-has-thumb").length).toBe(8);
  });

  it("view dims dropdowns set view_dims on the model", () => {
    const { model, el } = mount(fx.fx3d());
    const rows = el.querySelector<HTMLSelectElement>('select[data-key="view-rows"]')!;
    rows.value = "0";
    rows.dispatchEvent(new Event("change"));
    expect(model.get("view_dims")).toEqual([0, 2]);
    expect(model.saves).toBe(1);
  });

  it("uses one canvas with hit-testing above 256 blocks", () => {
    const { el } = mount(fx.fx4096());
    expect(el.querySelectorAll(".sw-block").length).toBe(0);
    expect(el.querySelectorAll("canvas.sw-canvas").length).toBe(1);
  });
});

describe("styles", () => {
  it("scopes every rule under .shardwidget", () => {
    const body = CSS.replace(/\/\*[\s\S]*?\*\//g, "").replace(/@keyframes[^{]*\{([^{}]*\{[^{}]*\})*[^{}]*\}/g, "");
    const selectors = [...body.matchAll(/([^{}]+)\{[^{}]*\}/g)].map((m) => m[1].trim());
    expect(selectors.length).toBeGreaterThan(50);
    for (const sel of selectors)
      for (const part of sel.split(",")) expect(part.trim().startsWith(".shardwidget")).toBe(true);
  });
});
