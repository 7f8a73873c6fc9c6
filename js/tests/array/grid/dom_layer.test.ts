// The grid's and the mesh pane's markup, pinned. A first render writes each block and device cell
// from a few pieces of text that blocks of one size and cells of one label share (one holder's
// block on its own path; replicated and partial-sum blocks on the general one). The digests and
// strings are of the markup the block-by-block templates wrote before those paths existed
// (6091ed2), so one character changed anywhere fails here.
import { afterEach, describe, expect, it } from "vitest";
import { mount, unmountAll } from "../../testing";
import * as fx from "../../fixtures";
import * as gen from "../../wire/fixtures.gen";
import { FakeModel } from "../../fake_model";
import { ArrayView } from "../../../array/view";

const views: ArrayView[] = [];
afterEach(() => {
  views.splice(0).forEach((v) => v.dispose());
  unmountAll();
});

/** FNV-1a (32 bits) of a string's UTF-16 units: a digest to pin a long markup by. */
function fnv(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

function drawState(state: object): HTMLElement {
  const el = document.createElement("div");
  document.body.append(el);
  views.push(new ArrayView(new FakeModel({ ...state }), el));
  return el;
}

/** Digests of the grid's markup (less the atlas's blob URL, new on each draw) and the mesh
 *  pane's cells, and the first block and cell whole. */
function markup(el: HTMLElement): { grid: string; mesh: string; first: string; cell: string } {
  const grid = el.querySelector(".sw-grid")!;
  return {
    grid: fnv(grid.innerHTML.replace(/--sw-atlas:[^;"]*/g, "")),
    mesh: fnv(el.querySelector(".sw-mesh-body")?.innerHTML ?? ""),
    first: grid.firstElementChild?.outerHTML ?? "",
    cell: el.querySelector(".sw-dev")?.outerHTML ?? "",
  };
}

const cell8 =
  '<div class="sw-dev sw-ink-light sw-f12" data-device="0" style="background:#0072B2" tabindex="0" role="button" aria-label="device 0">0</div>';
const cell256 = '<div class="sw-dev sw-ink-light sw-f10" data-device="0" style="background:#8d1a1e">0</div>';

describe("grid and mesh markup", () => {
  it("one holder with a thumbnail: frame, atlas place and chip (8 and 256 devices)", () => {
    expect(markup(mount(fx.fx8()).el)).toEqual({
      grid: "0e705e07",
      mesh: "ed1b3515",
      first:
        '<div class="sw-block sw-has-thumb sw-t" data-block="0" style="border-width:14px;color:#0072B2;background-size:1416px 177px;background-position:-29.5px -29.5px"><span class="sw-label sw-chip">0</span></div>',
      cell: cell8,
    });
    expect(markup(mount(fx.fx256()).el)).toEqual({
      grid: "b05ccf9b",
      mesh: "360816dc",
      first:
        '<div class="sw-block sw-has-thumb sw-t" data-block="0" style="border-width:4px;color:#8d1a1e;background-size:5100px 50px;background-position:-2.5px -2.5px"><span class="sw-label sw-chip">0</span></div>',
      cell: cell256,
    });
  });

  it("one holder without a thumbnail (statistics pending): its colour and the ink that reads on it", () => {
    const pending = { ...(fx.traitsOf(fx.fx256())._stats as object), status: "pending" };
    expect(markup(mount(fx.fx256(), { _stats: pending }).el)).toEqual({
      grid: "2658f0a7",
      mesh: "360816dc",
      first:
        '<div class="sw-block" data-block="0" style="background:#8d1a1e"><span class="sw-label sw-ink-light">0</span></div>',
      cell: cell256,
    });
  });

  it("replicated, partly replicated and partial-sum blocks: stripes, thumbnail box, badge, Σ", () => {
    expect(markup(mount(fx.fxReplicated(8)).el)).toEqual({
      grid: "714d35c0",
      mesh: "585dde91",
      first:
        '<div class="sw-block sw-has-thumb sw-replicated" data-block="0" style="background:repeating-linear-gradient(135deg, #0072B2 0px 6px, #E69F00 6px 12px, #009E73 12px 18px, #CC79A7 18px 24px, #56B4E9 24px 30px, #D55E00 30px 36px, #F0E442 36px 42px, #332288 42px 48px)"><div class="sw-thumb" style="inset:8px;background-size:691.875px 141px;background-position:-38.4375px -47px"></div><span class="sw-label sw-chip">0–7 ×8</span></div>',
      cell: cell8,
    });
    expect(markup(mount(fx.fxPartial()).el)).toEqual({
      grid: "f330a640",
      mesh: "ed1b3515",
      first:
        '<div class="sw-block sw-has-thumb sw-replicated" data-block="0" style="background:repeating-linear-gradient(135deg, #0072B2 0px 6px, #E69F00 6px 12px, #009E73 12px 18px, #CC79A7 18px 24px)"><div class="sw-thumb" style="inset:14px;background-size:1255.5px 177px;background-position:-34.875px -29.5px"></div><span class="sw-label sw-chip">0–3 ×4</span></div>',
      cell: cell8,
    });
    expect(markup(drawState(gen.arrayUnreduced8))).toEqual({
      grid: "612d9489",
      mesh: "ed1b3515",
      first:
        '<div class="sw-block sw-replicated" data-block="0" style="background:repeating-linear-gradient(135deg, #0072B2 0px 6px, #56B4E9 6px 12px)"><span class="sw-label sw-chip">Σ 0,4</span></div>',
      cell: cell8,
    });
  });
});
