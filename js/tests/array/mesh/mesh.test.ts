import { afterEach, describe, expect, it } from "vitest";
import { flush, mount, unmountAll } from "../../testing";
import * as fx from "../../fixtures";
import { chipCells, chipSplit, physicalLayout, physicalSizing } from "../../../array/mesh/geometry";

afterEach(() => unmountAll());

const q = <T extends Element = HTMLElement>(el: Element, sel: string) => el.querySelector<T & HTMLElement>(sel)!;
const qa = (el: Element, sel: string) => [...el.querySelectorAll<HTMLElement>(sel)];
const dev = (el: Element, id: number) => q(el, `.sw-mesh .sw-dev[data-device="${id}"]`);
const gridBlocks = (el: Element) => qa(el, ".sw-grid .sw-block");

function showPhysical(el: HTMLElement): void {
  q<HTMLButtonElement>(el, '[data-key="mesh-view-physical"]').click();
}

/** Where a device cell sits in the physical view: panel label, chip column / row (from the chip
 *  cell's position among its panel's chip cells, row-major), and sub-cell. */
function placeOf(el: HTMLElement, id: number) {
  const cell = dev(el, id);
  const chip = cell.closest<HTMLElement>(".sw-chipcell")!;
  const panel = chip.closest<HTMLElement>(".sw-phys-panel")!;
  const grid = chip.parentElement!;
  const chips = [...grid.children].filter((c) => c.classList.contains("sw-chipcell"));
  const cols = grid.style.gridTemplateColumns.match(/repeat\((\d+),/)![1];
  const k = chips.indexOf(chip);
  return {
    panel: panel.dataset.panel,
    x: k % Number(cols),
    y: Math.floor(k / Number(cols)),
    sub: [...chip.children].indexOf(cell),
  };
}

describe("physical layout (pure)", () => {
  it("draws a gpu_mesh's GPUs one row per host, a panel per slice", () => {
    // 2 slices × 2 hosts × 4 GPUs: coords (GPU on its host, host in its slice, slice)
    const n = 16;
    const devices = {
      ids: [...Array(n).keys()],
      process: [...Array(n).keys()].map((i) => Math.floor(i / 4)),
      platform: "gpu",
      kind: "NVIDIA H100 80GB HBM3",
      coords: [...Array(n).keys()].map((i) => [i % 4, Math.floor(i / 4) % 2, Math.floor(i / 8)]),
      core_on_chip: null,
      local_process: 0,
    };
    const p = physicalLayout(devices)!;
    expect(p).toMatchObject({ cols: 4, rows: 2, perChip: 1, panels: ["slice=0", "slice=1"], gpu: true });
    expect(p.places[6]).toMatchObject({ col: 2, row: 1, panel: 0 });
  });

  it("puts each device of a 2x2x2 x 2-core slice at its coords, cores side by side", () => {
    const f = fx.fxTpuV4();
    const p = physicalLayout(f.layout.devices)!;
    expect(p).toMatchObject({ cols: 2, rows: 2, perChip: 2, panels: ["z=0", "z=1"] });
    for (const pl of p.places) {
      const i = f.layout.devices.ids.indexOf(pl.id);
      const [x, y, z] = f.layout.devices.coords![i];
      expect([pl.col, pl.row, pl.panel, pl.sub]).toEqual([x, y, z, f.layout.devices.core_on_chip![i]]);
    }
    expect(new Set(p.places.map((pl) => `${pl.panel}:${pl.col}:${pl.row}:${pl.sub}`)).size).toBe(16);
  });

  it("offsets coords that do not start at 0 and splits chips with more devices into a grid", () => {
    const devices = {
      ids: [10, 11, 12, 13],
      process: [0, 0, 0, 0],
      platform: "tpu",
      kind: "TPU",
      coords: [[2, 5, 0], [2, 5, 0], [3, 5, 0], [3, 5, 0]],
      core_on_chip: [1, 0, 0, 1],
      local_process: 0,
    };
    const p = physicalLayout(devices)!;
    expect(p).toMatchObject({ cols: 2, rows: 1, x0: 2, y0: 5, perChip: 2, panels: ["z=0"] });
    expect(p.places.map((pl) => [pl.id, pl.col, pl.sub])).toEqual([[10, 0, 1], [11, 0, 0], [12, 1, 0], [13, 1, 1]]);
    expect(chipSplit(1)).toEqual([1, 1]);
    expect(chipSplit(2)).toEqual([2, 1]);
    expect(chipSplit(4)).toEqual([2, 2]);
    expect(physicalLayout({ ...devices, coords: null })).toBeNull();
  });

  it("fits panels into the pane: more panels per row when there is room, readable chips", () => {
    const p = physicalLayout(fx.fx256().layout.devices)!; // 4x4 chips x 2 cores, 8 z panels
    expect(p.panels.length).toBe(8);
    for (const w of [240, 320, 460]) {
      const { perRow, chip } = physicalSizing(p, w);
      expect(chip).toBeGreaterThanOrEqual(4);
      expect(perRow * (p.cols * (chip + 3) + 30)).toBeLessThanOrEqual(w); // fits across
      expect(Math.ceil(8 / perRow) * (p.rows * (chip + 3) + 30)).toBeLessThanOrEqual(520); // not too tall
    }
    // a small slice gets big chips, its z panels side by side, and ids that fit
    const v4 = physicalLayout(fx.fxTpuV4().layout.devices)!;
    const s = physicalSizing(v4, 400);
    expect(s.perRow).toBe(2);
    expect(s.chip).toBeGreaterThanOrEqual(40);
    expect(chipCells(s.chip, 2, 15)).toMatchObject({ cols: 2 });
    // 3-digit ids on narrow chips: cores stacked so the id fits, else side by side
    expect(chipCells(30, 2, 255)).toMatchObject({ cols: 1, w: 26, h: 12 });
    expect(chipCells(20, 2, 255).cols).toBe(2);
    // sub-cells stay inside the chip's frame (1 px border + 1 px padding, 1 px gaps; none < 12 px)
    for (const chip of [4, 6, 11, 12, 20, 33, 56])
      for (const per of [1, 2, 4]) {
        const c = chipCells(chip, per, 4095);
        const inner = chip >= 12 ? chip - 4 : chip;
        const gap = chip >= 12 ? 1 : 0;
        expect(c.cols * c.w + (c.cols - 1) * gap).toBeLessThanOrEqual(inner);
      }
  });

  it("never lays a big topology out wider than the pane", () => {
    const devices = fx.namedFixture({
      shape: [64, 64],
      meshShape: [64, 64],
      spec: [null, null],
      stats: "pending",
      topology: { chips: [16, 16, 8], cores: 2 },
    }).layout.devices;
    const p = physicalLayout(devices)!;
    expect(p).toMatchObject({ cols: 16, rows: 16, perChip: 2 });
    for (const w of [240, 300, 420]) {
      const { perRow, chip } = physicalSizing(p, w);
      expect(perRow * (p.cols * (chip + 3) + 30)).toBeLessThanOrEqual(Math.max(w, 140 + 30 + 16 * 7));
    }
  });
});

describe("physical view in the mesh pane", () => {
  it("is offered only when devices have coords", () => {
    const a = mount(fx.fx8()).el;
    expect(a.querySelector('[data-key="mesh-view-physical"]')).toBeNull();
    const b = mount(fx.fxTpuV4()).el;
    const btn = q<HTMLButtonElement>(b, '[data-key="mesh-view-physical"]');
    expect(btn.tagName).toBe("BUTTON"); // keyboard: a real button
    expect(btn.getAttribute("aria-pressed")).toBe("false");
    expect(q(b, '[data-key="mesh-view-mesh"]').getAttribute("aria-pressed")).toBe("true");
    expect(q(b, ".sw-seg").getAttribute("role")).toBe("group");
  });

  it("places every device of a TPU v4-like 2x2x2 x 2 slice at its coords, coloured like the device", () => {
    const f = fx.fxTpuV4();
    const { el } = mount(f);
    const meshColors = new Map(qa(el, ".sw-mesh .sw-dev").map((d) => [d.dataset.device, d.style.background]));
    expect(meshColors.size).toBe(16);
    showPhysical(el);
    expect(q(el, '[data-key="mesh-view-physical"]').getAttribute("aria-pressed")).toBe("true");
    expect(qa(el, ".sw-phys-panel").map((p) => p.querySelector(".sw-mesh-panel-title")!.textContent)).toEqual(["z=0", "z=1"]);
    expect(qa(el, ".sw-mesh .sw-dev").length).toBe(16);
    f.layout.devices.ids.forEach((id, i) => {
      const [x, y, z] = f.layout.devices.coords![i];
      expect(placeOf(el, id)).toEqual({ panel: `z=${z}`, x, y, sub: f.layout.devices.core_on_chip![i] });
      expect(dev(el, id).closest<HTMLElement>(".sw-chipcell")!.dataset.coords).toBe(`${x},${y},${z}`);
      // coloured like the device: the same colour as its cell in the mesh view
      expect(dev(el, id).style.background).toBe(meshColors.get(String(id)));
    });
    expect(new Set(meshColors.values()).size).toBe(16);
  });

  it("lays out a v5e-like 4x4 slice by coords, not by mesh order", () => {
    const f = fx.fxTpuV5e(); // mesh order 0,1,4,5,8,9,...
    const { el } = mount(f);
    // mesh view: second cell in mesh order is device 1, third is device 4
    expect(qa(el, ".sw-mesh .sw-dev").slice(0, 3).map((d) => d.dataset.device)).toEqual(["0", "1", "4"]);
    showPhysical(el);
    for (let id = 0; id < 16; id++) expect(placeOf(el, id)).toEqual({ panel: "z=0", x: id % 4, y: Math.floor(id / 4), sub: 0 });
    expect(qa(el, ".sw-mesh .sw-dev").slice(0, 3).map((d) => d.dataset.device)).toEqual(["0", "1", "2"]);
  });

  it("links hover both ways between the physical view and the grid", () => {
    const f = fx.fxTpuV4();
    const { el } = mount(f);
    showPhysical(el);
    const k = f.layout.blocks.findIndex((b) => b.d.includes(9));
    dev(el, 9).dispatchEvent(new MouseEvent("mouseenter"));
    expect(gridBlocks(el).filter((b) => b.classList.contains("sw-hl")).map((b) => b.dataset.block)).toEqual([String(k)]);
    expect(q(el, ".sw-mesh").classList.contains("sw-dimming")).toBe(true);
    expect(dev(el, 9).title).toContain("coords (0,0,1) core 1");
    expect(dev(el, 9).title).toContain(`block ${k}`);
    dev(el, 9).dispatchEvent(new MouseEvent("mouseleave"));
    expect(qa(el, ".sw-grid .sw-block.sw-hl").length).toBe(0);
    gridBlocks(el)[3].dispatchEvent(new MouseEvent("mouseenter"));
    const holders = f.layout.blocks[Number(gridBlocks(el)[3].dataset.block)].d.map(String);
    expect(qa(el, ".sw-phys .sw-dev.sw-hl").map((d) => d.dataset.device)).toEqual(holders);
    gridBlocks(el)[3].dispatchEvent(new MouseEvent("mouseleave"));
    dev(el, 2).click();
    expect(q(el, ".sw-detail").textContent).toContain("Device 2");
    expect(dev(el, 2).classList.contains("sw-pinned")).toBe(true);
  });

  it("reaches device cells from the keyboard: focus lights the block, Enter pins the device", () => {
    const f = fx.fxTpuV4();
    const { el } = mount(f);
    showPhysical(el);
    const c = dev(el, 12);
    expect(c.tabIndex).toBe(0);
    expect(c.getAttribute("role")).toBe("button");
    c.dispatchEvent(new FocusEvent("focus"));
    const k = f.layout.blocks.findIndex((b) => b.d.includes(12));
    expect(gridBlocks(el).filter((b) => b.classList.contains("sw-hl")).map((b) => b.dataset.block)).toEqual([String(k)]);
    c.dispatchEvent(new FocusEvent("blur"));
    expect(qa(el, ".sw-grid .sw-block.sw-hl").length).toBe(0);
    c.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(q(el, ".sw-detail").hidden).toBe(false);
    expect(q(el, ".sw-detail").textContent).toContain("Device 12");
  });

  it("keeps the physical view and the highlights across a re-layout and when switching back", async () => {
    const f = fx.fxTpuV4();
    const { el, model } = mount(f);
    showPhysical(el);
    const g = fx.namedFixture({
      shape: [16, 16],
      meshShape: [4, 4],
      axisNames: ["data", "model"],
      spec: ["model", null],
      platform: "tpu",
      topology: { chips: [2, 2, 2], cores: 2 },
      key: 2,
    });
    model.set("_layout", g.layout);
    await flush();
    expect(el.querySelector(".sw-phys")).not.toBeNull();
    const input = q<HTMLInputElement>(el, ".sw-find input");
    input.value = "6";
    input.dispatchEvent(new Event("input"));
    expect(dev(el, 6).classList.contains("sw-found")).toBe(true);
    q<HTMLButtonElement>(el, '[data-key="mesh-view-mesh"]').click();
    expect(el.querySelector(".sw-phys")).toBeNull();
    expect(dev(el, 6).classList.contains("sw-found")).toBe(true); // re-applied to the new cells
    expect(document.activeElement).toBe(q(el, '[data-key="mesh-view-mesh"]'));
  });
});

describe("colour key", () => {
  it("appears beyond 16 devices, explains the colours and marks a found device's colour", () => {
    expect(mount(fx.fx8()).el.querySelector(".sw-legend")).toBeNull();
    const { el } = mount(fx.fx256());
    const lg = q(el, ".sw-legend");
    expect(lg.textContent).toContain("Hue: 8 bands of 32 ids");
    expect(lg.textContent).toContain("id mod 8");
    expect(qa(lg, ".sw-legend-swatch").length).toBe(64);
    expect(qa(lg, ".sw-legend-band").map((b) => b.textContent)).toContain("224–255");
    const input = q<HTMLInputElement>(el, ".sw-find input");
    input.value = "75";
    input.dispatchEvent(new Event("input"));
    const marked = qa(lg, ".sw-legend-swatch.sw-found");
    expect(marked.map((s) => [s.dataset.band, s.dataset.step])).toEqual([["2", "3"]]);
    expect(marked[0].style.background).toBe(dev(el, 75).style.background);
    // A swatch says which ids wear it when the pointer reaches it.
    expect(marked[0].title).toBe("");
    marked[0].dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    expect(marked[0].title).toBe("ids 64–95 with id mod 8 = 3");
  });
});

describe("a TPU plan across slices (shardwidget.tpu_mesh, num_slices=2)", () => {
  it("draws one panel per z and slice, the slice named", () => {
    // 2 slices of 2x2 chips: coords (x, y, z, slice), as model/layout.planned_devices sends them
    const coords = [0, 1].flatMap((s) => [[0, 0, 0, s], [1, 0, 0, s], [0, 1, 0, s], [1, 1, 0, s]]);
    const devices = {
      ids: coords.map((_, i) => i),
      process: coords.map(() => 0),
      platform: "tpu",
      kind: "TPU v5 lite",
      coords,
      core_on_chip: coords.map(() => 0),
      local_process: 0,
    };
    const p = physicalLayout(devices)!;
    expect(p.panels).toEqual(["z=0, slice=0", "z=0, slice=1"]);
    expect(p.cols).toBe(2);
    expect(p.rows).toBe(2);
    expect(p.places.filter((q) => q.panel === 1).map((q) => q.id)).toEqual([4, 5, 6, 7]);
  });
});

describe("a gpu_mesh plan's machine in the mesh pane", () => {
  /** 4 hosts × 2 GPUs, mesh (dp=2, fsdp=4); NVLink domains of 2 hosts (as a GB200 rack's 18):
   *  dp crosses domains (the network), fsdp stays in one (NVLink across hosts). */
  function gpuFixture(): fx.Fixture {
    const f = fx.namedFixture({
      shape: [8, 8],
      meshShape: [2, 4],
      axisNames: ["dp", "fsdp"],
      spec: ["dp", "fsdp"],
      platform: "gpu",
      kind: "NVIDIA GB200",
    });
    const ids = f.layout.devices.ids;
    f.layout.devices.coords = ids.map((i) => [i % 2, Math.floor(i / 2)]);
    f.layout.devices.process = ids.map((i) => Math.floor(i / 2));
    f.layout.mesh!.axis_links = [
      "network (InfiniBand / Ethernet, across hosts)",
      "NVLink (one NVLink domain of 4 GPUs, across hosts)",
    ];
    f.layout.mesh!.domain_hosts = 2;
    return f;
  }

  it("says what each axis travels over, marking the axes that cross the network, in both drawings", () => {
    const { el } = mount(gpuFixture());
    const lines = () => qa(el, ".sw-mesh-links .sw-mesh-link").map((r) => [r.dataset.axis, r.textContent, r.classList.contains("sw-link-network")]);
    const want = [
      ["dp", "⇄ dp=2: network (InfiniBand / Ethernet, across hosts)", true],
      ["fsdp", "fsdp=4: NVLink (one NVLink domain of 4 GPUs, across hosts)", false],
    ];
    expect(lines()).toEqual(want);
    showPhysical(el);
    expect(lines()).toEqual(want);
  });

  it("draws a row per host under each NVLink domain's heading", () => {
    const { el } = mount(gpuFixture());
    showPhysical(el);
    expect(q(el, ".sw-pane-title").textContent).toBe("Physical: 8 GPUs on 4 hosts");
    expect(qa(el, ".sw-phys-domain").map((d) => d.textContent)).toEqual([
      "NVLink domain 0: hosts 0–1",
      "NVLink domain 1: hosts 2–3",
    ]);
    for (const id of [0, 1, 2, 3, 4, 5, 6, 7]) expect(placeOf(el, id)).toMatchObject({ x: id % 2, y: Math.floor(id / 2) });
  });

  it("says nothing of links where the mesh does not (a CPU mesh)", () => {
    const { el } = mount(fx.fx8());
    expect(el.querySelector(".sw-mesh-links")).toBeNull();
  });
});
