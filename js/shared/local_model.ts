// A model that lives in the page: the same get / set / on / off / send surface as anywidget's,
// with no kernel behind it. An embedded array view reads one (function/leaf.ts), the saved page
// stands in for the widget manager with one (static/page.ts), and so do the tests.

/** An event listener: `change:<trait>` gets no arguments, `msg:custom` gets (content, buffers). */
export type Handler = (content: unknown, buffers: DataView[]) => void;

export class LocalModel<T extends object> {
  protected data: T;
  private handlers = new Map<string, Set<Handler>>();
  readonly widget_manager = {
    get_model: (): Promise<never> => Promise.reject(new Error("no widget manager in a local model")),
  };

  constructor(initial: T) {
    this.data = { ...initial };
  }

  get<K extends keyof T>(key: K): T[K] {
    return this.data[key];
  }

  /** Set a trait; listeners of `change:<key>` hear of it when the value is a new one. */
  set<K extends keyof T>(key: K, value: T[K]): void {
    const old = this.data[key];
    this.data[key] = value;
    if (old !== value) this.emit(`change:${String(key)}`);
  }

  save_changes(): void {}

  /** Nothing listens: a subclass that has somewhere to send to overrides this. */
  send(_content: unknown): void {}

  on(event: "msg:custom", cb: Handler): void;
  on(event: string, cb: () => void): void;
  on(event: string, cb: Handler): void {
    let s = this.handlers.get(event);
    if (!s) this.handlers.set(event, (s = new Set()));
    s.add(cb);
  }

  off(event?: string | null, cb?: Handler | null): void {
    if (!event) this.handlers.clear();
    else if (!cb) this.handlers.delete(event);
    else this.handlers.get(event)?.delete(cb);
  }

  emit(event: string, content?: unknown, buffers: DataView[] = []): void {
    for (const h of [...(this.handlers.get(event) ?? [])]) h(content, buffers);
  }

  /** Listeners of `event`, or of every event (tests check that views clean up). */
  listenerCount(event?: string): number {
    if (event) return this.handlers.get(event)?.size ?? 0;
    let n = 0;
    for (const s of this.handlers.values()) n += s.size;
    return n;
  }
}
