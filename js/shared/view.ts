// The base of both views (array view, function view): what they share with the kernel.
//   - listening to the model (trait changes, custom messages), and letting go of it on dispose;
//   - coalescing updates: changes mark the view, one flush per microtask redraws it;
//   - the request boundary: a RequestQueue (one request in flight, newer states replace the
//     pending one) and matching the kernel's ResultMsg to it by seq.
import type { AnyModel } from "@anywidget/types";
import type { ResultMsg } from "../wire";
import { RequestQueue, type QueueOptions } from "./requests";
import { injectStyles, ROOT_CLASS } from "./styles";
import { el as mk } from "./dom";
import { isPicture, PictureButtons } from "./picture";

/** A custom message from the kernel that answers a request. */
function isResult(msg: unknown): msg is ResultMsg {
  if (typeof msg !== "object" || msg === null) return false;
  const m = msg as Partial<ResultMsg>;
  return m.type === "result" && typeof m.seq === "number";
}

/** A payload trait that has been published: Python's Dict traits start as {} (no key yet). */
export function published<T extends { key: number }>(v: T | null | undefined): T | null {
  return v && typeof v === "object" && typeof v.key === "number" ? v : null;
}

/** The traits every view has (ArrayModel, FunctionModel). */
interface ViewTraits {
  error: string;
  busy: boolean;
}

export abstract class BaseView<M extends ViewTraits, S, Req> {
  readonly root: HTMLElement;
  protected readonly doc: Document;
  protected readonly queue: RequestQueue<S, Req>;
  /** The error of the last result that answered one of this view's requests ("" when it passed). */
  protected lastResultError = "";
  protected disposed = false;
  /** "save picture": SVG / PNG of view.to_svg(), shown where a kernel answers. */
  readonly picture: PictureButtons;
  private scheduled = false;
  private unsub: (() => void)[] = [];

  constructor(
    protected readonly model: AnyModel<M>,
    el: HTMLElement,
    rootClass: string,
    queue: QueueOptions<S, Req>,
  ) {
    this.doc = el.ownerDocument;
    injectStyles(el);
    this.root = mk(this.doc, "div", `${ROOT_CLASS} ${rootClass}`.trim());
    this.queue = new RequestQueue<S, Req>((msg) => this.model.send(msg), queue);
    this.queue.onChange = () => this.requestsChanged(false);
    this.picture = new PictureButtons(this.doc, (msg) => this.model.send(msg));
    this.on("msg:custom", (msg) => this.onCustom(msg));
  }

  /** Listen to a model event for the life of the view. */
  protected on(event: string, fn: (...args: unknown[]) => void): void {
    this.model.on(event, fn);
    this.unsub.push(() => this.model.off(event, fn));
  }

  /** Listen to changes of these traits. */
  protected onChange(traits: readonly (keyof M & string)[], fn: () => void): void {
    for (const t of traits) this.on(`change:${t}`, fn);
  }

  /** Flush once, at the end of the current task (bursts of changes make one redraw). */
  protected schedule(): void {
    if (this.scheduled || this.disposed) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Apply pending updates now. */
  flush(): void {
    this.scheduled = false;
    if (!this.disposed) this.render();
  }

  /** Draw what changed since the last flush. */
  protected abstract render(): void;

  /** The request queue changed (a request went out or was answered): `result` when a result
   *  answered it (lastResultError is then up to date). */
  protected abstract requestsChanged(result: boolean): void;

  /** Ask the kernel for this state (coalesced with the ones not sent yet). */
  request(state: S): void {
    this.queue.submit(state);
  }

  private onCustom(msg: unknown): void {
    if (isPicture(msg)) {
      void this.picture.receive(msg);
      return;
    }
    if (!isResult(msg) || !this.queue.handleResult(msg)) return;
    this.lastResultError = msg.ok ? "" : msg.error || "";
    this.requestsChanged(true);
  }

  /** For tests / debugging. */
  get requestQueue(): RequestQueue<S, Req> {
    return this.queue;
  }

  dispose(): void {
    this.disposed = true;
    this.picture.dispose();
    this.queue.dispose();
    for (const u of this.unsub) u();
    this.unsub = [];
    this.root.remove();
  }
}
