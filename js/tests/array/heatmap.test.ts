// Issue 13 item 13: the heatmap's colour bar in the grid, its ring against device colours, the
// card's aspect, and the note where pooled means hide the data.
import { afterEach, describe, expect, it, vi } from "vitest";
import { mount, unmountAll } from "../testing";
import * as fx from "../fixtures";
import { heatmapBox, meanHides, poolSize, thumbRange } from "../../array/stats";

afterEach(() => {
  unmountAll();
  vi.restoreAllMocks();
});

/** 8 devices, blocks of 2048×1024 (tall), thumbnails `thumbMax` a side. */
const tall = () =>
  fx.namedFixture({ shape: [4096, 4096], meshShape: [2, 4], spec: ["x", "y"], thumbMax: 16 });

describe("heatmap in the grid", () => {
  it("shows a colour bar with the value range and says the pixels are pooled means", () => {
    const f = tall();
    const { el } = mount(f);
    const legend = el.querySelector<HTMLElement>(".sw-array .sw-heat-legend")!;
    expect(legend.hidden).toBe(false);
    expect(legend.querySelector(".sw-rampbar")).not.toBeNull();
    expect(legend.textContent).toContain("mean of 128×64 values"); // 2048/16 × 1024/16
    expect(legend.title).toMatch(/pooled means/);
  });

  it("says a 3-D view's pixels also average the dims not drawn", () => {
    const { el } = mount(fx.fx3d()); // blocks [0:3) × [0:8) × [0:4), drawing dims 1 and 2
    expect(el.querySelector(".sw-heat-legend")!.textContent).toContain("mean of 1×1 values × 3 along dim 0");
  });

  it("has no colour bar while statistics are pending", () => {
    const { el } = mount(fx.fx4096());
    expect(el.querySelector<HTMLElement>(".sw-heat-legend")!.hidden).toBe(true);
  });

  it("draws a white ring between the device colour and the heatmap on the canvas", () => {
    // 512 blocks (canvas) of 64×64 px with thumbnails; capture the pixels written.
    let img: ImageData | null = null;
    vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockImplementation(function (this: HTMLCanvasElement) {
      const noop = () => {};
      return {
        canvas: this,
        fillRect: noop,
        strokeRect: noop,
        clearRect: noop,
        drawImage: noop,
        setTransform: noop,
        putImageData: (d: ImageData) => void (img = d),
        createImageData: (w: number, h: number) => ({ width: w, height: h, data: new Uint8ClampedArray(w * h * 4) }),
      } as never;
    });
    const f = fx.namedFixture({ shape: [2048, 4096], meshShape: [16, 32], spec: ["x", "y"], thumbMax: 8 });
    const { el } = mount(f);
    return new Promise<void>((done) =>
      setTimeout(() => {
        expect(el.querySelector("canvas.sw-canvas")).not.toBeNull();
        const d = img!;
        expect(d).not.toBeNull();
        const at = (x: number, y: number) => [...d.data.slice((y * d.width + x) * 4, (y * d.width + x) * 4 + 3)];
        // Block 0 spans [0, w) × [0, h) px; frame 2 px of device colour, then the white ring.
        const w = Math.round(d.width / 32);
        expect(at(0, Math.floor(w / 2))).not.toEqual([255, 255, 255]); // device colour
        expect(at(2, Math.floor(w / 2))).toEqual([255, 255, 255]); // ring
        expect(at(Math.floor(w / 2), 2)).toEqual([255, 255, 255]);
        expect(at(4, Math.floor(w / 2))).not.toEqual([255, 255, 255]); // heatmap
        done();
      }, 0),
    );
  });
});

describe("the pinned card's heatmap", () => {
  it("draws a tall 2048×1024 block tall, whatever the thumbnail's pixel counts", () => {
    const f = tall();
    const { el } = mount(f);
    el.querySelector<HTMLElement>('.sw-grid [data-block="0"]')!.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    const cv = el.querySelector<HTMLCanvasElement>(".sw-detail canvas.sw-thumb-big")!;
    const w = Number(cv.style.width.replace("px", ""));
    const h = Number(cv.style.height.replace("px", ""));
    expect(h / w).toBeCloseTo(2, 1);
    expect(el.querySelector(".sw-detail figcaption")!.textContent).toContain("mean of 128×64 values");
  });

  it("heatmapBox keeps the block's aspect inside the box", () => {
    expect(heatmapBox(2048, 1024, 200, 140)).toEqual([70, 140]);
    expect(heatmapBox(1024, 2048, 200, 140)).toEqual([200, 100]);
    expect(heatmapBox(1, 100000, 200, 140)).toEqual([200, 8]);
  });

  it("says where the mean hides the data, and not where it does not", () => {
    const flat = { rows: 2, cols: 2, data: new Uint8Array([120, 128, 125, 130]) };
    const full = { rows: 2, cols: 2, data: new Uint8Array([0, 255, 40, 200]) };
    expect(thumbRange(full, -1, 1)).toEqual([-1, 1]);
    expect(meanHides(flat, -1, 1, -1, 1)).toBe(true);
    expect(meanHides(full, -1, 1, -1, 1)).toBe(false);
    expect(meanHides(flat, -1, 1, 0, 0)).toBe(false);
    const f = tall();
    expect(poolSize(f.layout, 0, { rows: 16, cols: 32, data: new Uint8Array(512) }, [0, 1])).toEqual([128, 32]);
  });
});
