import { describe, expect, it } from "vitest";
import { Window } from "happy-dom";
import { hideFallback, hideRule } from "../../shared/fallback";

describe("hideFallback", () => {
  it("hides the picture while a live view is shown, and shows it again after the last", () => {
    const doc = new Window().document as unknown as Document;
    const a = hideFallback(doc, "shardwidget-abc");
    const b = hideFallback(doc, "shardwidget-abc");
    const rules = () => [...doc.head.querySelectorAll("style")].map((s) => s.textContent);
    expect(rules()).toEqual([hideRule("shardwidget-abc")]);
    a();
    a(); // twice: counted once
    expect(rules()).toHaveLength(1);
    b();
    expect(rules()).toHaveLength(0);
  });

  it("ignores a missing or odd id (no rule that could hide other output)", () => {
    const doc = new Window().document as unknown as Document;
    hideFallback(doc, undefined);
    hideFallback(doc, "");
    hideFallback(doc, 'x"]{}*{display:none');
    expect(doc.head.querySelectorAll("style")).toHaveLength(0);
  });

  it("its rule matches only the picture with that id", () => {
    const doc = new Window().document as unknown as Document;
    doc.body.innerHTML =
      '<div data-shardwidget-fallback="shardwidget-abc">a</div><div data-shardwidget-fallback="other">b</div>';
    const sel = hideRule("shardwidget-abc").split("{")[0];
    expect([...doc.querySelectorAll(sel)].map((e) => e.textContent)).toEqual(["a"]);
  });
});
