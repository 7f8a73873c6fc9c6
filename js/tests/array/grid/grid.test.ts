import { afterEach, describe, expect, it } from "vitest";
import { isCursorKey, moveCursor, selectGrid } from "../../../array/blocks";
import { axisTicks, axisTicksVertical, gridGeometry } from "../../../array/grid/geometry";
import { packThumbs, paletteBmp } from "../../../array/grid/atlas";
import { mount, unmountAll } from "../../testing";
import * as fx from "../../fixtures";

afterEach(() => unmountAll());

// A 3×4 grid of cells holding blocks 0..11 in row-major order, with one hole (-1) at (1, 1).
const cells = Int32Array.from([0, 1, 2, 3, 4, -1, 6, 7, 8, 9, 10, 11]);

describe("moveCursor (pure)", () => {
  it("steps by one cell with the arrows and stops at the edges", () => {
    expect(moveCursor(cells, 4, 0, 0, "ArrowRight")).toEqual([0, 1]);
    expect(moveCursor(cells, 4, 0, 0, "ArrowDown")).toEqual([1, 0]);
    expect(moveCursor(cells, 4, 0, 0, "ArrowLeft")).toEqual([0, 0]);
    expect(moveCursor(cells, 4, 0, 0, "ArrowUp")).toEqual([0, 0]);
    expect(moveCursor(cells, 4, 2, 3, "ArrowRight")).toEqual([2, 3]);
    expect(moveCursor(cells, 4, 2, 3, "ArrowDown")).toEqual([2, 3]);
  });
  it("skips cells without a block", () => {
    expect(moveCursor(cells, 4, 1, 0, "ArrowRight")).toEqual([1, 2]);
    expect(moveCursor(cells, 4, 0, 1, "ArrowDown")).toEqual([2, 1]);
    expect(moveCursor(cells, 4, 2, 1, "ArrowUp")).toEqual([0, 1]);
  });
  it("Home / End go to the ends of the row, with Ctrl to the ends of the grid", () => {
    expect(moveCursor(cells, 4, 1, 2, "Home")).toEqual([1, 0]);
    expect(moveCursor(cells, 4, 1, 2, "End")).toEqual([1, 3]);
    expect(moveCursor(cells, 4, 1, 2, "Home", true)).toEqual([0, 0]);
    expect(moveCursor(cells, 4, 1, 2, "End", true)).toEqual([2, 3]);
  });
  it("PageUp / PageDown move several rows, clamped", () => {
    const tall = Int32Array.from({ length: 20 }, (_, i) => i); // 20 rows × 1 column
    expect(moveCursor(tall, 1, 0, 0, "PageDown", false, 8)).toEqual([8, 0]);
    expect(moveCursor(tall, 1, 15, 0, "PageDown", false, 8)).toEqual([19, 0]);
    expect(moveCursor(tall, 1, 3, 0, "PageUp", false, 8)).toEqual([0, 0]);
  });
  it("knows which keys it handles", () => {
    expect(isCursorKey("ArrowLeft")).toBe(true);
    expect(isCursorKey("End")).toBe(true);
    expect(isCursorKey("Enter")).toBe(false);
    expect(isCursorKey("a")).toBe(false);
  });
});

describe("grid geometry", () => {
  it("sizes the row gutter for the tick labels actually drawn", () => {
    const f = fx.fx4096(); // 64 rows: too short for "a:b" labels, so start-only ticks
    const sel = selectGrid(f.layout, [0, 1], [0, 0]);
    const g = gridGeometry(f.layout, sel, 700);
    const ticks = axisTicksVertical(sel.rowRanges, g.ys);
    expect(ticks.every((t) => !t.full)).toBe(true);
    // the gutter fits the longest start label ("8064"), not the longest range ("8064:8192")
    expect(g.gutterLeft).toBeLessThan(18 + 6 + 9 * 11 * 0.62);
    const f8 = fx.fx8();
    const g8 = gridGeometry(f8.layout, selectGrid(f8.layout, [0, 1], [0, 0]), 700);
    expect(axisTicksVertical(selectGrid(f8.layout, [0, 1], [0, 0]).rowRanges, g8.ys).every((t) => t.full)).toBe(true);
  });

  it("thins start labels to an even stride, never packing them greedily", () => {
    // 16 columns of 128 over 460 px: "1024" and "1152" cannot both fit in 28.75 px
    const ranges = Array.from({ length: 16 }, (_, i) => [i * 128, (i + 1) * 128] as [number, number]);
    const offsets = Array.from({ length: 17 }, (_, i) => i * 28.75);
    const ticks = axisTicks(ranges, offsets);
    const idx = ticks.map((t) => t.index);
    expect(idx.length).toBeGreaterThan(3);
    const stride = idx[1] - idx[0];
    expect(idx.every((v, i) => v === i * stride)).toBe(true);
    expect(ticks.map((t) => t.text).slice(0, 3)).toEqual(["0", String(128 * stride), String(256 * stride)]);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i].at).toBeGreaterThanOrEqual(ticks[i - 1].at + ticks[i - 1].span);
  });

  it("keeps a tall array's grid within the height it is given", () => {
    const f = fx.namedFixture({ shape: [4096, 64], meshShape: [2, 4], spec: ["x", "y"] });
    const sel = selectGrid(f.layout, [0, 1], [0, 0]);
    const tall = gridGeometry(f.layout, sel, 700);
    const short = gridGeometry(f.layout, sel, 700, 240);
    expect(tall.height).toBeGreaterThan(240);
    expect(short.height).toBeLessThanOrEqual(240);
    expect(short.ys[short.ys.length - 1]).toBeLessThanOrEqual(240);
  });
});

const key = (el: Element, k: string, extra: KeyboardEventInit = {}) =>
  el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...extra }));

describe("keyboard: the grid is one tab stop with a roving cursor", () => {
  it("DOM path: focus, arrows, End, Enter pins (focus stays), Escape unpins", () => {
    const { el } = mount(fx.fx8()); // 2 rows × 4 columns, devices 0..7 in mesh order
    const grid = el.querySelector<HTMLElement>(".sw-grid")!;
    const live = el.querySelector<HTMLElement>(".sw-array [aria-live]")!;
    expect(grid.tabIndex).toBe(0);
    expect(grid.getAttribute("aria-label")).toMatch(/8 blocks in 2 rows × 4 columns.*Arrow keys/);
    expect(el.querySelectorAll(".sw-block[tabindex]").length).toBe(0); // one tab stop, not 8
    grid.focus();
    expect(el.ownerDocument.activeElement).toBe(grid);
    const cursor = () => el.querySelector<HTMLElement>(".sw-block.sw-cursor");
    expect(grid.classList.contains("sw-kbd")).toBe(true);
    expect(cursor()!.dataset.block).toBe("0");
    expect(live.textContent).toMatch(/^row 1 of 2, column 1 of 4: dim 0 \[0:4\), dim 1 \[0:4\); device 0/);
    key(grid, "ArrowRight");
    expect(cursor()!.textContent).toBe("1");
    // the cursor lights up its device in the mesh pane, as hovering does
    const lit = [...el.querySelectorAll<HTMLElement>(".sw-dev.sw-hl")].map((c) => c.dataset.device);
    expect(lit).toEqual(["1"]);
    key(grid, "ArrowDown");
    expect(cursor()!.textContent).toBe("5");
    key(grid, "End");
    expect(cursor()!.textContent).toBe("7");
    key(grid, "Home", { ctrlKey: true });
    expect(cursor()!.textContent).toBe("0");
    key(grid, "ArrowRight");
    key(grid, "Enter");
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.hidden).toBe(false);
    expect(detail.textContent).toMatch(/\[0:4\)/);
    expect(el.ownerDocument.activeElement).toBe(grid); // the arrows go on working
    expect(live.textContent).toMatch(/pinned$/);
    expect(el.querySelector(".sw-block.sw-pinned")!.textContent).toBe("1");
    key(grid, "ArrowRight");
    key(grid, " "); // Space pins the block under the cursor instead
    expect(el.querySelector(".sw-block.sw-pinned")!.textContent).toBe("2");
    key(grid, "Escape");
    expect(detail.hidden).toBe(true);
    grid.blur();
    expect(cursor()).toBeNull();
    expect(el.querySelectorAll(".sw-dev.sw-hl").length).toBe(0);
  });

  it("a mouse click moves the cursor without showing it; the keyboard goes on from there", () => {
    const { el } = mount(fx.fx8());
    const grid = el.querySelector<HTMLElement>(".sw-grid")!;
    const b5 = [...el.querySelectorAll<HTMLElement>(".sw-block")].find((b) => b.textContent === "5")!;
    b5.dispatchEvent(new MouseEvent("mousedown", { bubbles: true }));
    grid.focus();
    b5.click();
    expect(grid.classList.contains("sw-kbd")).toBe(false);
    grid.focus();
    key(grid, "ArrowLeft");
    expect(el.querySelector<HTMLElement>(".sw-block.sw-cursor")!.textContent).toBe("4");
  });

  it("canvas path: the same keys move the cursor over 4096 blocks and pin", () => {
    const { el } = mount(fx.fx4096());
    const grid = el.querySelector<HTMLElement>(".sw-grid")!;
    expect(grid.querySelector("canvas.sw-canvas")).not.toBeNull();
    const live = el.querySelector<HTMLElement>(".sw-array [aria-live]")!;
    grid.focus();
    expect(live.textContent).toMatch(/^row 1 of 64, column 1 of 64: .*device 0\b/);
    key(grid, "ArrowDown");
    key(grid, "ArrowDown");
    key(grid, "ArrowRight");
    expect(live.textContent).toMatch(/^row 3 of 64, column 2 of 64: dim 0 \[256:384\), dim 1 \[128:256\); device 129$/);
    key(grid, "End", { ctrlKey: true });
    expect(live.textContent).toMatch(/^row 64 of 64, column 64 of 64: .*device 4095/);
    key(grid, "PageUp");
    expect(live.textContent).toMatch(/^row 56 of 64, column 64 of 64/);
    key(grid, "Enter");
    const detail = el.querySelector<HTMLElement>(".sw-detail")!;
    expect(detail.hidden).toBe(false);
    expect(detail.textContent).toContain("[7040:7168) × [8064:8192)"); // row 56, column 64
    key(grid, "Escape");
    expect(detail.hidden).toBe(true);
  });

  it("ignores keys it does not handle and leaves their default alone", () => {
    const { el } = mount(fx.fx8());
    const grid = el.querySelector<HTMLElement>(".sw-grid")!;
    grid.focus();
    const e = new KeyboardEvent("keydown", { key: "a", bubbles: true, cancelable: true });
    grid.dispatchEvent(e);
    expect(e.defaultPrevented).toBe(false);
    const arrow = new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true, cancelable: true });
    grid.dispatchEvent(arrow);
    expect(arrow.defaultPrevented).toBe(true); // no page scroll while moving the cursor
  });
});

describe("thumbnail atlas (8-bit BMP)", () => {
  it("holds each thumbnail's bytes as palette indices, with a replicated 1 px border", () => {
    const a = { rows: 2, cols: 3, data: Uint8Array.from([0, 10, 20, 30, 40, 255]) };
    const b = { rows: 1, cols: 1, data: Uint8Array.from([7]) };
    const bmp = paletteBmp(
      new Map([
        [4, a],
        [9, b],
      ]),
    );
    const dv = new DataView(bmp.buffer);
    expect(String.fromCharCode(bmp[0], bmp[1])).toBe("BM");
    expect(dv.getUint32(2, true)).toBe(bmp.length);
    expect(dv.getUint16(28, true)).toBe(8);
    const width = dv.getInt32(18, true);
    const height = -dv.getInt32(22, true); // top-down
    expect([width, height]).toEqual([5 + 3, 4]); // (3+2) + (1+2) wide, (2+2) tall
    const stride = (width + 3) & ~3;
    const px = (x: number, y: number) => bmp[dv.getUint32(10, true) + y * stride + x];
    // tile of block 4 at (1, 1): its rows, the border repeating the edge values
    expect([0, 1, 2, 3, 4].map((x) => px(x, 1))).toEqual([0, 0, 10, 20, 20]);
    expect([0, 1, 2, 3, 4].map((x) => px(x, 2))).toEqual([30, 30, 40, 255, 255]);
    expect(px(2, 0)).toBe(10); // top border = first row
    expect(px(2, 3)).toBe(40); // bottom border = last row
    expect(px(6, 1)).toBe(7); // block 9's single value
    // palette entry 255 is the top of the viridis ramp (BGRA): yellow
    const pal = (v: number) => [bmp[54 + v * 4 + 2], bmp[54 + v * 4 + 1], bmp[54 + v * 4]];
    const [r, g, bl] = pal(255);
    expect(r).toBeGreaterThan(200);
    expect(g).toBeGreaterThan(200);
    expect(bl).toBeLessThan(80);
    // the same file from the pack the markup made (DomLayer hands its own to the atlas)
    const thumbs = new Map([
      [4, a],
      [9, b],
    ]);
    expect([...paletteBmp(thumbs, packThumbs(thumbs))]).toEqual([...bmp]);
  });
});

describe("redraws", () => {
  it("draw the grid when the layout arrives after a wait", async () => {
    const f = fx.fx8();
    const { el, model } = mount(f, { _layout: null, _stats: null });
    expect(el.querySelector(".sw-array")!.textContent).toContain("waiting for the array layout");
    model.set("_layout", f.layout);
    model.set("_stats", f.stats);
    await new Promise((r) => setTimeout(r, 0));
    expect(el.querySelectorAll(".sw-array .sw-grid .sw-block").length).toBe(8);
    expect(el.querySelector(".sw-array")!.textContent).not.toContain("waiting");
  });

  it("keep the block elements when a render draws the same blocks", async () => {
    const f = fx.fx8();
    const { el, model } = mount(f);
    const first = el.querySelector<HTMLElement>(".sw-grid .sw-block")!;
    model.set("_stats", { ...f.stats }); // new statistics object, same data: same blocks
    await new Promise((r) => setTimeout(r, 0));
    expect(el.querySelector(".sw-grid .sw-block")).toBe(first);
    const other = fx.fxPartial(); // another layout: 2 blocks of 4 holders
    model.set("_layout", other.layout);
    model.set("_stats", other.stats);
    await new Promise((r) => setTimeout(r, 0));
    const now = [...el.querySelectorAll<HTMLElement>(".sw-grid .sw-block")];
    expect(now.length).toBe(2);
    expect(now).not.toContain(first);
    expect(now.every((b) => b.classList.contains("sw-replicated"))).toBe(true);
  });
});
