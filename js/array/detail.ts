// Detail panel for a pinned block or device.
import type { Layout, Stats } from "../wire";
import {
  blockThumb,
  blockValues,
  drawnExtent,
  heatmapBox,
  isComplex,
  meanHides,
  poolText,
  thumbCanvas,
  thumbRange,
} from "./stats";
import { formatBytes, formatComplex, formatHalfOpen, formatNumber } from "../shared/text";
import { textColorOn } from "../shared/colors";
import { compressIds } from "./labels";
import { el, tableHead } from "../shared/dom";

export type Pin = { kind: "block"; block: number } | { kind: "device"; device: number };

export interface DetailInput {
  layout: Layout;
  stats: Stats | null;
  viewDims: number[];
  pin: Pin;
  colorOf(id: number): string;
  close(): void;
}


function kv(doc: Document, dl: HTMLElement, k: string, v: string | HTMLElement): void {
  const dt = el(doc, "dt", "", k);
  const dd = el(doc, "dd");
  if (typeof v === "string") dd.textContent = v;
  else dd.append(v);
  dl.append(dt, dd);
}

/** Unreduced layouts: each holder's partial statistics, one row per device (the block's value
 *  is the sum of these partials over the unreduced axes, held by no device). */
function partialsTable(doc: Document, layout: Layout, stats: Stats, ids: number[]): HTMLElement[] {
  const devIndex = new Map(layout.devices.ids.map((id, i) => [id, i]));
  const cplx = isComplex(layout.dtype);
  const names = ["min", "max", "mean", "std"].map((n) => (cplx ? `${n} |z|` : n));
  const tbl = el(doc, "table", "sw-devtable sw-partials");
  const tbody = el(doc, "tbody");
  for (const id of ids) {
    const row = stats.partials[devIndex.get(id) ?? -1] ?? null;
    const tr = el(doc, "tr");
    tr.dataset.device = String(id);
    tr.append(el(doc, "td", "", String(id)));
    for (let j = 0; j < 4; j++) tr.append(el(doc, "td", "", row ? formatNumber(row[j]) : "–"));
    tbody.append(tr);
  }
  tbl.append(tableHead(doc, ["device", ...names]), tbody);
  const axes = layout.unreduced.map((a) => `'${a}'`).join(", ");
  const why = el(
    doc,
    "p",
    "sw-muted",
    `Each device holds a partial value: this block is the sum of its holders' partials over ${axes}. Statistics of each partial:`,
  );
  return [el(doc, "h4", "", "Partial values (unreduced)"), why, tbl];
}

/** The shape of values table for a block: 2-D / 1-D (squeezing unit dims), else flat. */
function tableShape(sizes: number[]): [number, number] {
  const nz = sizes.filter((s) => s !== 1);
  const n = sizes.reduce((a, b) => a * b, 1);
  if (nz.length === 0) return [1, 1];
  if (nz.length === 1) return [1, nz[0]];
  if (nz.length === 2) return [nz[0], nz[1]];
  return [1, n];
}

/** The holders of a block: a heading with the count and the ids in runs ("Held by 64 devices:
 *  0–63"), then a table with a row per device (never clipped: it scrolls when long). */
function holdersTable(
  doc: Document,
  layout: Layout,
  ids: number[],
  current: number | null,
  colorOf: (id: number) => string,
): HTMLElement[] {
  const devIndex = new Map(layout.devices.ids.map((id, i) => [id, i]));
  const coords = layout.devices.coords;
  const cores = layout.devices.core_on_chip;
  const hasCoords = !!coords && ids.some((id) => (coords[devIndex.get(id) ?? -1]?.length ?? 0) > 0);
  const hasCore = !!cores;
  const anyRemote = ids.some((id) => {
    const i = devIndex.get(id);
    return i !== undefined && layout.devices.process[i] !== layout.devices.local_process;
  });
  const tbl = el(doc, "table", "sw-devtable");
  // An unreduced layout's holders hold different partials, not replicas.
  const heads = ["device", layout.unreduced?.length ? "partial" : "replica", "process", "memory", ...(hasCoords ? ["coords"] : []), ...(hasCore ? ["core"] : []), ...(anyRemote ? [""] : [])];
  const thead = tableHead(doc, heads);
  const tbody = el(doc, "tbody");
  const mem = layout.memory_kind || "–";
  ids.forEach((id, replica) => {
    const i = devIndex.get(id) ?? -1;
    const tr = el(doc, "tr");
    tr.dataset.device = String(id);
    if (id === current) tr.className = "sw-current";
    const color = colorOf(id);
    const sw = el(doc, "span", "sw-swatch", String(id));
    sw.style.background = color;
    sw.style.color = textColorOn(color);
    const td0 = el(doc, "td");
    td0.append(sw);
    tr.append(td0, el(doc, "td", "", String(replica)));
    const proc = i >= 0 ? layout.devices.process[i] : undefined;
    tr.append(el(doc, "td", "", proc === undefined ? "?" : String(proc)));
    tr.append(el(doc, "td", "", mem));
    if (hasCoords) {
      const c = i >= 0 ? coords![i] : undefined;
      tr.append(el(doc, "td", "", c && c.length ? `(${c.join(",")})` : "–"));
    }
    if (hasCore) tr.append(el(doc, "td", "", i >= 0 ? String(cores![i]) : "–"));
    if (anyRemote) {
      const remote = proc !== undefined && proc !== layout.devices.local_process;
      tr.append(el(doc, "td", remote ? "sw-remote" : "", remote ? `not addressable (process ${proc})` : ""));
    }
    tbody.append(tr);
  });
  tbl.append(thead, tbody);
  const n = ids.length;
  const heading = el(doc, "h4", "", n > 1 ? `Held by ${n} devices` : "Held by");
  const nodes: HTMLElement[] = [heading];
  if (n > 1) {
    const runs = el(doc, "p", "sw-holder-ids", compressIds(ids));
    runs.title = ids.join(", ");
    nodes.push(runs);
  }
  const wrap = el(doc, "div", "sw-scroll sw-holders");
  if (n > 12) {
    // A scrolling region must be reachable from the keyboard.
    wrap.tabIndex = 0;
    wrap.setAttribute("role", "region");
    wrap.setAttribute("aria-label", `the ${n} devices holding this block`);
  }
  wrap.append(tbl);
  nodes.push(wrap);
  return nodes;
}

/** The detail pane: hidden until something is pinned. Pointing at a row of its holders table
 *  calls `hoverDevice` with the row's device (null on leaving the pane), so the mesh and the
 *  grid light up that device and its block. */
export function detailSection(doc: Document, hoverDevice: (id: number | null) => void): HTMLElement {
  const section = el(doc, "section", "sw-detail");
  section.tabIndex = -1;
  section.setAttribute("aria-label", "details");
  section.hidden = true;
  section.addEventListener("mouseover", (e) => {
    const tr = (e.target as Element | null)?.closest?.("tr[data-device]") as HTMLElement | null;
    hoverDevice(tr ? Number(tr.dataset.device) : null);
  });
  section.addEventListener("mouseleave", () => hoverDevice(null));
  return section;
}

export function renderDetail(doc: Document, host: HTMLElement, inp: DetailInput): void {
  const { layout, stats, pin } = inp;
  const devIndex = new Map(layout.devices.ids.map((id, i) => [id, i]));
  let blockIdx = -1;
  if (pin.kind === "block") blockIdx = pin.block;
  else blockIdx = layout.blocks.findIndex((b) => b.d.includes(pin.device));
  const head = el(doc, "div", "sw-detail-head");
  const title = el(doc, "h3", "sw-detail-title");
  const close = el(doc, "button", "sw-close", "×");
  close.type = "button";
  close.title = "Close (Esc)";
  close.setAttribute("aria-label", "close details");
  close.addEventListener("click", () => inp.close());
  head.append(title, close);
  const body = el(doc, "div", "sw-detail-body");
  const nodes: HTMLElement[] = [head, body];

  if (pin.kind === "device") {
    title.textContent = `Device ${pin.device}`;
    if (!devIndex.has(pin.device)) {
      body.append(el(doc, "p", "sw-muted", "This device holds no part of the array."));
    }
  }
  const b = blockIdx >= 0 ? layout.blocks[blockIdx] : null;
  if (b) {
    if (pin.kind === "block") title.textContent = `Block ${blockIdx}`;
    const dl = el(doc, "dl", "sw-kv");
    kv(doc, dl, "index", b.i.map((r) => formatHalfOpen(r)).join(" × ") || "(scalar)");
    const shp = b.i.map((r) => r[1] - r[0]);
    kv(doc, dl, "shard shape", `(${shp.join(", ")}${shp.length === 1 ? "," : ""})`);
    kv(doc, dl, "bytes", `${formatBytes(layout.bytes_per_device)} per device`);
    kv(doc, dl, "memory kind", layout.memory_kind || "–");
    const kind = layout.devices.kind && layout.devices.kind !== layout.devices.platform ? ` · ${layout.devices.kind}` : "";
    kv(doc, dl, "platform", `${layout.devices.platform}${kind}`);
    body.append(dl);

    // Every holder, one row each: id, replica, process, memory kind, coords / core (TPU).
    body.append(...holdersTable(doc, layout, b.d, pin.kind === "device" ? pin.device : null, inp.colorOf));

    // Statistics.
    if (stats && stats.status === "ready" && layout.unreduced?.length) {
      body.append(...partialsTable(doc, layout, stats, b.d));
    } else if (stats && stats.status === "ready") {
      const st = stats.blocks[blockIdx];
      if (st) {
        const cplx = isComplex(layout.dtype);
        const sdl = el(doc, "dl", "sw-kv sw-stats");
        const names = ["min", "max", "mean", "std"];
        names.forEach((n, j) => kv(doc, sdl, cplx ? `${n} |z|` : n, formatNumber(st[j])));
        kv(doc, sdl, "NaN", String(st[4] ?? 0));
        kv(doc, sdl, "Inf", String(st[5] ?? 0));
        body.append(el(doc, "h4", "", "Statistics"), sdl);
      } else {
        body.append(el(doc, "p", "sw-muted", "No statistics: the block is on another process."));
      }
      const vals = blockValues(layout, stats, blockIdx);
      if (vals) {
        const [rows, cols] = tableShape(shp);
        const vt = el(doc, "table", "sw-values");
        for (let r = 0; r < rows; r++) {
          const tr = el(doc, "tr");
          for (let c = 0; c < cols; c++) {
            const k = r * cols + c;
            const t = vals.im ? formatComplex(vals.re[k], vals.im[k]) : formatNumber(vals.re[k]);
            tr.append(el(doc, "td", "", t));
          }
          vt.append(tr);
        }
        const wrap = el(doc, "div", "sw-scroll");
        wrap.append(vt);
        body.append(el(doc, "h4", "", "Values"), wrap);
      }
      const t = blockThumb(stats, blockIdx, inp.viewDims);
      if (t) {
        const cv = thumbCanvas(doc, t);
        if (cv) {
          cv.classList.add("sw-thumb-big");
          // Drawn with the block's aspect (rows down, columns across), not the thumbnail's
          // pixel counts: a tall block is drawn tall.
          const [er, ec] = drawnExtent(layout, blockIdx, inp.viewDims);
          const [w, h] = heatmapBox(er, ec, 200, 140);
          cv.style.width = `${w}px`;
          cv.style.height = `${h}px`;
          const fig = el(doc, "figure", "sw-fig");
          const pool = poolText(layout, blockIdx, t, inp.viewDims);
          const cap = el(
            doc,
            "figcaption",
            "sw-muted",
            `heatmap ${formatNumber(stats.vmin)} … ${formatNumber(stats.vmax)}` +
              (pool ? ` · each pixel ${pool}` : ""),
          );
          const bar = el(doc, "span", "sw-rampbar");
          fig.append(cv, cap, bar);
          const st = stats.blocks[blockIdx];
          if (pool && st && meanHides(t, stats.vmin, stats.vmax, st[0], st[1])) {
            const [lo, hi] = thumbRange(t, stats.vmin, stats.vmax);
            fig.append(
              el(
                doc,
                "p",
                "sw-heat-note",
                `The means hide the data: they span ${formatNumber(lo)} … ${formatNumber(hi)}, ` +
                  `the block ${formatNumber(st[0])} … ${formatNumber(st[1])} (min … max).`,
              ),
            );
          }
          body.append(fig);
        }
      }
    } else if (stats && stats.status === "unavailable") {
      body.append(el(doc, "p", "sw-muted", stats.message || "Statistics unavailable."));
    } else {
      body.append(el(doc, "p", "sw-muted", "statistics pending…"));
    }
  }
  host.replaceChildren(...nodes);
}
