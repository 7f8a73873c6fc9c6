// The model an embedded array view reads (a function view's leaf cards, the tree view's selected
// leaf): what the array view draws from, kept locally; it never talks to the kernel.
import type { ArrayModel, Stats } from "../wire";
import { LocalModel } from "./local_model";

/** What an array view reads and writes: the array view's synced traits (statistics may be null). */
export type ArrayViewModel = Omit<ArrayModel, "_stats"> & { _stats: Stats | null };

/**
 * The model an embedded array view reads: `_layout`, `_stats`, `_options`, `view_dims`, `error`,
 * `busy`. Everything it writes (view_dims) stays here; it never talks to the kernel.
 */
export class LeafModel extends LocalModel<ArrayViewModel> {
  constructor(init: Pick<ArrayViewModel, "_layout" | "_stats" | "_options" | "view_dims">) {
    super({
      mesh_shape: [],
      axis_names: [],
      axis_types: [],
      spec: [],
      memory_kind: "",
      devices: "all",
      error: "",
      busy: false,
      ...init,
    });
  }
}
