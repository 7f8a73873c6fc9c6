// The search panel's payload: a function view's `_search` trait (Python twin:
// src/shardwidget/wire/search.py; keep the two in step). Republished as the search's results
// arrive. A click sends SearchApplyMsg with the row's `id` (its place in arrival order, which
// a re-ranking does not change); the kernel lays the view out as that candidate (undo restores).

/** One compiled candidate. */
export interface SearchRowWire {
  id: number;
  /** "FSDP 4 × TP 2", or the user's strategy's name. */
  name: string;
  /** The mesh: "fsdp=4 × tensor=2". */
  layout: string;
  /** Whether the peak fits the target's memory (null: unknown). */
  fits: boolean | null;
  /** Peak bytes per device: the compiler's own, or its memory totals where peak_is_totals. */
  peak: number | null;
  peak_is_totals: boolean;
  /** Estimated seconds per step on the preset (null: none). */
  step_s: number | null;
  /** Bytes per device the compiled program's collectives move. */
  moved: number;
  /** "fits, peak 5.13 KiB per device, estimated step 5.01 µs". */
  summary: string;
}

/** The newest search of the view (key 0, state "none": no search yet). */
export interface SearchWire {
  key: number;
  /** "step": a function view's (compiled, ranked by fit and estimated step time); "tree": a
   *  tree view's (laid out, not compiled, ranked by fit and bytes per device; no step time). */
  kind: "step" | "tree";
  state: "none" | "running" | "done" | "cancelled" | "budget";
  done: number;
  total: number;
  cached: number;
  /** The compiler, in words; a tree's: the chips it is laid out over (nothing compiled). */
  compiler: string;
  /** The preset the step times are estimated on. */
  hardware: string;
  /** Bytes a device may use (the scatter's HBM line); null: unknown. */
  hbm: number | null;
  dropped: number;
  failed: number;
  /** Ranked: fit first, then estimated step time. */
  rows: SearchRowWire[];
}

/** A click on a row or a point: lay the view out as that candidate. */
export interface SearchApplyMsg {
  type: "search_apply";
  id: number;
}
