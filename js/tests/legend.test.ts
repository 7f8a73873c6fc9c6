// The legend under the grid (issue 14, item 3), drawn from real payloads (Python's
// shardwidget.legend wrote the words): the four marks, the heatmap's range on the ramp, and
// replication in words.
import { afterEach, describe, expect, it } from "vitest";
import { heatRange, rampGradient } from "../array/legend";
import { mount, unmountAll, flush } from "./testing";
import * as fx from "./fixtures";
import * as gen from "./wire/fixtures.gen";
import { FakeModel } from "./fake_model";
import { ramp } from "../shared/colors";
import { ArrayView } from "../array/view";

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
    // The thumbnails' scale: their finite min and max (pooled means of 64×64 values 0..4095; how
    // finely they pool depends on the block's shape, so the range lies within the data's).
    const { vmin, vmax } = gen.array8._stats;
    expect(vmin).toBeGreaterThanOrEqual(0);
    expect(vmax).toBeLessThanOrEqual(4095);
    expect(vmax - vmin).toBeGreaterThan(3900);
    expect(bar.dataset.range).toBe(`${vmin} → ${vmax}`);
    expect(bar.querySelector(".sw-key-lo")!.textContent).toBe(String(vmin));
    expect(bar.querySelector(".sw-key-hi")!.textContent).toBe(String(vmax));
    expect(bar.querySelector<HTMLElement>(".sw-key-ramp")!.style.background).toContain("linear-gradient");
    model.set("_stats", { ...gen.array8._stats, status: "pending" });
    await flush();
    expect(el.querySelector<HTMLElement>(".sw-key-bar")!.dataset.range).toBe("values pending…");
  });

  it("hand-made layouts without a legend (older pages) show none", () => {
    const { el } = mount(fx.fx8());
    expect(el.querySelector<HTMLElement>(".sw-key")!.hidden).toBe(true);
  });

  it("heatRange and the ramp", () => {
    expect(heatRange(null).ready).toBe(false);
    expect(heatRange({ ...gen.array8._stats, vmin: NaN }).text).toBe("no finite values");
    const mid = ramp(0.5).join(",");
    expect(rampGradient(3)).toBe(`linear-gradient(90deg, rgb(68,1,84) 0%, rgb(${mid}) 50%, rgb(253,231,37) 100%)`);
  });
});
