// The tree view's wire format (ShardView(tree), Python class TreeView). The Python twin is
// src/shardwidget/wire/tree.py (TreeWire, TreeMemory, StaticWire, TreeRequestMsg,
// TreeSelectMsg); keep the
// two in step. The selected leaf travels as an array view's _layout / _stats / _options.
import type { Options } from "./array";
import type { HardwareWire } from "./cost";
import type { SearchWire } from "./search";
import type { AxisType, HistoryWire, Layout, Stats } from "./shared";

/** A leaf that is not an array: listed, never laid out. */
export interface StaticWire {
  path: string;
  kind: string;
  text: string;
}

/** Bytes per device by top-level group: by_group[g][i] is what group g puts on device ids[i]. */
export interface TreeMemory {
  ids: number[];
  by_group: number[][];
}

/** `_tree`: every array leaf as columns (index i of each list is leaf i, in
 *  tree_flatten_with_path order). `{}` until published. */
export interface TreeWire {
  key: number;
  paths: string[];
  /** Index into group_names: the leaf's top-level group (its path's first key). */
  groups: number[];
  group_names: string[];
  shapes: number[][];
  dtypes: string[];
  /** The spec as Python writes it, "P('data', None)"; "" when the leaf has no mesh. */
  specs: string[];
  /** Logical axis names ("vocab, embed"), "" when the leaf carries none. */
  names: string[];
  /** Bytes each holder keeps of the leaf. */
  bytes: number[];
  logical_bytes: number[];
  /** Devices holding each element (copies). */
  replication: number[];
  /** Every device of the mesh holds the whole leaf (replicated on every device). */
  everywhere: boolean[];
  /** What set the layout: "rule 2", "logical", or "" (the leaf's own). */
  sources: string[];
  /** Rules that lay out nothing, in words: warnings beside the layout, not refusals. */
  notes: string[];
  /** ShapeDtypeStruct leaves: no data, no statistics. */
  abstract: boolean[];
  static: StaticWire[];
  memory: TreeMemory;
  /** "data=4 × model=2". */
  mesh: string;
  /** view.code: the snippet that lays the tree out as shown. */
  code: string;
  /** "planned on AbstractMesh (32, 8) · no devices" for a plan (mesh=AbstractMesh): device ids
   *  are positions on that mesh, no data; "" on the kernel's devices. */
  planned: string;
}

/** The state a tree view asks for: the mesh and the rules text (one `regex  P(...)` per line). */
export interface TreeState {
  mesh_shape: number[];
  axis_names: string[];
  axis_types: AxisType[];
  rules_text: string;
}

export interface TreeRequestMsg {
  type: "tree_request";
  seq: number;
  state: TreeState;
}

/** The leaf table's selection: draw leaf `leaf` in the device grid (the kernel sends its layout
 *  and statistics and sets `selected`). */
export interface TreeSelectMsg {
  type: "tree_select";
  leaf: number;
}

/** The synced traits of a TreeView (Python class shardwidget.views.tree.TreeView). */
export interface TreeModel extends TreeState {
  _kind: "tree";
  error: string;
  busy: boolean;
  /** The leaf drawn in the device grid (index into the leaves). Both directions. */
  selected: number;
  /** The preset whose HBM the memory chart marks. Both directions. */
  hardware: string;
  /** Replicated leaves holding this many bytes per device or more are flagged. */
  large_bytes: number;
  _hardware_presets: HardwareWire[];
  _tree: TreeWire;
  _layout: Layout;
  _stats: Stats;
  _options: Options;
  _history?: HistoryWire;
  /** The newest view.search(...): the tree's candidate layouts (kind "tree"). Python → JS. */
  _search?: SearchWire;
  /** A saved page (TreeView.save_html): why nothing can be laid out again, and how many of the
   *  leaves' grids it carries (a click on another says so). Absent in a live view. */
  _static?: TreeStatic;
}

export interface TreeStatic {
  note: string;
  saved: number;
  leaves: number;
}
