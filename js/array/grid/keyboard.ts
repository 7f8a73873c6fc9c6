// The grid's keyboard: one tab stop (role=application) with a roving cursor over the cells
// (moveCursor in array/blocks.ts): arrows, Home/End (Ctrl: whole grid), PageUp/PageDown, Enter or Space
// pins the block (the grid keeps the focus; the view's Escape unpins). The cursor shows only under
// keyboard focus (not after a click); a polite live region reads out the block under it.
import { isCursorKey, moveCursor } from "../blocks";
import { blockTooltip } from "../labels";
import type { GridScene } from "./scene";

export interface KeyboardCallbacks {
  hoverBlock(k: number | null): void;
  clickBlock(k: number): void;
  /** Draw the cursor where the scene says it is. */
  showCursor(): void;
  /** The grid got the focus (the theme may have changed since). */
  focused(): void;
}

export class GridKeyboard {
  private pointerDown = false;
  /** Set while a pin from the keyboard moves the focus around: focus events are ours. */
  private pinning = false;

  constructor(
    private readonly grid: HTMLElement,
    /** Announces the block under the cursor. */
    private readonly live: HTMLElement,
    private readonly scene: GridScene,
    private readonly cb: KeyboardCallbacks,
  ) {
    grid.addEventListener("mousedown", () => this.onPointerDown());
    grid.addEventListener("focus", () => this.onFocus());
    grid.addEventListener("blur", () => this.onBlur());
    grid.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  private onPointerDown(): void {
    this.pointerDown = true;
    if (this.scene.kbd) {
      this.scene.kbd = false;
      this.cb.showCursor();
    }
  }

  private onFocus(): void {
    if (this.pinning) return;
    const s = this.scene;
    s.kbd = !this.pointerDown;
    this.pointerDown = false;
    this.cb.focused();
    if (!s.kbd) return;
    if (s.cursor === null || !s.geom?.sel.pos.has(s.cursor)) s.cursor = this.startBlock();
    this.moveTo(s.cursor);
  }

  private onBlur(): void {
    this.pointerDown = false;
    if (this.pinning) return;
    const was = this.scene.kbd;
    this.scene.kbd = false;
    this.cb.showCursor();
    if (was) this.cb.hoverBlock(null);
  }

  /** Where the cursor starts: the pinned block when it is drawn, else the first block. */
  private startBlock(): number | null {
    const g = this.scene.geom;
    if (!g) return null;
    const pinned = this.scene.hl.pinned;
    if (pinned !== null && g.sel.pos.has(pinned)) return pinned;
    for (const k of g.sel.cells) if (k >= 0) return k;
    return null;
  }

  private onKey(ev: KeyboardEvent): void {
    const g = this.scene.geom;
    if (!g || ev.altKey) return;
    if (ev.key === "Enter" || ev.key === " ") {
      const k = this.scene.cursor ?? this.startBlock();
      if (k === null) return;
      ev.preventDefault();
      this.scene.kbd = true;
      this.pin(k);
      return;
    }
    if (!isCursorKey(ev.key)) return;
    ev.preventDefault();
    this.scene.kbd = true;
    const cursor = this.scene.cursor;
    const cur = cursor !== null ? g.sel.pos.get(cursor) : undefined;
    if (!cur) {
      this.moveTo(this.startBlock());
      return;
    }
    const nC = g.sel.colRanges.length;
    const [r, c] = moveCursor(g.sel.cells, nC, cur[0], cur[1], ev.key, ev.ctrlKey || ev.metaKey);
    this.moveTo(g.sel.cells[r * nC + c]);
  }

  /** Pin (or unpin) block k from the keyboard: the grid keeps the focus, so the arrows go on
   *  moving the cursor (Escape, handled by the view, unpins). */
  private pin(k: number): void {
    this.scene.cursor = k;
    this.pinning = true;
    try {
      this.cb.clickBlock(k);
      if (this.grid.ownerDocument.activeElement !== this.grid) this.grid.focus({ preventScroll: true });
    } finally {
      this.pinning = false;
    }
    this.cb.showCursor();
    this.announce(k, true);
  }

  private moveTo(k: number | null): void {
    if (k === null || k < 0) return;
    this.scene.cursor = k;
    this.cb.showCursor();
    this.announce(k, false);
    this.cb.hoverBlock(k);
  }

  private announce(k: number, pinning: boolean): void {
    const { geom: g, layout } = this.scene;
    const p = g?.sel.pos.get(k);
    if (!g || !layout || !p) return;
    const where =
      g.sel.rowDim >= 0
        ? `row ${p[0] + 1} of ${g.sel.rowRanges.length}, column ${p[1] + 1} of ${g.sel.colRanges.length}`
        : `block ${p[1] + 1} of ${g.sel.colRanges.length}`;
    const pinned = this.scene.hl.pinned === k ? "; pinned" : pinning ? "; unpinned" : "";
    this.live.textContent = `${where}: ${blockTooltip(layout, k).replace("\n", "; ")}${pinned}`;
  }
}
