// The wire contract from the TypeScript side: real payloads from Python (fixtures.gen.ts, typed
// with the wire types, so tsc already checked their shape) are drawn, and the static picture's
// device colours (Python) are the live renderer's.
import { afterEach, describe, expect, it } from "vitest";
import type { AnyModel } from "@anywidget/types";
import widget from "../../widget";
import { colorScheme, deviceColor } from "../../shared/colors";
import { FakeModel } from "../fake_model";
import * as gen from "./fixtures.gen";

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
});

function draw(state: object): HTMLElement {
  const model = new FakeModel({ ...state });
  const el = document.createElement("div");
  document.body.append(el);
  cleanups.push(widget.render({ model: model as unknown as AnyModel, el }));
  return el;
}

const settle = () => new Promise<void>((r) => setTimeout(r, 0));

/** Colour of each mesh cell, by device id, as the renderer wrote it. */
function meshColours(el: HTMLElement): Map<number, string> {
  const out = new Map<number, string>();
  for (const c of el.querySelectorAll<HTMLElement>(".sw-mesh .sw-dev[data-device]")) {
    const m = /background:\s*(#[0-9a-fA-F]{6})/.exec(c.getAttribute("style") ?? "");
    if (m) out.set(Number(c.dataset.device), m[1].toLowerCase());
  }
  return out;
}

describe("device colours: the static picture (Python) and the live renderer agree", () => {
  for (const [n, want] of Object.entries(gen.colours.dense)) {
    it(`at ${n} devices`, () => {
      const step = n === "4096" ? gen.colours.step4096 : 1;
      const got = want.map((_, k) => deviceColor(k * step, Number(n)).toLowerCase());
      expect(got).toEqual(want.map((c) => c.toLowerCase()));
    });
  }

  it("by rank when ids are not 0..n-1 (two processes)", () => {
    const { n, ids, colors } = gen.colours.byRank;
    const s = colorScheme(n, ids);
    expect(ids.map((i) => s.color(i).toLowerCase())).toEqual(colors.map((c) => c.toLowerCase()));
  });
});

describe("real array payloads from Python", () => {
  for (const [name, state, n] of [
    ["array8", gen.array8, 8],
    ["array32", gen.array32, 32],
  ] as const) {
    it(`${name}: one block per device, every mesh cell in Python's colour`, async () => {
      const el = draw(state);
      await settle();
      expect(el.querySelectorAll(".sw-grid .sw-block").length).toBe(state._layout.blocks.length);
      expect(el.querySelector(".sw-typeof")!.textContent).toContain(state._layout.typeof);
      const cells = meshColours(el);
      expect(cells.size).toBe(n);
      for (const [id, c] of cells) expect(c).toBe(gen.colours.dense[String(n) as "8"][id].toLowerCase());
      // Statistics arrived with the payload: thumbnails for blocks of more than 64 elements.
      expect(state._stats.status).toBe("ready");
      expect(el.querySelectorAll(".sw-block.sw-has-thumb").length).toBe(state._layout.blocks.length);
    });
  }

  it("small blocks carry their values; a scalar draws one block", async () => {
    const el = draw(gen.arrayValues8);
    await settle();
    expect(gen.arrayValues8._stats.values).not.toBeNull();
    expect(el.querySelectorAll(".sw-grid .sw-block").length).toBe(gen.arrayValues8._layout.blocks.length);
    const one = draw(gen.arrayScalar8);
    await settle();
    expect(one.querySelectorAll(".sw-grid .sw-block").length).toBe(1);
  });
});

describe("an unreduced array from Python (partial sums)", () => {
  it("says so in the header and shows each holder's partial statistics", async () => {
    const state = gen.arrayUnreduced8;
    expect(state._layout.unreduced).toEqual(["x"]);
    expect(state._layout.typeof).toBe("float32[64@y]{U:x}");
    const el = draw(state);
    await settle();
    expect(el.querySelector(".sw-summary")!.textContent).toContain("unreduced over 'x': each device holds a partial value");
    expect(el.textContent).toContain("P('y', unreduced={'x'})");
    // the grid marks each block as a sum of its holders' partials
    expect(el.querySelector(".sw-grid .sw-block[data-block='1'] .sw-label")!.textContent).toMatch(/^Σ /);
    el.querySelector<HTMLElement>(".sw-grid .sw-block[data-block='1']")!.click();
    const rows = [...el.querySelectorAll<HTMLTableRowElement>(".sw-detail .sw-partials tbody tr")];
    const blk = state._layout.blocks[1];
    expect(rows.map((r) => Number(r.dataset.device))).toEqual(blk.d);
    // each row: that device's own partial (its min), as Python computed it
    const ids = state._layout.devices.ids;
    for (const r of rows) {
      const want = state._stats.partials[ids.indexOf(Number(r.dataset.device))]![0];
      expect(Number(r.cells[1].textContent!.replace(/[^0-9.e+-]/g, ""))).toBeCloseTo(want, 0);
    }
  });
});

describe("real function payloads from Python", () => {
  for (const [name, state] of [
    ["function8", gen.function8],
    ["functionShardMap8", gen.functionShardMap8],
    ["functionPmap8", gen.functionPmap8],
  ] as const) {
    it(`${name}: a card per input and output, the collectives XLA inserted`, async () => {
      const el = draw(state);
      await settle();
      const text = el.textContent ?? "";
      expect(text).toContain(state._trace_options.fn_name);
      for (const leaf of [...state._trace.inputs, ...state._trace.outputs]) expect(text).toContain(leaf.path);
      for (const c of state._trace.collectives) expect(text).toContain(c.kind);
      expect(state._trace.status).toBe("ok");
      // The jaxpr panel carries the program JAX traced (collapsed until opened).
      const panel = el.querySelector<HTMLDetailsElement>("details.sw-tr-jaxpr")!;
      expect(panel.hidden).toBe(false);
      expect(panel.open).toBe(false);
      expect(panel.querySelector("pre")!.textContent).toBe(state._trace.jaxpr);
      expect(state._trace.jaxpr).toMatch(/^\{ lambda /);
    });
  }

  it("functionPmap8: pmap's mode, its collectives over the user's axis, leaves in words", async () => {
    const state = gen.functionPmap8;
    const el = draw(state);
    await settle();
    expect(state.mode).toBe("pmap");
    expect(state.axis_names).toEqual(["i"]);
    expect(state._trace.collectives.map((c) => [c.kind, c.axes])).toEqual([["all-reduce", ["i"]]]);
    expect(el.querySelector(".sw-tr-mode")!.textContent).toBe("pmap");
    const notes = [...el.querySelectorAll(".sw-tr-note")].map((n) => n.textContent);
    expect(notes).toEqual([state._trace.inputs[0].note, state._trace.outputs[0].note]);
    expect(notes[0]).toContain("mapped over 8 devices");
    // pmap fixes the layout: every selector is disabled, with the reason as its title.
    const selects = [...el.querySelectorAll<HTMLSelectElement>(".sw-tr-leaf select")];
    expect(selects.length).toBeGreaterThan(0);
    for (const s of selects) expect(s.disabled).toBe(true);
    expect(state._trace.jaxpr).toContain("shard_map");
    expect(el.querySelector(".sw-tr-chose")!.textContent).toBe(
      `pmap's out_axes give ${state._trace.outputs[0].spec_str}`,
    );
  });
});
