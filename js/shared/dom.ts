/** A small DOM helper shared by the panes: an element with a class and text. */
export function el<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  cls = "",
  text = "",
): HTMLElementTagNameMap[K] {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text) e.textContent = text;
  return e;
}

/** A table head row of column headers. */
export function tableHead(doc: Document, heads: string[]): HTMLTableSectionElement {
  const thead = el(doc, "thead");
  const tr = el(doc, "tr");
  for (const h of heads) {
    const th = el(doc, "th", "", h);
    th.scope = "col";
    tr.append(th);
  }
  thead.append(tr);
  return thead;
}

/** performance.mark, where the page has a performance API. */
export function mark(name: string): void {
  try {
    performance.mark(name);
  } catch {
    /* no performance API */
  }
}

/** performance.measure from a mark made by `mark`; nothing where that is impossible. */
export function measure(name: string, start: string): void {
  try {
    performance.measure(name, start);
  } catch {
    /* no performance API, or the start mark was cleared */
  }
}
