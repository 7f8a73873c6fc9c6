// The legend under the grid (issue 14, item 3), drawn from real payloads (Python's
// shardwidget.legend wrote the words): the four marks, the heatmap's range on the ramp, and
// replication in words.
import { afterEach, describe, expect, it } from "vitest";
import { heatRange, LegendPanel } from "../../array/legend";
import { mount, unmountAll, flush } from "../testing";
import * as fx from "../fixtures";
import * as gen from "../wire/fixtures.gen";
import { FakeModel } from "../fake_model";
import { ArrayView } from "../../array/view";
import { formatNumber } from "../../shared/text";

const views: ArrayView[] = [];
afterEach(() => {
  views.splice(0).forEach((v) => v.dispose());
  unmountAll();
});

function draw(state: object): { el: HTMLElement; model: FakeModel } {
  const model = new FakeModel({ ...state });
  const el = document.createElement("div");
  document.body.append(el);
  views.push(new ArrayView(model as never, el));
  return { el, model };
}

describe("legend", () => {
  it("says what each mark means and how the array is split and copied", () => {
    const { el } = draw(gen.arrayValues8); // P('y') on a 2×4 mesh
    const key = el.querySelector<HTMLDetailsElement>(".sw-key")!;
    expect(key.hidden).toBe(false);
    expect(key.open).toBe(true);
    const dts = [...key.querySelectorAll("dt")].map((d) => d.textContent);
    expect(dts).toEqual(["border", "inner heatmap", "stripes", "labels"]);
    const rep = [...key.querySelectorAll(".sw-key-rep li")].map((l) => l.textContent);
    expect(rep).toEqual(["dimension 0 split 4 ways over y", "replicated over x: 2 copies"]);
  });

  it("the colour bar shows the array's range, always (pending too)", async () => {
    const { el, model } = draw(gen.array8);
    const bar = el.querySelector<HTMLElement>(".sw-key-bar")!;
    // The thumbnails' scale: their finite min and max (of 64×64 values 0..4095, NaN left out).
    const { vmin, vmax } = gen.array8._stats;
    expect(vmin).toBeGreaterThanOrEqual(0);
    expect(vmax).toBeLessThanOrEqual(4095);
    expect(vmax - vmin).toBeGreaterThan(3900);
    const range = `${formatNumber(vmin)} → ${formatNumber(vmax)}`;
    expect(bar.dataset.range).toBe(range);
    expect(bar.textContent).toBe(` range ${range} (the bar under the grid)`);
    // the bar itself is the grid's (one colour bar, not two)
    expect(el.querySelectorAll(".sw-key .sw-rampbar").length).toBe(0);
    model.set("_stats", { ...gen.array8._stats, status: "pending" });
    await flush();
    expect(el.querySelector<HTMLElement>(".sw-key-bar")!.dataset.range).toBe("values pending…");
    expect(el.querySelector<HTMLElement>(".sw-key-bar")!.textContent).toBe(" (values pending…)");
  });

  it("blocks too small for their heatmaps (thousands of devices): the range points at no bar", () => {
    const { _layout: layout, _stats: stats } = gen.array8;
    const panel = new LegendPanel(document);
    panel.update(layout, stats, false);
    const range = `${formatNumber(stats.vmin)} → ${formatNumber(stats.vmax)}`;
    expect(panel.el.querySelector(".sw-key-bar")!.textContent).toBe(
      ` range ${range} (no heatmap at this size: the blocks are too small)`,
    );
    panel.update(layout, stats, true);
    expect(panel.el.querySelector(".sw-key-bar")!.textContent).toBe(` range ${range} (the bar under the grid)`);
  });

  it("an unreduced array (no heatmap, no bar under the grid) claims no range or bar", async () => {
    const { el } = draw(gen.arrayUnreduced8); // P('y', unreduced={'x'}): partial sums
    await flush();
    const dds = [...el.querySelectorAll(".sw-key-marks dd")].map((d) => d.textContent ?? "");
    const heat = dds[1];
    expect(heat.startsWith("none: no device holds a block's values")).toBe(true);
    expect(heat).not.toContain("range");
    expect(heat).not.toContain("bar under the grid");
    expect(el.querySelector(".sw-key-bar")).toBeNull();
    // and indeed the grid draws no colour bar for it
    const ramp = el.querySelector<HTMLElement>(".sw-rampbar");
    expect(ramp === null || ramp.closest<HTMLElement>("[hidden]") !== null).toBe(true);
  });

  it("hand-made layouts without a legend (older pages) show none", () => {
    const { el } = mount(fx.fx8());
    expect(el.querySelector<HTMLElement>(".sw-key")!.hidden).toBe(true);
  });

  it("heatRange", () => {
    expect(heatRange(null).ready).toBe(false);
    expect(heatRange({ ...gen.array8._stats, vmin: NaN }).text).toBe("no finite values");
    // no thumbnails sent: all NaN / Inf (no block has a finite min), or nothing to draw (0-d)
    const none = { ...gen.array8._stats, thumbs: null };
    expect(heatRange({ ...none, blocks: none.blocks.map(() => [NaN, NaN, NaN, NaN, 4, 0]) })).toEqual({
      text: "no finite values",
      ready: false,
    });
    expect(heatRange(none)).toEqual({ text: "no heatmap at this size", ready: false });
  });
});
