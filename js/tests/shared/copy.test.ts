import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeModel } from "../fake_model";
import { FunctionView } from "../../function/view";
import * as tfx from "../function_fixtures";
import { copyText } from "../../shared/copy";
import { flush, mount, unmountAll } from "../testing";
import * as fx from "../fixtures";

afterEach(() => {
  unmountAll();
  vi.restoreAllMocks();
});

/** A clipboard that records what was written; `refuse` makes writeText reject. */
function fakeClipboard(refuse = false): string[] {
  const written: string[] = [];
  Object.defineProperty(window, "isSecureContext", { value: true, configurable: true });
  Object.defineProperty(window.navigator, "clipboard", {
    configurable: true,
    value: {
      writeText: (t: string) => (refuse ? Promise.reject(new Error("denied")) : (written.push(t), Promise.resolve())),
    },
  });
  return written;
}

describe("copy as code", () => {
  it("the array view's button copies the layout's code and says so", async () => {
    const written = fakeClipboard();
    const f = fx.fx8();
    f.layout.code = "mesh = jax.make_mesh((2, 4), ('x', 'y'))\nx = jax.device_put(x, s)";
    const { el } = mount(f);
    const btn = el.querySelector<HTMLButtonElement>("button.sw-copy")!;
    expect(btn.hidden).toBe(false);
    expect(btn.title).toContain("jax.make_mesh((2, 4)");
    btn.click();
    await flush();
    expect(written).toEqual([f.layout.code]);
    expect(btn.textContent).toBe("copied ✓");
  });

  it("follows a new layout and is hidden without code", async () => {
    fakeClipboard();
    const f = fx.fx8();
    const { el, model } = mount(f);
    model.set("_layout", { ...f.layout, key: 2, code: "" });
    await flush();
    expect(el.querySelector<HTMLButtonElement>("button.sw-copy")!.hidden).toBe(true);
  });

  it("falls back to execCommand when the clipboard API refuses", async () => {
    fakeClipboard(true);
    const exec = vi.fn(() => true);
    Object.defineProperty(document, "execCommand", { value: exec, configurable: true });
    expect(await copyText(document, "print(1)")).toBe(true);
    expect(exec).toHaveBeenCalledWith("copy");
    expect(document.querySelector("textarea")).toBeNull(); // the helper textarea is gone
  });

  it("the function view's button copies the trace's code", async () => {
    const written = fakeClipboard();
    const f = tfx.fxTraceLayerJit();
    f.trace.code = "f_sharded = jax.jit(f, in_shardings=(NamedSharding(mesh, P('x')),))";
    const model = new FakeModel(tfx.traceTraitsOf(f));
    const el = document.createElement("div");
    document.body.append(el);
    const view = new FunctionView(model, el);
    await flush();
    const shown = [...el.querySelectorAll<HTMLButtonElement>("button.sw-copy")].filter((b) => !b.hidden);
    expect(shown.length).toBe(1); // the view's own; its leaf cards carry no code
    shown[0].click();
    await flush();
    expect(written).toEqual([f.trace.code]);
    view.dispose();
  });
});
