import { describe, expect, it } from "vitest";
import { compileWithControl } from "../../function/compile_with";

describe("a plan view's compile with", () => {
  it("offers the TPU and says which compiler is in use", () => {
    const chosen: string[] = [];
    const el = compileWithControl(document, { current: "cpu", tpu: "this TPU: v5e 16×16", why: "" }, (c) =>
      chosen.push(c),
    );
    const select = el.querySelector<HTMLSelectElement>('[data-key="compile-with"]')!;
    expect(select.value).toBe("cpu");
    expect([...select.options].map((o) => [o.textContent, o.disabled])).toEqual([
      ["CPU (simulated)", false],
      ["this TPU: v5e 16×16", false],
    ]);
    select.value = "tpu";
    select.dispatchEvent(new Event("change"));
    expect(chosen).toEqual(["tpu"]);
  });

  it("says in one line why there is no TPU, and a saved page only shows the choice", () => {
    const why = "the TPU compiler (libtpu) is not installed here: pip install 'shardwidget[tpu]'";
    const el = compileWithControl(document, { current: "cpu", tpu: "", why }, () => {});
    const tpu = el.querySelectorAll("option")[1];
    expect(tpu.disabled).toBe(true);
    expect(el.querySelector(".sw-compile-with-why")!.textContent).toBe(why);
    const frozen = compileWithControl(document, { current: "tpu", tpu: "this TPU: v5e 2×4", why: "" }, () => {}, "saved");
    expect(frozen.querySelector("select")!.disabled).toBe(true);
    expect(frozen.querySelector("select")!.value).toBe("tpu");
  });
});
