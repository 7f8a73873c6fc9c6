// A tiny in-memory stand-in for an anywidget model (tests and the dev preview).
/* eslint-disable @typescript-eslint/no-explicit-any */
type Handler = (...args: any[]) => void;

export class FakeModel {
  private data: Record<string, unknown>;
  private handlers = new Map<string, Set<Handler>>();
  /** Messages sent with send(). */
  sent: any[] = [];
  saves = 0;
  widget_manager = {
    get_model: async () => {
      throw new Error("no widget manager in FakeModel");
    },
  };
  /** Called on send() (e.g. to simulate a kernel). */
  onSend: ((msg: any) => void) | null = null;

  constructor(initial: Record<string, unknown>) {
    this.data = { ...initial };
  }

  get(key: string): any {
    return this.data[key];
  }

  set(key: string, value: unknown): void {
    const old = this.data[key];
    this.data[key] = value;
    if (old !== value) this.emit(`change:${key}`);
  }

  save_changes(): void {
    this.saves++;
  }

  on(event: string, cb: Handler): void {
    let s = this.handlers.get(event);
    if (!s) this.handlers.set(event, (s = new Set()));
    s.add(cb);
  }

  off(event?: string | null, cb?: Handler | null): void {
    if (!event) {
      this.handlers.clear();
      return;
    }
    if (!cb) this.handlers.delete(event);
    else this.handlers.get(event)?.delete(cb);
  }

  send(content: any): void {
    this.sent.push(content);
    this.onSend?.(content);
  }

  /** Deliver a custom message from the "kernel". */
  emitCustom(msg: any, buffers: DataView[] = []): void {
    this.emit("msg:custom", msg, buffers);
  }

  emit(event: string, ...args: any[]): void {
    for (const h of [...(this.handlers.get(event) ?? [])]) h(...args);
  }

  listenerCount(event?: string): number {
    if (event) return this.handlers.get(event)?.size ?? 0;
    let n = 0;
    for (const s of this.handlers.values()) n += s.size;
    return n;
  }
}
