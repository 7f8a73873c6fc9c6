// The saved page (ShardView.save_html): the renderer with a stand-in for anywidget's model and
// no kernel. Built as its own bundle, src/shardwidget/static/page.js, that src/shardwidget/_page.py
// inlines into the page. On load it reads the page's data,
//   <script type="application/json" id="shardwidget-data">{"state": {...}, "answers": {...}}</script>
// (synced traits; layouts the page carries, by stateKey; binary values as {"__b64__": base64}),
// mounts the view into #shardwidget-root, answers the controls' requests from `answers`, and sets
// window.__ready. The exports let a test page wire the same model to a live kernel instead.
import type { AnyRequestMsg, Layout, LayoutState, Stats } from "../wire";
import widget from "../widget";
import { LocalModel } from "../shared/local_model";
import { stateKey } from "../array/state";

/** The page's traits: whichever view it shows (array or function), as the kernel synced them. */
export type PageState = Record<string, unknown>;

/** One layout the page carries: the state that asks for it, and what the kernel sent for it. */
export interface Answer {
  state: LayoutState;
  layout: Layout;
  stats: Stats;
}

export const NO_LAYOUT = "this layout was not saved in this page (it has no kernel to compute it)";
export const NO_KERNEL =
  "this page has no kernel: it shows the function as it was compiled when saved";
export const NO_KERNEL_TREE = "this page has no kernel: it shows the tree as laid out when saved";

/** The bytes of a base64 string: the browser's own decoder where it has one (Uint8Array.fromBase64:
 *  Chromium 140, Firefox 133, Safari 18.2), else atob and a loop over the characters, which a
 *  fresh page runs in unoptimised code (in Chromium 156 that loop is most of a 256-device page's
 *  revive: 3.1 ms with it, 1.2 ms without). */
export function fromBase64(b64: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  if (typeof native === "function") return native.call(Uint8Array, b64);
  const s = atob(b64);
  const u = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return u;
}

/** JSON as Python wrote it, with binary values ({"__b64__": base64}) turned into DataViews: a
 *  revived copy, the value itself left as it was (a stored answer, revived each time asked). */
export function revive(v: unknown): unknown {
  return reviveOwned(structuredClone(v));
}

/** `revive` for JSON just parsed, which the caller owns: binary values become DataViews where
 *  they sit and nothing else is copied. A saved page's first state is revived so before its first
 *  render: a copy of every object and array (about 170 KB at 256 devices) would be garbage the
 *  page's first young-generation collection then has to make room for. */
export function reviveOwned(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === "object") {
        const y = reviveOwned(x);
        if (y !== x) v[i] = y;
      }
    }
    return v;
  }
  const o = v as Record<string, unknown>;
  if (typeof o.__b64__ === "string") {
    const u = fromBase64(o.__b64__);
    return new DataView(u.buffer, u.byteOffset, u.byteLength);
  }
  for (const k in o) {
    const x = o[k];
    if (x !== null && typeof x === "object") {
      const y = reviveOwned(x);
      if (y !== x) o[k] = y;
    }
  }
  return o;
}

/** Where the page's model sends a request (the saved page: answerFrom; a test: a list). */
export type Send = (msg: AnyRequestMsg, model: PageModel) => void;

/** The stand-in for anywidget's model: a LocalModel that hands what the view sends to `send`. */
export class PageModel extends LocalModel<PageState> {
  constructor(
    state: PageState,
    private readonly sendTo: Send,
  ) {
    super(state);
  }

  override send(content: unknown): void {
    this.sendTo(content as AnyRequestMsg, this);
  }

  /** Apply a patch of traits as the kernel would: every key changes, then "change". */
  push(patch: PageState): void {
    for (const k in patch) this.data[k] = patch[k];
    for (const k in patch) this.emit(`change:${k}`);
    this.emit("change");
  }

  /** Deliver a custom message, as from the kernel. */
  emitCustom(content: unknown): void {
    this.emit("msg:custom", content, []);
  }
}

export function createModel(state: PageState, send: Send): PageModel {
  return new PageModel(state, send);
}

/** The saved page's `send`: a request whose state the page carries gets that layout, any other
 *  an error in words; either way the result arrives on the next task, as from a kernel. */
export function answerFrom(answers: Record<string, unknown>): Send {
  let fresh = 2_000_000; // layout keys above the saved ones: each answer is a new layout
  return (msg, model) => {
    if (msg.type === "tree_select") {
      // A tree page's leaf click: the grid it carries for that leaf, else nothing (the view
      // says the page left that leaf out).
      const ref = answers[`leaf:${msg.leaf}`] as { grid?: string } | undefined;
      const grid = ref?.grid ? (revive(answers[ref.grid]) as Record<string, { key: number }>) : null;
      if (!grid) return;
      const key = ++fresh;
      setTimeout(
        () =>
          model.push({
            _layout: { ...grid._layout, key },
            _options: grid._options,
            _stats: { ...grid._stats, key },
            selected: msg.leaf,
          }),
        0,
      );
      return;
    }
    if (msg.type !== "request" && msg.type !== "trace_request" && msg.type !== "tree_request") return; // no kernel to ask
    setTimeout(() => {
      const raw = msg.type === "request" ? answers[stateKey(msg.state)] : undefined;
      if (raw) {
        const a = revive(raw) as Answer;
        model.push({ ...a.state, _layout: a.layout, _stats: a.stats, error: "" });
      } else {
        const why = { request: NO_LAYOUT, trace_request: NO_KERNEL, tree_request: NO_KERNEL_TREE };
        model.push({ error: why[msg.type] });
      }
      const error = raw ? "" : String(model.get("error"));
      model.emitCustom({ type: "result", seq: msg.seq, ok: !!raw, error });
    }, 0);
  };
}

/** Render the view into `el`; returns its dispose. */
export function mount(el: HTMLElement, model: PageModel): () => void {
  return widget.render({ model, el });
}

declare global {
  interface Window {
    __ready?: boolean;
  }
}

function boot(): void {
  const data = document.getElementById("shardwidget-data");
  const root = document.getElementById("shardwidget-root");
  if (!data || !root) return;
  const { state, answers } = JSON.parse(data.textContent ?? "{}") as {
    state: PageState;
    answers: Record<string, unknown>;
  };
  mount(root, createModel(reviveOwned(state) as PageState, answerFrom(answers ?? {})));
  window.__ready = true;
}

if (typeof document !== "undefined") boot();
