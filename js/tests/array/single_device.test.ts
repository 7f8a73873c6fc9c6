// Issue 13 item 10: the find box suggests ids the array's own devices have.
import { afterEach, describe, expect, it } from "vitest";
import { mount, unmountAll } from "../testing";
import * as fx from "../fixtures";
import { findExamples, matchDevices, parseDeviceQuery } from "../../array/header";

afterEach(() => unmountAll());

const findBox = (el: HTMLElement) => el.querySelector<HTMLInputElement>("[data-key=find]")!;

describe("find box examples", () => {
  it("a single-device array suggests its one device, not 12, 12-15", () => {
    const { el } = mount(fx.fxSingle());
    expect(findBox(el).placeholder).toBe("0");
    expect(findBox(el).title).toContain("the only device");
    expect(findBox(el).title).not.toContain("12");
  });

  it("every suggestion parses and matches devices the layout has", () => {
    for (const f of [fx.fx8(), fx.fxSingle(), fx.fx256(), fx.fxReplicated(16)]) {
      const ids = f.layout.devices.ids;
      const ex = findExamples(ids);
      expect(ex.length).toBeGreaterThan(0);
      for (const e of ex) {
        const q = parseDeviceQuery(e);
        expect(q && !("error" in q), e).toBe(true);
        if (q && !("error" in q)) {
          const hit = matchDevices(q.ranges, ids);
          expect(hit.length, `${e} on ${ids.length} devices`).toBeGreaterThan(0);
          // every id the example names exists
          for (const [lo, hi] of q.ranges) expect(hit).toEqual(expect.arrayContaining([lo, hi]));
        }
      }
    }
    expect(findExamples(Array.from({ length: 8 }, (_, i) => i))).toEqual(["2", "0-3", "0,7"]);
    expect(findExamples(Array.from({ length: 4096 }, (_, i) => i))).toEqual(["12", "12-15", "3,7,9"]);
    expect(findExamples([5, 9])).toEqual(["9", "5,9"]);
  });

  it("8 devices suggest ids from 0-7 in the box itself", () => {
    const { el } = mount(fx.fx8());
    // ids first, then a mesh coordinate of the fixture's 2×4 mesh
    expect(findBox(el).placeholder).toMatch(/^2, 0-3, 0,7, \w+=1,\w+=\*$/);
  });
});
