import { describe, expect, it } from "vitest";
import { WhyPanel, highlightLeaves, isWhy, type WhyMsg, type WhyRequest } from "../../function/why";

function answer(over: Partial<WhyMsg> = {}): WhyMsg {
  return {
    type: "why",
    index: 1,
    ok: true,
    error: "",
    text: "all-gather of w at the matmul on line 8: …",
    known: true,
    checked: "agrees with XLA's own dump of this compile",
    op: "f.py:8",
    inputs: [{ index: 1, label: "w", spec: "split over x on dim 1", where: "" }],
    outputs: [],
    constraints: [{ index: 0, label: "constraint 0", spec: "P('y', None)", where: "f.py:9" }],
    fixes: null,
    applied: -1,
    touches: [{ what: "f32[32, 64]", gradient_of: "", inputs: ["w"], outputs: ["out"] }],
    leaves_note: "",
    ...over,
  };
}

describe("why panel", () => {
  it("lights leaves by side and index, and only those", () => {
    const root = document.createElement("div");
    for (const [side, i] of [["in", 0], ["in", 1], ["out", 0]] as const) {
      const e = document.createElement("div");
      e.dataset.side = side;
      e.dataset.index = String(i);
      root.append(e);
    }
    highlightLeaves(root, [1], [0]);
    const lit = [...root.querySelectorAll<HTMLElement>(".sw-why-lit")].map((e) => `${e.dataset.side}${e.dataset.index}`);
    expect(lit).toEqual(["in1", "out0"]);
    highlightLeaves(root, [], []);
    expect(root.querySelectorAll(".sw-why-lit").length).toBe(0);
  });

  it("asks, shows the answer, asks for fixes, and applies one", () => {
    const sent: WhyRequest[] = [];
    let lit: number[][] = [];
    const panel = new WhyPanel(document, (m) => sent.push(m), (i, o) => (lit = [i, o]));
    document.body.append(panel.el);
    panel.ask(1);
    expect(sent).toEqual([{ type: "why", index: 1 }]);
    expect(isWhy(answer())).toBe(true);
    panel.receive(answer({ index: 0 })); // an answer to another question: ignored
    expect(panel.el.textContent).toContain("asking why collective 2");
    panel.receive(answer());
    expect(panel.el.textContent).toContain("all-gather of w at the matmul on line 8");
    expect(panel.el.textContent).toContain("constraint · constraint 0 · P('y', None) · f.py:9");
    expect(lit).toEqual([[1], []]);
    panel.el.querySelector<HTMLButtonElement>(".sw-why-find")!.click();
    expect(sent.at(-1)).toEqual({ type: "why", index: 1, fixes: true });
    const fix = { what: "lay w out as P(None, None)", removes: true, collectives: 1, peak: 2048, error: "" };
    panel.receive(answer({ fixes: [fix, { ...fix, what: "bad", error: "does not compile" }] }));
    expect(panel.el.querySelectorAll(".sw-why-apply").length).toBe(1); // none for a fix that fails
    expect(panel.el.textContent).toContain("removes it · 1 collective · peak 2 KiB per device");
    panel.el.querySelector<HTMLButtonElement>(".sw-why-apply")!.click();
    expect(sent.at(-1)).toEqual({ type: "why", index: 1, apply: 0 });
  });

  it("shows the leaves each array it carries touches, and whose gradient it is", () => {
    const panel = new WhyPanel(document, () => {}, () => {});
    panel.ask(1);
    const grads = [
      { what: "f32[]", gradient_of: "", inputs: ["p['w1']", "batch['x']"], outputs: ["out[0]"] },
      { what: "f32[64, 32]", gradient_of: "p['w1']", inputs: ["p['w1']", "batch['x']"], outputs: ["out[1]['w1']"] },
    ];
    panel.receive(answer({ touches: grads }));
    const rows = [...panel.el.querySelectorAll(".sw-why-touch")].map((e) => e.textContent);
    expect(rows).toEqual([
      "carries f32[] · from p['w1'], batch['x'] · into out[0]",
      "carries f32[64, 32] · gradient of p['w1'] · from p['w1'], batch['x'] · into out[1]['w1']",
    ]);
    panel.receive(answer({ touches: [], leaves_note: "unknown: the parameters do not line up" }));
    expect(panel.el.querySelector(".sw-why-touch")).toBeNull();
    expect(panel.el.textContent).toContain("leaves: unknown: the parameters do not line up");
  });

  it("an unknown cause offers no fixes; a refusal is shown in words", () => {
    const panel = new WhyPanel(document, () => {}, () => {});
    panel.ask(1);
    panel.receive(answer({ known: false, text: "cause unknown: GSPMD" }));
    expect(panel.el.querySelector(".sw-why-find")).toBeNull();
    panel.ask(1);
    panel.receive(answer({ ok: false, error: "collective 1 is not in the layout shown" }));
    expect(panel.el.querySelector(".sw-error")!.textContent).toBe("collective 1 is not in the layout shown");
  });
});
