// What the grid shows now: the pane (pane.ts) keeps it up to date, the layers draw it
// (dom_layer.ts up to CANVAS_THRESHOLD visible blocks, canvas_layer.ts above), the keyboard
// (keyboard.ts) moves its cursor.
import type { Layout } from "../../wire";
import type { Thumb } from "../stats";
import type { GridGeometry } from "./geometry";

/** `related` blocks (hovered / held by a hovered device), `found` (device search), `pinned`;
 *  `dim` fades the other blocks. */
export interface Highlight {
  related: Set<number>;
  found: Set<number>;
  pinned: number | null;
  dim: boolean;
}

export interface GridScene {
  layout: Layout | null;
  geom: GridGeometry | null;
  /** Device colours of this render. */
  colorOf: (id: number) => string;
  /** Thumbnails of the blocks big enough to show one. */
  thumbs: Map<number, Thumb>;
  /** Whether the thumbnails' pixels are still to be drawn (they follow the geometry). */
  dataPending: boolean;
  hl: Highlight;
  /** The block under the keyboard cursor, and whether the cursor shows (keyboard focus). */
  cursor: number | null;
  kbd: boolean;
}

export function emptyScene(colorOf: (id: number) => string): GridScene {
  return {
    layout: null,
    geom: null,
    colorOf,
    thumbs: new Map(),
    dataPending: false,
    hl: { related: new Set(), found: new Set(), pinned: null, dim: false },
    cursor: null,
    kbd: false,
  };
}
