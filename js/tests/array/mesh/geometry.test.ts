// A device cell's markup (mesh/geometry.ts cellMarkup), pinned to what the cell template wrote
// before a label's text around the id was made once a label (6091ed2).
import { describe, expect, it } from "vitest";
import { CELL_A11Y, cellMarkup } from "../../../array/mesh/geometry";

describe("cellMarkup", () => {
  it("a condensed label on light ground, the background as the default head", () => {
    const want =
      '<div class="sw-dev sw-ink-dark sw-f9" data-device="123" style="background:#ffffff"><span class="sw-dev-sq" style="transform:scaleX(0.8)">123</span></div>';
    const lab = { fs: 9, squeeze: 0.8 };
    expect(cellMarkup(123, "#ffffff", lab, "")).toBe(want);
    expect(cellMarkup(123, "#ffffff", lab, "", ' style="background:#ffffff')).toBe(want);
    expect(cellMarkup(123, "#ffffff", lab, "")).toBe(want); // the label's text, made once, again
  });

  it("a focusable cell with a plain label, and one with no label and its own head", () => {
    expect(cellMarkup(7, "#332288", { fs: 12, squeeze: null }, CELL_A11Y)).toBe(
      '<div class="sw-dev sw-ink-light sw-f12" data-device="7" style="background:#332288" tabindex="0" role="button" aria-label="device 7">7</div>',
    );
    expect(cellMarkup(42, "#332288", null, CELL_A11Y, ' data-x="1" style="background:#332288;width:9px;height:9px')).toBe(
      '<div class="sw-dev" data-device="42" data-x="1" style="background:#332288;width:9px;height:9px" tabindex="0" role="button" aria-label="device 42"></div>',
    );
  });
});
