// The array view's wire format, ShardView(arr): the synced traits (ArrayModel) and the
// payloads they carry. The Python twin is src/shardwidget/wire/array.py; keep the two in step.
//
// Synced traits: ArrayModel (at the end of this file), read with model.get(name).
//
// Messages (requests and their results): messages.ts.

import type { HistoryWire, Layout, LayoutState, Stats } from "./shared";
import type { HardwareWire, TransferWire } from "./cost";

export interface Options {
  n_devices: number;
  platform: string; // e.g. "cpu", "gpu", "tpu"
  ndim: number;
  shape: number[];
  dtype: string;
  /** factorizations[k] lists every mesh shape with k axes (k = 1..4) whose product is n_devices. */
  factorizations: Record<string, number[][]>;
  memory_kinds: string[];
  /** The layout the view was created with, when it is expressible as LayoutState; else null. */
  original: LayoutState | null;
  /** Why the array cannot be re-laid-out ("" when it can), e.g. "PRNG keys" never blocks, multi-process does. */
  reshard_disabled: string;
  /** The array's own devices (ids, in its own mesh order): what devices = "array" lays out on. */
  own_devices: number[];
  /** Mesh shapes over the array's own devices, as `factorizations` over all. */
  own_factorizations: Record<string, number[][]>;
  /** Static pages only (view.save_html): stateKey() of every layout the page carries. */
  static_states?: string[];
}

/** The array view's synced traits (Python: shardwidget's ArrayView), as anywidget's model holds
 *  them. The payload traits are Python Dicts: `{}` until the view first publishes. */
export interface ArrayModel extends LayoutState {
  // LayoutState's traits (mesh_shape ... devices) go both directions.
  /** The array dimensions drawn as rows / columns (0, 1 or 2 entries). */
  view_dims: number[];
  /** "" or the message of the last rejected request. */
  error: string;
  /** True while the kernel runs device_put / statistics. */
  busy: boolean;
  _options: Options;
  _layout: Layout;
  _stats: Stats;
  /** The hardware preset estimates are for (the dropdown's choice). Both directions. Optional:
   *  absent in function-view leaves and older saved pages. */
  hardware?: string;
  _hardware_presets?: HardwareWire[];
  /** Undo / redo (Python → JS). Absent in saved pages: they have no kernel to step. */
  _history?: HistoryWire;
  /** What moving the original layout to the shown one moves (key === _layout.key). */
  _transfer?: TransferWire;
  /** Whether the re-layout's collectives and estimate are open: the kernel compiles the reshard
   *  for them only then. Both directions. Optional: absent in older saved pages. */
  cost_open?: boolean;
}
