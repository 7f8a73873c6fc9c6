// The static picture the kernel displays beside each view (src/shardwidget/views/fallback.py) is
// for notebooks read without a live model. While a live view of the model is on the page, a style
// rule hides it (the picture's output area too): a rule rather than removing nodes, because the
// kernel redraws the picture (update_display) and the front end renders it afresh each time.
// The rule goes when the last live view of that model goes, so the picture shows again.

/** The trait that names a view's picture (Python: ShardView._fallback_id). */
export interface FallbackTraits {
  _fallback_id?: string;
}

const ATTR = "data-shardwidget-fallback";
const live = new Map<string, { count: number; style: HTMLStyleElement }>();

/** The CSS that hides the picture with this id, and its output area in JupyterLab. */
export function hideRule(id: string): string {
  const sel = `[${ATTR}="${id}"]`;
  return `${sel}{display:none!important}.jp-OutputArea-child:has(${sel}){display:none!important}`;
}

/** Hide the picture of fallback id `id` while the returned function is not called. */
export function hideFallback(doc: Document, id: string | undefined): () => void {
  if (!id || !/^[A-Za-z0-9_-]{1,80}$/.test(id) || !doc.head) return () => {};
  let entry = live.get(id);
  if (!entry || !entry.style.isConnected) {
    const style = doc.createElement("style");
    style.dataset.shardwidgetHides = id;
    style.textContent = hideRule(id);
    doc.head.append(style);
    entry = { count: 0, style };
    live.set(id, entry);
  }
  entry.count += 1;
  const mine = entry;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    mine.count -= 1;
    if (mine.count <= 0) {
      mine.style.remove();
      if (live.get(id) === mine) live.delete(id);
    }
  };
}
