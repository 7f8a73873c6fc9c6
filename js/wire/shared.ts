// Wire types both views and the cost model share: the layout geometry of an array (the grid
// both views draw), its per-shard statistics, collectives, and the undo/redo state. The Python
// twins are in src/shardwidget/wire/ (array.py, function.py, _common.py); keep them in step.

export type AxisType = "auto" | "explicit";

export type SpecEntry = null | string | string[];

/** What a layout's mesh is made of: the array's own devices, or every device of the kernel. */
export type DeviceSet = "array" | "all";

export interface LayoutState {
  mesh_shape: number[];
  axis_names: string[];
  axis_types: AxisType[];
  spec: SpecEntry[];
  memory_kind: string;
  devices: DeviceSet;
}

export interface MeshInfo {
  axis_names: string[];
  axis_sizes: number[];
  axis_types: AxisType[];
  /** Device ids in mesh order (row-major over axis_sizes), length = product(axis_sizes). */
  device_ids: number[];
  /** What a step along each axis travels over, in words (a gpu_mesh plan: "NVLink (within a
   *  host)", "network (InfiniBand / Ethernet, across hosts)"); sent only where the mesh says. */
  axis_links?: string[];
  /** Hosts one NVLink domain joins where it spans several (GB200 NVL72: 18); sent with
   *  axis_links, 0 where each host is its own. */
  domain_hosts?: number;
}

export interface DeviceTable {
  /** All devices of the sharding, in the sharding's own device order. Parallel arrays. */
  ids: number[];
  process: number[];
  platform: string;
  kind: string; // device_kind, e.g. "cpu", "TPU v4"
  /** Physical coordinates when the devices have them (TPU), else null. */
  coords: number[][] | null;
  core_on_chip: number[] | null;
  /** The process index of the kernel: devices with another process index are not addressable. */
  local_process: number;
}

export interface Block {
  /** [start, stop) per array dimension. */
  i: [number, number][];
  /** Ids of the devices holding this block, ordered by replica id (d[0] has replica_id 0). */
  d: number[];
}

/** What the marks of the grid mean and how the array is split and copied, in words
 *  (Python: shardwidget.legend). */
export interface LegendWire {
  /** [mark, meaning] for the border, the inner heatmap, the stripes and the labels. */
  marks: string[][];
  /** "dimension 0 split 2 ways over x", "replicated over y: 4 copies", … */
  replication: string[];
}

export interface Layout {
  /** Changes whenever the shown array changes; _stats.key refers to it. */
  key: number;
  shape: number[];
  dtype: string;
  itemsize: number;
  /** jax.typeof-style, with @axis on sharded dimensions: "float32[4@x,8@y]". */
  typeof: string;
  /** Class name of the sharding: "NamedSharding", "SingleDeviceSharding", … */
  sharding: string;
  /** "original": the user's array itself; "resharded": the result of a device_put from the controls. */
  source: "original" | "resharded";
  mesh: MeshInfo | null;
  spec: SpecEntry[]; // one per dimension (normalized, padded with null)
  spec_str: string; // "P('x', 'y')" or "" when there is no mesh
  memory_kind: string;
  devices: DeviceTable;
  blocks: Block[];
  /** Bytes of one shard (every device holds one shard of the same shape). */
  bytes_per_device: number;
  logical_bytes: number;
  /** How many devices hold each element (n_devices / n_blocks). */
  replication: number;
  /** A note for the user, e.g. "numpy array placed on CpuDevice(id=0)". May be "". */
  note: string;
  /** Python that lays an array bound to `x` out like this (ArrayView.code); "" for
   *  function-view leaves. */
  code: string;
  /** The unreduced axes of the spec (P('y', unreduced={'x'})): each device holds a partial
   *  value; a block's value is the sum of its holders' partials over these axes. [] otherwise. */
  unreduced: string[];
  /** Optional: saved pages from before the legend have none. */
  legend?: LegendWire;
}

export interface Stats {
  key: number; // equals Layout.key of the layout these belong to
  status: "pending" | "ready" | "unavailable";
  message: string; // why unavailable, or ""
  /** Per block (same order as Layout.blocks): [min, max, mean, std, nan_count, inf_count], or null
   *  when the block is on another process. For complex data the statistics are of |z|. */
  blocks: (number[] | null)[];
  /** Small blocks (<= 64 elements): row-major values of each block, concatenated, as float64
   *  little-endian. values_offsets[b] is the element offset of block b (-1: none). Complex values
   *  are interleaved (re, im). Bool and int are converted to float64. null when not sent. */
  values: DataView | null;
  values_offsets: number[];
  /** Heatmap thumbnails, uint8 0..255 (scaled between vmin and vmax), concatenated; thumb_shapes[b]
   *  is [rows, cols] for block b ([0, 0]: none). Drawn over Layout view dims at the time of compute:
   *  thumbs_dims. Other dimensions are averaged. 255 is vmax; NaN pixels are written as 0. */
  thumbs: DataView | null;
  thumb_shapes: [number, number][];
  thumb_offsets: number[];
  thumbs_dims: number[];
  vmin: number;
  vmax: number;
  /** Unreduced layouts: each device's partial statistics (rows as `blocks`), parallel to
   *  Layout.devices.ids; `blocks` are then null. [] for other layouts. */
  partials: (number[] | null)[];
}

export type CollectiveKind =
  | "all-reduce"
  | "all-gather"
  | "reduce-scatter"
  | "all-to-all"
  | "collective-permute";

export interface Collective {
  kind: CollectiveKind;
  /** The user's mesh axes it runs over (["x"], ["x", "y"]); [] when the groups match no axes. */
  axes: string[];
  /** Result shape per device and its dtype ("f32"). */
  shape: number[];
  dtype: string;
  /** Bytes each device sends (ring estimate; see hlo.py). */
  bytes: number;
  /** Devices per group and number of groups (collective-permute: pairs and 2). */
  group_size: number;
  n_groups: number;
  /** jax op that caused it (from HLO metadata op_name), e.g. "jit(f)/reduce_sum"; may be "". */
  op_name: string;
  /** Source location "file.py:12" when known, else "". */
  source: string;
  /** The replica groups / pairs as written in the HLO (for the detail view). */
  groups_text: string;
  /** Index into Trace.group_sets: its device groups (collective-permute: [source, target]
   *  pairs); -1 when the bounded payload left them out; absent from older kernels. */
  group_set?: number;
  /** Every array it carries per device (a combined all-reduce: each gradient, the loss's
   *  scalar too; its bytes are theirs summed), each with the leaves it touches. */
  elements?: CollectiveElement[];
  /** The input / output leaves (indices) that flow into / out of it, by dataflow through the
   *  compiled program (never by shape); null: not told (leaves_note says why). Absent: a
   *  reshard's collective, or an older kernel. */
  in_leaves?: number[] | null;
  out_leaves?: number[] | null;
  leaves_note?: string;
}

/** One array a collective carries, and the leaves (indices) that flow into / out of it. */
export interface CollectiveElement {
  shape: number[];
  dtype: string;
  in_leaves: number[];
  out_leaves: number[];
  /** The input leaf (index) whose gradient it carries, by dataflow; -1 where none is told. */
  gradient_of: number;
}

/** `_history`: how far undo and redo can go, and where the next step of each leads. */
export interface HistoryWire {
  undo: number;
  redo: number;
  /** The layout undo shows, in a few words ("" when there is none). */
  undo_label: string;
  redo_label: string;
}
