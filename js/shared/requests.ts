// Request coalescing: at most one RequestMsg in flight; newer states replace the pending one.
import type { ResultMsg } from "../wire";

export interface QueueOptions<S, M> {
  /** Wait this long after the last change before sending (ms); default 0. */
  debounceMs?: number;
  /** Give up waiting for a result after this long (ms): the kernel may have restarted. */
  staleMs?: number;
  now?: () => number;
  /** First seq (a later one is used when the clock is ahead). Defaults to the clock, so that
   *  several views of one model use disjoint, increasing seqs. */
  seqBase?: number;
  /** Copy a state. */
  clone: (s: S) => S;
  /** The message that asks for a state (RequestMsg, TraceRequestMsg). */
  build: (seq: number, state: S) => M;
}

/** The queue is generic over the state it sends (LayoutState for an array view, TraceState for
 *  a function view) and the message that carries it. */
export class RequestQueue<S, M> {
  private seq: number;
  private pendingState: S | null = null;
  private flight: { seq: number; state: S; at: number } | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly debounceMs: number;
  private readonly staleMs: number;
  private readonly now: () => number;
  private readonly clone: (s: S) => S;
  private readonly build: (seq: number, state: S) => M;
  /** Called whenever pending / in-flight changes (to refresh the controls). */
  onChange: () => void = () => {};

  constructor(
    private readonly send: (msg: M) => void,
    opts: QueueOptions<S, M>,
  ) {
    this.clone = opts.clone;
    this.build = opts.build;
    this.debounceMs = opts.debounceMs ?? 0; // one-in-flight coalesces; a 0 ms timer still merges same-tick changes
    this.staleMs = opts.staleMs ?? 120_000;
    this.now = opts.now ?? (() => Date.now());
    this.seq = (opts.seqBase ?? this.now()) - 1;
  }

  /** The newest state asked for and not yet answered (pending, else in flight), or null. */
  get optimistic(): S | null {
    return this.pendingState ?? this.flight?.state ?? null;
  }

  get inFlightSeq(): number | null {
    return this.flight?.seq ?? null;
  }

  get pending(): S | null {
    return this.pendingState;
  }

  submit(state: S): void {
    this.pendingState = this.clone(state);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, this.debounceMs);
    this.onChange();
  }

  /** Handle a ResultMsg; returns true when it answered the request in flight. */
  handleResult(msg: ResultMsg): boolean {
    if (!this.flight || msg.seq !== this.flight.seq) return false;
    this.flight = null;
    if (this.timer === null) this.pump();
    this.onChange();
    return true;
  }

  private pump(): void {
    if (this.flight && this.now() - this.flight.at > this.staleMs) this.flight = null;
    if (this.flight || !this.pendingState) return;
    this.seq = Math.max(this.seq + 1, Math.floor(this.now()));
    const state = this.pendingState;
    this.pendingState = null;
    this.flight = { seq: this.seq, state, at: this.now() };
    this.send(this.build(this.seq, this.clone(state)));
    this.onChange();
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pendingState = null;
    this.flight = null;
  }
}
