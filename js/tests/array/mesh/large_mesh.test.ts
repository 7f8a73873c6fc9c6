// Large and elongated meshes (issue 13 items 4-6): the canvas path with a real pixel buffer.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { flush, mount, unmountAll } from "../../testing";
import * as fx from "../../fixtures";
import { pixelSpans } from "../../../array/grid/canvas_layer";
import { bandCaption, condensedScale, meshFit, MESH_MAX_HEIGHT } from "../../../array/mesh/geometry";
import { textWidth } from "../../../shared/text";

/** A 2-D context that keeps real pixel buffers (happy-dom has no canvas): enough for the
 *  canvas layer's paint path (createImageData / Uint32Array writes / putImageData). */
function fakeContext(cv: HTMLCanvasElement): Partial<CanvasRenderingContext2D> {
  const noop = () => {};
  return {
    canvas: cv,
    fillRect: noop,
    strokeRect: noop,
    clearRect: noop,
    drawImage: noop,
    setTransform: noop,
    putImageData: noop,
    createImageData: ((w: number, h: number) =>
      ({ width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }) as ImageData) as never,
  };
}

beforeEach(() => {
  vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockImplementation(function (
    this: HTMLCanvasElement,
  ) {
    return fakeContext(this) as never;
  });
});

afterEach(() => {
  unmountAll();
  vi.restoreAllMocks();
});

/** Switch a mounted view to another fixture's layout, as the kernel does after a mesh change. */
async function republish(model: ReturnType<typeof mount>["model"], f: fx.Fixture) {
  model.set("_options", f.options);
  model.set("mesh_shape", f.state.mesh_shape);
  model.set("spec", f.state.spec);
  model.set("_layout", { ...f.layout, key: 2 });
  model.set("_stats", { ...f.stats, key: 2 });
  await flush();
}

describe("4096 devices", () => {
  it("mesh 64×64 -> 4096×1 redraws the grid and the mesh pane (no RangeError)", async () => {
    const errors: unknown[] = [];
    const onError = (e: ErrorEvent) => errors.push(e.error);
    window.addEventListener("error", onError);
    const { el, model } = mount(fx.fx4096());
    el.querySelector<HTMLElement>("canvas.sw-canvas")!;
    const tall = fx.namedFixture({ shape: [8192, 8192], meshShape: [4096, 1], spec: ["x", "y"], stats: "ready", thumbMax: 4 });
    await republish(model, tall);
    // Pin a block: the highlight path (applyHighlight -> draw -> paintBase) runs too.
    model.set("_stats", { ...tall.stats, key: 2 });
    await flush();
    window.removeEventListener("error", onError);
    expect(errors).toEqual([]);
    expect(el.querySelector("canvas.sw-canvas")).not.toBeNull();
    expect(el.querySelector(".sw-mesh")!.textContent).toContain("4096");
    expect(el.querySelector(".sw-mesh")!.textContent).not.toContain("64×64");
  }, 60_000);
});

describe("pixelSpans", () => {
  it("keeps every span inside the canvas, at least a pixel, when cells are thinner than a pixel", () => {
    const offsets = Array.from({ length: 4097 }, (_, i) => (i * 900) / 4096);
    const [a, b] = pixelSpans(offsets, 1, 900);
    for (let i = 0; i < 4096; i++) {
      expect(a[i]).toBeGreaterThanOrEqual(0);
      expect(b[i]).toBeLessThanOrEqual(900);
      expect(b[i] - a[i]).toBeGreaterThanOrEqual(1);
    }
    expect(b[4095]).toBe(900);
  });
});

const cellsOf = (el: HTMLElement) => [...el.querySelectorAll<HTMLElement>(".sw-mesh .sw-dev")];
const px = (v: string) => {
  expect(v).toMatch(/^\d+(\.\d+)?px$/);
  return Number(v.replace("px", ""));
};
/** A mesh grid cell's size (px): the grid's row track (its cells are sized by the tracks). */
const cellPx = (cell: HTMLElement) => {
  const grid = cell.closest<HTMLElement>(".sw-mesh-grid")!;
  expect(grid.style.gridTemplateColumns).toMatch(new RegExp(`, ${grid.style.gridAutoRows}\\)$`));
  return px(grid.style.gridAutoRows);
};

describe("elongated meshes fold to the grid's box", () => {
  it("meshFit keeps 256×1, 64×4, 4096×1 and 1×4096 inside 300 px × MESH_MAX_HEIGHT", () => {
    for (const [rows, cols] of [
      [256, 1],
      [64, 4],
      [4096, 1],
      [1, 4096],
      [16, 16],
      [64, 64],
    ]) {
      const f = meshFit(rows, cols, 300);
      const step = f.cell + f.gap;
      const width = f.strips * (Math.min(cols, f.perBand) * step + f.foldGap) - f.foldGap;
      // Strips and bands have a caption line (11 px) above their cells.
      const caption = f.strips > 1 ? 11 : f.bands > 1 ? bandCaption(rows * step) : 0;
      const height = f.bands * (Math.min(rows, f.perStrip) * step + caption + f.foldGap) - f.foldGap;
      expect(width, `${rows}×${cols} width`).toBeLessThanOrEqual(300 - 36);
      expect(height, `${rows}×${cols} height`).toBeLessThanOrEqual(MESH_MAX_HEIGHT + 12);
      expect(f.strips * f.perStrip).toBeGreaterThanOrEqual(rows);
      expect(f.bands * f.perBand).toBeGreaterThanOrEqual(cols);
    }
    // A mesh that fits is not folded, at the biggest cells.
    expect(meshFit(2, 4, 300)).toMatchObject({ strips: 1, bands: 1, cell: 40 });
  });

  it("draws 256×1 as side-by-side strips holding every device once, in mesh order", () => {
    const { el } = mount(fx.namedFixture({ shape: [512, 512], meshShape: [256, 1], spec: ["x", "y"] }));
    const strips = [...el.querySelectorAll<HTMLElement>(".sw-mesh .sw-mesh-strip")];
    expect(strips.length).toBeGreaterThan(1);
    const ids = strips.flatMap((s) => [...s.querySelectorAll<HTMLElement>(".sw-dev")].map((d) => Number(d.dataset.device)));
    expect(ids).toEqual(Array.from({ length: 256 }, (_, i) => i));
    // Each strip's rows of cells stay within the box's height.
    const cell = cellPx(cellsOf(el)[0]);
    const perStrip = strips[0].querySelectorAll(".sw-dev").length;
    expect(perStrip * (cell + 1)).toBeLessThanOrEqual(MESH_MAX_HEIGHT);
    expect(el.querySelector(".sw-mesh")!.textContent).toMatch(/x=256 ↓ in \d+ strips of \d+/);
  });

  it("draws 64×4 folded, every row of 4 devices kept together", () => {
    const { el } = mount(fx.namedFixture({ shape: [512, 512], meshShape: [64, 4], spec: ["x", "y"] }));
    const strips = [...el.querySelectorAll<HTMLElement>(".sw-mesh .sw-mesh-strip")];
    expect(strips.length).toBeGreaterThan(1);
    for (const s of strips) {
      const grid = s.querySelector<HTMLElement>(".sw-mesh-grid")!;
      expect(grid.style.gridTemplateColumns).toMatch(/^repeat\(4, /);
      const ids = [...s.querySelectorAll<HTMLElement>(".sw-dev")].map((d) => Number(d.dataset.device));
      expect(ids.length % 4).toBe(0);
      expect(ids[0] % 4).toBe(0);
    }
  });
});

describe("mesh pane labels at 256 devices", () => {
  it("labels every device of a 16×16 mesh (narrow cells get a condensed face)", () => {
    const { el } = mount(fx.fx256());
    const cells = cellsOf(el);
    expect(cells.length).toBe(256);
    const unlabeled = cells.filter((c) => c.textContent !== c.dataset.device).map((c) => c.dataset.device);
    expect(unlabeled).toEqual([]);
    // The cells are too narrow for "100" at the normal 10 px face: these use the condensed one.
    const c100 = el.querySelector<HTMLElement>('.sw-mesh .sw-dev[data-device="100"]')!;
    expect(cellPx(c100)).toBeLessThan(textWidth("100", 10) + 2);
    expect(c100.querySelector(".sw-dev-sq")).not.toBeNull();
  });

  it("condensedScale refuses what would be unreadable", () => {
    expect(condensedScale("255", 14, 14)).toBeGreaterThanOrEqual(0.6);
    expect(condensedScale("4095", 6, 6)).toBeNull();
    expect(condensedScale("4095", 8, 12)).toBeNull();
  });
});

describe("meshes of 3 and 4 axes keep to the box too", () => {
  it("shrinks the small multiples' cells until the panels fit the height", () => {
    for (const meshShape of [
      [16, 4, 4],
      [4, 4, 4, 4],
      [64, 2, 2],
    ]) {
      const { el } = mount(fx.namedFixture({ shape: [256, 256], meshShape, spec: ["x", "y"] }));
      const panels = [...el.querySelectorAll<HTMLElement>(".sw-mesh .sw-mesh-panel")];
      expect(panels.length).toBe(meshShape.length === 3 ? meshShape[0] : meshShape[0] * meshShape[1]);
      const cell = cellPx(cellsOf(el)[0]);
      const step = cell + (cell >= 10 ? 2 : 1);
      const inner = meshShape.slice(-2);
      // Panels per row: as the drawing lays them out (k = 4: one row per first-axis index).
      const across = meshShape.length === 4 ? meshShape[1] : Math.max(1, Math.floor((300 - 36 + 10) / (inner[1] * step + 10)));
      const height = Math.ceil(panels.length / across) * (inner[0] * step + 18);
      expect(height, meshShape.join("×")).toBeLessThanOrEqual(MESH_MAX_HEIGHT);
    }
  });
});
