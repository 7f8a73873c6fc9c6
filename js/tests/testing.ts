// Shared by the rendering tests: mount an array view on a fake model, clean up after each test.
import { ArrayView } from "../array/view";
import { FakeModel } from "./fake_model";
import * as fx from "./fixtures";

const cleanups: (() => void)[] = [];

export function mount(f: fx.Fixture, extra: Record<string, unknown> = {}) {
  const model = new FakeModel({ ...fx.traitsOf(f), ...extra });
  const el = document.createElement("div");
  document.body.append(el);
  const view = new ArrayView(model, el);
  const dispose = () => view.dispose();
  cleanups.push(dispose);
  return { model, el, dispose };
}

/** Dispose every mounted view and empty the page (call from afterEach). */
export function unmountAll(): void {
  cleanups.splice(0).forEach((c) => c());
  document.body.replaceChildren();
}

/** The renderer batches trait changes into one update per microtask. */
export const flush = () => new Promise<void>((r) => setTimeout(r, 0));
