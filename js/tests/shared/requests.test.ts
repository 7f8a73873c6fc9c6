import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RequestQueue } from "../../shared/requests";
import { layoutRequests } from "../../array/state";
import type { LayoutState, RequestMsg } from "../../wire";

const st = (n: number): LayoutState => ({
  mesh_shape: [n],
  axis_names: ["x"],
  axis_types: ["auto"],
  spec: [null],
  devices: "all",
  memory_kind: "device",
});

describe("RequestQueue", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("debounces rapid changes into one request with the last state", () => {
    const sent: RequestMsg[] = [];
    const q = new RequestQueue((m) => sent.push(m), { ...layoutRequests, seqBase: 1, now: () => 0 });
    for (let i = 1; i <= 20; i++) q.submit(st(i));
    expect(sent.length).toBe(0);
    vi.advanceTimersByTime(40);
    expect(sent.length).toBe(1);
    expect(sent[0].state.mesh_shape).toEqual([20]);
    expect(sent[0].type).toBe("request");
  });

  it("keeps at most one in flight and sends only the newest pending on result", () => {
    const sent: RequestMsg[] = [];
    const q = new RequestQueue((m) => sent.push(m), { ...layoutRequests, seqBase: 1, now: () => 0 });
    q.submit(st(1));
    vi.advanceTimersByTime(40);
    expect(sent.length).toBe(1);
    for (let i = 2; i <= 50; i++) {
      q.submit(st(i));
      vi.advanceTimersByTime(5 + (i % 40));
    }
    vi.advanceTimersByTime(100);
    expect(sent.length).toBe(1); // still waiting for the first result
    expect(q.optimistic!.mesh_shape).toEqual([50]);
    // a stale / foreign result is ignored
    expect(q.handleResult({ type: "result", seq: 999, ok: true, error: "" })).toBe(false);
    expect(sent.length).toBe(1);
    expect(q.handleResult({ type: "result", seq: sent[0].seq, ok: true, error: "" })).toBe(true);
    expect(sent.length).toBe(2);
    expect(sent[1].state.mesh_shape).toEqual([50]);
    expect(sent[1].seq).toBeGreaterThan(sent[0].seq);
    // answering the last one leaves nothing
    q.handleResult({ type: "result", seq: sent[1].seq, ok: false, error: "nope" });
    vi.advanceTimersByTime(100);
    expect(sent.length).toBe(2);
    expect(q.optimistic).toBeNull();
    expect(q.inFlightSeq).toBeNull();
  });

  it("seqs increase strictly", () => {
    const sent: RequestMsg[] = [];
    const q = new RequestQueue((m) => sent.push(m), { ...layoutRequests, seqBase: 10, now: () => 0 });
    for (let i = 0; i < 5; i++) {
      q.submit(st(i + 1));
      vi.advanceTimersByTime(40);
      q.handleResult({ type: "result", seq: sent[sent.length - 1].seq, ok: true, error: "" });
    }
    expect(sent.map((m) => m.seq)).toEqual([10, 11, 12, 13, 14]);
  });

  it("gives up on a request that never got an answer", () => {
    let t = 0;
    const sent: RequestMsg[] = [];
    const q = new RequestQueue((m) => sent.push(m), { ...layoutRequests, seqBase: 1, now: () => t, staleMs: 1000 });
    q.submit(st(1));
    vi.advanceTimersByTime(40);
    t = 5000;
    q.submit(st(2));
    vi.advanceTimersByTime(40);
    expect(sent.length).toBe(2);
  });
});
