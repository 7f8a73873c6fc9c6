import { afterEach, describe, expect, it } from "vitest";
import { FakeModel } from "../fake_model";
import { TreeView } from "../../tree/view";
import { chartBars, chartGroups, MAX_GROUPS, yTicks } from "../../tree/chart_data";
import { MemoryChart } from "../../tree/memory_chart";
import type { TreeMemory } from "../../wire";
import { tree8 } from "../wire/fixtures.gen";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

/** n groups ("layer0000" …) on `devices` devices: group g puts (g + 1) * 100 bytes on each. */
function memoryOf(groups: number, devices: number): { m: TreeMemory; names: string[] } {
  const ids = Array.from({ length: devices }, (_, i) => i);
  return {
    m: { ids, by_group: Array.from({ length: groups }, (_, g) => ids.map(() => (g + 1) * 100)) },
    names: Array.from({ length: groups }, (_, g) => `['layer${String(g).padStart(4, "0")}']`),
  };
}

function mountChart(m: TreeMemory, names: string[], meshDevices = 0) {
  const chart = new MemoryChart(document, () => {});
  document.body.append(chart.el);
  chart.render({ memory: m, groupNames: names, presets: [], hardware: "", meshDevices });
  cleanups.push(() => chart.dispose());
  return chart;
}

describe("memory chart data", () => {
  it("bounds the groups: the largest, then one 'others' summing the rest", () => {
    const { m, names } = memoryOf(2500, 8);
    const g = chartGroups(m, names);
    expect(g.names.length).toBe(MAX_GROUPS);
    expect(g.others).toBe(2500 - (MAX_GROUPS - 1));
    expect(g.names.at(-1)).toBe("2,493 other groups");
    expect(g.names[0]).toBe("['layer2493']"); // the largest kept, in tree order
    // Nothing is lost: the drawn rows sum to the wire's totals on every device.
    const total = m.by_group.reduce((s, row) => s + row[3], 0);
    expect(g.rows.reduce((s, row) => s + row[3], 0)).toBe(total);
    expect(chartGroups(m, names, 2600).names.length).toBe(2500);
  });

  it("a bar per device, zeros included; bins of consecutive devices at thousands", () => {
    const m: TreeMemory = { ids: [0, 1, 2, 3, 4, 5, 6, 7], by_group: [[1000, 0, 0, 0, 0, 0, 0, 0]] };
    const bars = chartBars(m, chartGroups(m, ["['params']"]));
    expect(bars.map((b) => b.total)).toEqual([1000, 0, 0, 0, 0, 0, 0, 0]);
    const big = memoryOf(3, 65_536).m;
    big.by_group[0][70_000 % 65_536] = 0;
    const binned = chartBars(big, chartGroups(big, ["a", "b", "c"]));
    expect(binned.length).toBe(256);
    expect(binned[0]).toMatchObject({ first: 0, last: 255, count: 256 });
    expect(binned.reduce((s, b) => s + b.count, 0)).toBe(65_536);
    expect(binned[17].min).toBeLessThan(binned[17].max); // the emptied device shows in its bin's range
  });

  it("y ticks at round values up to the top", () => {
    const mib = 1 << 20;
    expect(yTicks(14 * mib).map((v) => v / mib)).toEqual([0, 5, 10, 15]);
    expect(yTicks(4096)).toEqual([0, 1024, 2048, 3072, 4096]);
    expect(yTicks(0)).toEqual([0]);
  });
});

describe("memory chart", () => {
  it("draws every device, an empty one as an empty slot, and says how many hold nothing", () => {
    const m: TreeMemory = { ids: [0, 1, 2, 3, 4, 5, 6, 7], by_group: [[14_704_640, 0, 0, 0, 0, 0, 0, 0]] };
    const chart = mountChart(m, ["['params']"], 8);
    const bars = chart.el.querySelectorAll("g[data-device]");
    expect(bars.length).toBe(8);
    expect(bars[1].querySelectorAll("rect").length).toBe(1); // the slot alone
    expect(bars[0].querySelectorAll("rect").length).toBe(2);
    expect(chart.el.querySelector(".sw-tree-mem-note")!.textContent).toContain("7 devices of 8 hold nothing");
  });

  it("a wire without the empty devices still says they are there", () => {
    const chart = mountChart({ ids: [0], by_group: [[100]] }, ["['params']"], 8);
    expect(chart.el.querySelector(".sw-tree-mem-note")!.textContent).toContain("7 devices of 8 hold nothing");
    // One full bar and seven empty ones.
    expect(chart.el.querySelectorAll("g[data-device]").length).toBe(1);
    const empty = chart.el.querySelectorAll("g[data-unsent]");
    expect(empty.length).toBe(7);
    expect(empty[0].querySelectorAll("rect").length).toBe(1);
  });

  it("2,500 groups: a legend of MAX_GROUPS keys and bars of at most MAX_GROUPS segments", () => {
    const { m, names } = memoryOf(2500, 8);
    const chart = mountChart(m, names);
    expect(chart.el.querySelectorAll(".sw-tree-mem-key").length).toBe(MAX_GROUPS);
    const bar = chart.el.querySelector("g[data-device]")!;
    expect(bar.querySelectorAll("rect").length).toBe(MAX_GROUPS + 1); // slot + segments
  });

  it("65,536 devices draw as bins with readable labels (10 px, unscaled)", () => {
    const { m, names } = memoryOf(2, 65_536);
    const chart = mountChart(m, names);
    expect(chart.el.querySelectorAll("g[data-devices]").length).toBe(256);
    const svg = chart.el.querySelector("svg")!;
    expect(svg.getAttribute("width")).toBe(svg.getAttribute("viewBox")!.split(" ")[2]);
    expect(chart.el.querySelector("svg")!.getAttribute("aria-label")).toContain("in 256 bins");
  });
});

describe("rules editor keys", () => {
  it("keys typed in the editor stay there (JupyterLab's bindings never see them); Ctrl+Enter sends", async () => {
    const model = new FakeModel({ ...tree8 });
    const el = document.createElement("div");
    document.body.append(el);
    const view = new TreeView(model as never, el);
    cleanups.push(() => view.dispose());
    const seen: string[] = [];
    const listen = (e: KeyboardEvent) => seen.push(`${e.shiftKey ? "Shift+" : ""}${e.key}`);
    document.addEventListener("keydown", listen);
    cleanups.push(() => document.removeEventListener("keydown", listen));
    const area = view.rulesEditor.textarea;
    for (const init of [{ key: "Enter" }, { key: "Enter", shiftKey: true }, { key: "a" }]) {
      const e = new KeyboardEvent("keydown", { ...init, bubbles: true, cancelable: true });
      area.dispatchEvent(e);
      expect(e.defaultPrevented).toBe(false); // the newline is typed
    }
    expect(seen).toEqual([]);
    expect(area.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
    area.value = "w  P('x')";
    area.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    await new Promise((r) => setTimeout(r, 5));
    expect(model.sent.find((m) => m.type === "tree_request")?.state.rules_text).toBe("w  P('x')");
  });
});
