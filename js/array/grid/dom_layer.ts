// The DOM layer: up to CANVAS_THRESHOLD visible blocks, the grid is built as one HTML string and
// laid out by CSS grid tracks (labels are real text); highlights and the keyboard cursor are
// classes; the thumbnails are one atlas image (atlas.ts) that each block shows as background.
import type { Layout, Stats } from "../../wire";
import { blockBackground, textColorOn } from "../../shared/colors";
import { formatHalfOpen, textWidth } from "../../shared/text";
import { deviceLabelCandidates, fitLabel, labelFits } from "../labels";
import { thumbCanvas, type Thumb } from "../stats";
import { packThumbs, paletteAtlas, type ThumbPack } from "./atlas";
import {
  axisTicks,
  axisTicksVertical,
  dimTitle,
  dimTitleFitting,
  gridGap,
  LABEL_FONT,
  SMALL_FONT,
  thumbInset,
  type GridGeometry,
} from "./geometry";
import type { GridScene } from "./scene";

const SPECIAL = /[&<>"]/;

function esc(s: string): string {
  if (!SPECIAL.test(s)) return s;
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A replicated block's style (stripes of its holders' colours, the first 8) and, with a
 *  thumbnail (`inset` >= 0), the box that frames it. Kept out of markup's loop: a first render of
 *  a layout with no replication never compiles it. */
function replicatedFace(
  ids: number[],
  colorOf: (id: number) => string,
  inset: number,
  place: string,
): [string, string] {
  const style = `background:${blockBackground(ids.slice(0, 8).map(colorOf))}`;
  return [style, inset >= 0 ? `<div class="sw-thumb" style="inset:${inset}px;${place}"></div>` : ""];
}

/** The label candidates of a block held by several devices, or by devices holding partial sums
 *  (unreduced: "Σ 0,4" before "0,4"), in the order fitLabel tries them. */
function labelCandidates(ids: number[], badge: boolean, partial: boolean): string[] {
  const holders = ids.length > 1 ? deviceLabelCandidates(ids, badge) : [String(ids[0] ?? "–")];
  return partial ? [...holders.map((t) => `Σ ${t}`), ...holders] : holders;
}

/** Blocks of one drawn size: the atlas's size scaled to them, and the style text of a thumbnail
 *  block up to its position, by colour (see DomLayer.markup). */
interface BlockSize {
  sx: number;
  sy: number;
  inset: number;
  text: string;
  byColor: Map<string, string>;
}

/** The BlockSize of a scale and frame (a grid has a few: its tracks differ by a pixel). */
function sizeFor(sizes: BlockSize[], sx: number, sy: number, inset: number, pack: { width: number; height: number }): BlockSize {
  for (let i = 0; i < sizes.length; i++) {
    const z = sizes[i];
    if (z.sx === sx && z.sy === sy && z.inset === inset) return z;
  }
  const z = { sx, sy, inset, text: `background-size:${pack.width * sx}px ${pack.height * sy}px;`, byColor: new Map() };
  sizes.push(z);
  return z;
}

/** A thumbnail's atlas size and position in a block's style. */
function placeOf(size: BlockSize, at: [number, number], sx: number, sy: number): string {
  return `${size.text}background-position:${-at[0] * sx}px ${-at[1] * sy}px`;
}

/** A label's opening tag on a thumbnail (a chip), normal and small. */
const CHIP_OPEN: [string, string] = ['<span class="sw-label sw-chip">', '<span class="sw-label sw-chip sw-small">'];
const INK_LIGHT: [string, string] = ['<span class="sw-label sw-ink-light">', '<span class="sw-label sw-ink-light sw-small">'];
const INK_DARK: [string, string] = ['<span class="sw-label sw-ink-dark">', '<span class="sw-label sw-ink-dark sw-small">'];

/** A label's opening tag on a block of solid `color`: the ink that reads on it. */
function inkOpen(color: string): [string, string] {
  return textColorOn(color) === "#ffffff" ? INK_LIGHT : INK_DARK;
}

/** The label of a block with several candidates (labelCandidates): the first that fits in a
 *  w×h block at the label's size, else at the small size, in the opening tag `open`; "" when
 *  none fits. */
function candidateLabel(cands: string[], w: number, h: number, open: [string, string]): string {
  let text = fitLabel(cands, w - 8, LABEL_FONT, h - 2);
  let small = false;
  if (!text) {
    text = fitLabel(cands, w - 4, SMALL_FONT, h);
    small = text !== "";
  }
  return text ? open[small ? 1 : 0] + esc(text) + "</span>" : "";
}

export class DomLayer {
  /** grid.children[i] draws block keys[i]; index is the inverse. */
  private keys: number[] = [];
  private index = new Map<number, number>();
  /** Blocks that carry a highlight class. */
  private marked = new Set<number>();
  private atlasUrl: string | null = null;
  /** What the thumbnails were taken from (stats object, drawn dims), what the atlas was made
   *  from, and for which markup. */
  private thumbsOf: [Stats, string] | null = null;
  private atlasOf: [Stats, string] | null = null;
  private atlasHtml = "";
  /** Where the last markup placed its thumbnails in the atlas (the atlas is drawn from it). */
  private pack: { of: Map<number, Thumb>; pack: ThumbPack } | null = null;

  constructor(
    private readonly doc: Document,
    private readonly scene: GridScene,
    private readonly grid: HTMLElement,
  ) {}

  /** The stats and drawn dims the thumbnails of this render come from. */
  setThumbsSource(stats: Stats | null, viewDims: number[]): void {
    this.thumbsOf = stats ? [stats, viewDims.join(",")] : null;
  }

  /** New markup went in: no block is marked, and (canvas mode) none is drawn by the DOM. */
  replaced(canvas: boolean): void {
    this.marked.clear();
    if (canvas) {
      this.keys = [];
      this.index.clear();
    }
  }

  /** The block element an event came from (`exact`: the block itself, not a child), or null. */
  blockOf(target: EventTarget | null, exact: boolean): number | null {
    const t = target as HTMLElement | null;
    if (!t) return null;
    const e = exact
      ? t.classList?.contains("sw-block")
        ? t
        : null
      : typeof t.closest === "function"
        ? t.closest<HTMLElement>(".sw-block")
        : null;
    if (!e || e.parentElement !== this.grid) return null;
    const k = Number(e.dataset.block);
    return this.index.has(k) ? k : null;
  }

  /** Axis titles and tick labels as one HTML string. */
  axesMarkup(layout: Layout, geom: GridGeometry): string {
    const { sel } = geom;
    const out: string[] = [];
    if (sel.colDim >= 0) {
      out.push(
        `<div class="sw-axis-title sw-axis-title-col" style="left:${geom.gutterLeft}px;width:${geom.width}px"` +
          ` title="${esc(dimTitle(layout, sel.colDim))}">` +
          `${esc(dimTitleFitting(layout, sel.colDim, geom.width))} →</div>`,
      );
      for (const tk of axisTicks(sel.colRanges, geom.xs)) {
        const cls = tk.full ? "sw-tick sw-tick-col" : "sw-tick sw-tick-col sw-tick-start";
        out.push(
          `<div class="${cls}" style="left:${geom.gutterLeft + tk.at}px;width:${tk.full ? tk.span : tk.span + 2}px"` +
            ` title="dim ${sel.colDim} ${formatHalfOpen(sel.colRanges[tk.index])}">${tk.text}</div>`,
        );
      }
    }
    if (sel.rowDim >= 0) {
      out.push(
        `<div class="sw-axis-title sw-axis-title-row" style="top:${geom.gutterTop}px;height:${geom.height}px"` +
          ` title="${esc(dimTitle(layout, sel.rowDim))}">` +
          `${esc(dimTitleFitting(layout, sel.rowDim, geom.height))} →</div>`,
      );
      for (const tk of axisTicksVertical(sel.rowRanges, geom.ys)) {
        const cls = tk.full ? "sw-tick sw-tick-row" : "sw-tick sw-tick-row sw-tick-start";
        out.push(
          `<div class="${cls}" style="top:${geom.gutterTop + tk.at}px;height:${tk.full ? tk.span : 14}px;` +
            `width:${geom.gutterLeft - 22}px;left:16px"` +
            ` title="dim ${sel.rowDim} ${formatHalfOpen(sel.rowRanges[tk.index])}">${tk.text}</div>`,
        );
      }
    }
    return out.join("");
  }

  /** The blocks as one HTML string: one parse, laid out by the grid's CSS tracks (no per-block
   *  positions), each block styled by its colour only. A single holder's block shows its
   *  thumbnail as its own background (atlas image in CSS var --sw-atlas, pixels supplied by
   *  finishData()) inside a border of its colour; a replicated block's stripes frame a
   *  thumbnail box. */
  markup(layout: Layout, geom: GridGeometry): string {
    const { sel, xs, ys } = geom;
    const nC = sel.colRanges.length;
    let html = "";
    const keys: number[] = [];
    this.index.clear();
    const { thumbs, colorOf } = this.scene;
    const pack = thumbs.size ? packThumbs(thumbs) : null;
    this.pack = pack && { of: thumbs, pack };
    const gap = gridGap(geom);
    const partial = (layout.unreduced?.length ?? 0) > 0;
    let child = 0;
    // The text that blocks of one size share: the atlas's scaled size, and (by colour) a
    // thumbnail block's style up to its own position. A first render runs this loop cold, where
    // each piece joined on is a new string: a block is written in a few pieces, not twenty.
    let size: BlockSize = { sx: NaN, sy: NaN, inset: NaN, text: "", byColor: new Map() };
    const sizes: BlockSize[] = [];
    for (let r = 0; r < sel.rowRanges.length; r++) {
      const h = ys[r + 1] - ys[r];
      for (let c = 0; c < nC; c++) {
        const k = sel.cells[r * nC + c];
        if (k < 0) {
          html += '<i class="sw-hole"></i>';
          child++;
          continue;
        }
        const w = xs[c + 1] - xs[c];
        const b = layout.blocks[k];
        const n = b.d.length;
        const replicated = n > 1;
        const color0 = n ? colorOf(b.d[0]) : "#cccccc";
        const thumb = pack ? thumbs.get(k) : undefined;
        const at = thumb && pack!.at.get(k);
        // The frame around a thumbnail shows the device colour(s); wider for stripes.
        const inset = at ? thumbInset(w, h, n) : 0;
        // Where the block's part of the atlas image sits, scaled to the box inside its frame.
        let sx = 0;
        let sy = 0;
        if (at) {
          sx = Math.max(1, w - gap - 2 * inset) / thumb!.cols;
          sy = Math.max(1, h - gap - 2 * inset) / thumb!.rows;
          if (sx !== size.sx || sy !== size.sy || inset !== size.inset) size = sizeFor(sizes, sx, sy, inset, pack!);
        }
        if (!replicated) {
          // One holder (the common block).
          if (at) {
            // The frame and the ground under the thumbnail are the text colour (see .sw-t): one
            // declaration to parse per block, not two.
            let head = size.byColor.get(color0);
            if (head === undefined) {
              head = `" style="border-width:${inset}px;color:${color0};${size.text}background-position:`;
              size.byColor.set(color0, head);
            }
            html +=
              '<div class="sw-block sw-has-thumb sw-t" data-block="' + k + head +
              -at[0] * sx + "px " + -at[1] * sy + 'px">';
          } else {
            html += '<div class="sw-block" data-block="' + k + '" style="background:' + color0 + '">';
          }
          const open = at ? CHIP_OPEN : inkOpen(color0);
          if (partial) {
            html += candidateLabel(labelCandidates(b.d, false, true), w, h, open);
          } else {
            // Its id is the label: one candidate, nothing to escape.
            const text = n ? String(b.d[0]) : "–";
            if (labelFits(text, w - 8, LABEL_FONT, h - 2)) html += open[0] + text + "</span>";
            else if (labelFits(text, w - 4, SMALL_FONT, h)) html += open[1] + text + "</span>";
          }
          html += "</div>";
        } else {
          html += this.replicatedBlock(k, b.d, w, h, at ? inset : -1, at ? placeOf(size, at, sx, sy) : "", partial);
        }
        this.index.set(k, child++);
        keys.push(k);
      }
    }
    this.keys = keys;
    return html;
  }

  /** A block held by several devices: stripes of their colours, its label the first of
   *  labelCandidates that fits ("Σ …" first for partial sums), a "×N" badge past 8 holders.
   *  `inset` < 0: no thumbnail; `place`: the thumbnail's atlas size and position. */
  private replicatedBlock(
    k: number,
    ids: number[],
    w: number,
    h: number,
    inset: number,
    place: string,
    partial: boolean,
  ): string {
    const n = ids.length;
    const cls = inset >= 0 ? "sw-block sw-has-thumb sw-replicated" : "sw-block sw-replicated";
    const [style, inner] = replicatedFace(ids, this.scene.colorOf, inset, place);
    const badge = n > 8;
    const label = candidateLabel(labelCandidates(ids, badge, partial), w, h, CHIP_OPEN);
    let html = `<div class="${cls}" data-block="${k}" style="${style}">${inner}${label}`;
    if (badge) {
      const bt = `×${n}`;
      const room = label ? h - 2 >= 2 * (LABEL_FONT + 6) : true;
      if (textWidth(bt, SMALL_FONT) + 6 <= w && h >= SMALL_FONT + 4 && room)
        html += `<span class="sw-badge">${bt}</span>`;
    }
    return html + "</div>";
  }

  blockEl(k: number): HTMLElement | null {
    const i = this.index.get(k);
    if (i === undefined) return null;
    const e = this.grid.children[i] as HTMLElement | undefined;
    return e ?? null;
  }

  /** Visible block elements. */
  blockElements(): Map<number, HTMLElement> {
    const m = new Map<number, HTMLElement>();
    for (const k of this.keys) {
      const e = this.blockEl(k);
      if (e) m.set(k, e);
    }
    return m;
  }

  /** Highlight classes, touching only the blocks whose classes can change: those marked now or
   *  last time. */
  highlight(): void {
    const { related, found, pinned, dim } = this.scene.hl;
    this.grid.classList.toggle("sw-dimming", dim);
    const touch = new Set<number>(this.marked);
    for (const k of related) touch.add(k);
    for (const k of found) touch.add(k);
    if (pinned !== null) touch.add(pinned);
    const marked = new Set<number>();
    for (const k of touch) {
      const e = this.blockEl(k);
      if (!e) continue;
      const a = related.has(k);
      const f = found.has(k);
      const p = pinned === k;
      e.classList.toggle("sw-hl", a);
      e.classList.toggle("sw-found", f);
      e.classList.toggle("sw-pinned", p);
      if (a || f || p) marked.add(k);
    }
    this.marked = marked;
  }

  /** The keyboard cursor as a class on its block (none without keyboard focus). */
  showCursor(): void {
    const { kbd, cursor } = this.scene;
    const prev = this.grid.querySelector(".sw-cursor");
    const e = kbd && cursor !== null ? this.blockEl(cursor) : null;
    if (prev && prev !== e) prev.classList.remove("sw-cursor");
    e?.classList.add("sw-cursor");
  }

  /** The thumbnails' pixels: one atlas image for `gridHtml` (kept when the same thumbnails sit
   *  in the same places), else (no blob URLs: tests) one small canvas per thumbnail.
   *  Returns false when there was nothing to do. */
  finishData(gridHtml: string): boolean {
    const a = this.atlasOf;
    const b = this.thumbsOf;
    const same = !!a && !!b && a[0] === b[0] && a[1] === b[1] && this.atlasHtml === gridHtml;
    if (this.atlasUrl && same) return false;
    const thumbs = this.scene.thumbs;
    const atlas = paletteAtlas(thumbs, this.pack?.of === thumbs ? this.pack.pack : undefined);
    this.releaseAtlas();
    this.atlasOf = this.thumbsOf;
    this.atlasHtml = gridHtml;
    if (atlas) {
      this.atlasUrl = atlas.url;
      this.grid.style.setProperty("--sw-atlas", `url("${atlas.url}")`);
      return true;
    }
    for (const [k, t] of this.scene.thumbs) {
      const e = this.blockEl(k);
      if (!e || !e.classList.contains("sw-has-thumb")) continue;
      const cv = thumbCanvas(this.doc, t);
      if (!cv) continue;
      cv.className = "sw-thumb-canvas";
      const holder = e.querySelector(".sw-thumb");
      if (holder) holder.replaceChildren(cv);
      else e.prepend(cv);
    }
    return true;
  }

  releaseAtlas(): void {
    if (!this.atlasUrl) return;
    try {
      URL.revokeObjectURL(this.atlasUrl);
    } catch {
      /* ignore */
    }
    this.atlasUrl = null;
    this.grid.style.removeProperty("--sw-atlas");
  }
}
