import { afterEach, describe, expect, it, vi } from "vitest";
import { answerFrom, createModel, fromBase64, mount, NO_KERNEL, NO_LAYOUT, revive, reviveOwned } from "../../static/page";
import { stateKey } from "../../array/state";
import type { RequestMsg, TraceRequestMsg } from "../../wire";
import * as fx from "../fixtures";

const b64 = (bytes: number[]) => ({ __b64__: btoa(String.fromCharCode(...bytes)) });

describe("saved page: revive", () => {
  it("turns {__b64__} objects into DataViews, at any depth, and leaves the rest", () => {
    const v = revive({ a: b64([1, 2, 3]), b: [{ c: b64([255]) }, 4, null], d: "x" }) as {
      a: DataView;
      b: [{ c: DataView }, number, null];
      d: string;
    };
    expect(v.a).toBeInstanceOf(DataView);
    expect([v.a.getUint8(0), v.a.getUint8(1), v.a.getUint8(2)]).toEqual([1, 2, 3]);
    expect(v.b[0].c.getUint8(0)).toBe(255);
    expect(v.b.slice(1)).toEqual([4, null]);
    expect(v.d).toBe("x");
  });

  it("reviveOwned gives what revive gives, in the objects and arrays it was handed", () => {
    const json = '{"a":{"__b64__":"AQID"},"b":[{"c":{"__b64__":"/w=="}},4,null,[1,[2]]],"d":"x","e":{"f":[]}}';
    const copied = revive(JSON.parse(json)) as Record<string, unknown>;
    const parsed = JSON.parse(json) as { b: unknown[]; e: object };
    const { b, e } = parsed;
    const nested = b[0];
    const owned = reviveOwned(parsed) as { a: DataView; b: [{ c: DataView }, number, null, unknown[]]; e: object };
    expect(owned).toBe(parsed); // nothing copied: the same objects, binary values replaced
    expect(owned.b).toBe(b);
    expect(owned.b[0]).toBe(nested);
    expect(owned.e).toBe(e);
    expect(owned).toEqual(copied);
    expect([owned.a.getUint8(0), owned.a.getUint8(2)]).toEqual([1, 3]);
    expect(owned.b[0].c.getUint8(0)).toBe(255);
    // once more changes nothing (a DataView has no keys to walk)
    expect(reviveOwned(owned)).toEqual(copied);
    expect(reviveOwned(5)).toBe(5);
    expect(reviveOwned(null)).toBe(null);
  });

  it("decodes base64 with the browser's Uint8Array.fromBase64 where there is one, else atob, to the same bytes", () => {
    const bytes = Array.from({ length: 300 }, (_, i) => (i * 37) % 256);
    const text = btoa(String.fromCharCode(...bytes));
    const U = Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array };
    const had = Object.prototype.hasOwnProperty.call(U, "fromBase64");
    const own = U.fromBase64;
    try {
      delete U.fromBase64;
      expect([...fromBase64(text)]).toEqual(bytes); // atob and the loop
      const native = vi.fn((s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0)));
      U.fromBase64 = native;
      expect([...fromBase64(text)]).toEqual(bytes);
      expect(native).toHaveBeenCalledWith(text);
      const dv = revive({ b: { __b64__: text } }) as { b: DataView };
      expect(native).toHaveBeenCalledTimes(2);
      expect(dv.b.byteLength).toBe(300);
      expect(dv.b.getUint8(299)).toBe(bytes[299]);
    } finally {
      if (had) U.fromBase64 = own;
      else delete U.fromBase64;
    }
  });
});

describe("saved page: model", () => {
  afterEach(() => vi.useRealTimers());

  it("push sets every key, then fires change:<key> for each and change", () => {
    const m = createModel({ a: 1, b: 2 }, () => {});
    const seen: string[] = [];
    for (const ev of ["change:a", "change:b", "change"]) m.on(ev, () => seen.push(`${ev}:${m.get("a")}`));
    m.push({ a: 1, b: 3 });
    expect(seen).toEqual(["change:a:1", "change:b:1", "change:1"]);
    expect(m.get("b")).toBe(3);
  });

  it("answers a saved layout with its traits and an ok result, on the next task", () => {
    vi.useFakeTimers();
    const f = fx.fx8();
    const other = fx.fxReplicated(8);
    const state = { ...other.state, memory_kind: "device" };
    const answers = { [stateKey(state)]: { state, layout: other.layout, stats: other.stats } };
    const m = createModel({ ...fx.traitsOf(f) }, answerFrom(answers));
    const results: unknown[] = [];
    m.on("msg:custom", (c) => results.push(c));
    const msg: RequestMsg = { type: "request", seq: 7, state };
    m.send(msg);
    expect(results).toEqual([]);
    vi.runAllTimers();
    expect(m.get("_layout")).toEqual(other.layout);
    expect(m.get("spec")).toEqual(state.spec);
    expect(m.get("error")).toBe("");
    expect(results).toEqual([{ type: "result", seq: 7, ok: true, error: "" }]);
  });

  it("refuses a layout the page does not carry, and any re-compile, in words", () => {
    vi.useFakeTimers();
    const f = fx.fx8();
    const m = createModel({ ...fx.traitsOf(f) }, answerFrom({}));
    const results: { ok: boolean; error: string }[] = [];
    m.on("msg:custom", (c) => results.push(c as { ok: boolean; error: string }));
    m.send({ type: "request", seq: 1, state: f.state } satisfies RequestMsg);
    vi.runAllTimers();
    expect(m.get("error")).toBe(NO_LAYOUT);
    const trace: TraceRequestMsg = {
      type: "trace_request",
      seq: 2,
      state: { mesh_shape: [8], axis_names: ["x"], axis_types: ["auto"], in_specs: [], out_specs: [] },
    };
    m.send(trace);
    vi.runAllTimers();
    expect(results.map((r) => [r.ok, r.error])).toEqual([
      [false, NO_LAYOUT],
      [false, NO_KERNEL],
    ]);
  });

  it("mounts the array view and disposes it", () => {
    const el = document.createElement("div");
    document.body.append(el);
    const m = createModel({ ...fx.traitsOf(fx.fx8()) }, () => {});
    const dispose = mount(el, m);
    expect(el.querySelectorAll(".sw-block").length).toBe(8);
    dispose();
    expect(el.children.length).toBe(0);
    expect(m.listenerCount()).toBe(0);
    el.remove();
  });
});
