// Large and elongated meshes (issue 13 items 4-6): the canvas path with a real pixel buffer.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { flush, mount, unmountAll } from "./testing";
import * as fx from "./fixtures";
import { pixelSpans } from "../array/grid/canvas_layer";

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
  });
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
