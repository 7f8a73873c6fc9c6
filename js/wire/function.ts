// The function view's wire format, ShardView(f, *args): src/shardwidget/wire/function.py
// (trace_options / trace / trace_stats) is its Python twin; keep the two in step.
//
// A function view is the same anywidget model class family as an array view, told apart by
// `_kind` === "function" (array views have no `_kind` or "array").
//
// Synced traits: FunctionModel (at the end of this file), read with model.get(name).
//
// Messages (TraceRequestMsg and its ResultMsg): messages.ts.

import type { SearchWire } from "./search";
import type { AxisType, Collective, HistoryWire, Layout, SpecEntry, Stats } from "./shared";
import type { EstimateWire, HardwareWire } from "./cost";

/** "pmap": a jax.pmap'd function, on pmap's own mesh and layout (fixed: options.static). */
export type TraceMode = "jit" | "shard_map" | "pmap";

export interface TraceState {
  mesh_shape: number[];
  axis_names: string[];
  axis_types: AxisType[];
  in_specs: SpecEntry[][];
  out_specs: (SpecEntry[] | null)[];
  /** The input leaves donated (indices): only the original's (TraceOptions.original) carries
   *  it, so Reset returns to the donation the view was made with; without it a request keeps the
   *  donation shown. */
  donate?: number[];
}

export interface LeafInfo {
  /** Pytree path of the leaf, e.g. "x", "params['w']", "args[1][0]". */
  path: string;
  shape: number[];
  dtype: string;
}

export interface TraceOptions {
  n_devices: number;
  platform: string;
  /** factorizations[k]: every mesh shape with k axes whose product is n_devices (k = 1..4). */
  factorizations: Record<string, number[][]>;
  memory_kinds: string[];
  mode: TraceMode;
  /** Function name, e.g. "layer" or "<lambda>". */
  fn_name: string;
  inputs: LeafInfo[];
  /** Output leaves as traced with the initial state (count and shapes do not depend on layout). */
  outputs: LeafInfo[];
  /** Static (non-array) arguments, as short reprs: "n=3", "args[2]='mean'". */
  static_args: string[];
  /** The state the view was created with, its donation included (the reset target). */
  original: TraceState;
  /** Why the function is not run (e.g. inputs are ShapeDtypeStructs), "" when it is. */
  run_disabled: string;
  /** Why the controls cannot re-compile: a saved page (view.save_html), or a kernel of several
   *  processes (re-compile from Python on every process); absent otherwise. */
  static?: string;
  /** What a plan is, in words (ShardView(f, ..., mesh=AbstractMesh(...))): the badge's text. */
  planned?: string;
  /** A plan's compilers: the CPU compiler's (simulated) or the TPU's own (views/plan_progress.py). */
  compile_with?: CompileWith;
}

/** What a plan view's "compile with" offers (Python: wire.CompileWith). */
export interface CompileWith {
  /** The compiler in use: "cpu" or "tpu". */
  current: string;
  /** The TPU choice's label ("this TPU: v5e 16×16"); "" when there is none. */
  tpu: string;
  /** Why there is no TPU choice, in one line (what to install, …); "" when there is one. */
  why: string;
}

export interface TraceLeaf extends LeafInfo {
  /** jax.typeof-style: "float32[8@x,4]". */
  typeof: string;
  spec_str: string;
  /** Shape each device sees (shard shape; in shard_map mode, the body's local shape). */
  local_shape: number[];
  /** Full geometry, the same object an array view gets as _layout (key as in Trace.key). */
  layout: Layout;
  /** The layout in words where the spec alone would mislead (a pmap'd function's); "" else. */
  note: string;
}

export interface Constraint {
  /** "with_sharding_constraint" or "reshard". */
  kind: string;
  shape: number[];
  dtype: string;
  spec_str: string;
  /** Source location "file.py:12 (f)" when known. */
  source: string;
}

export interface Memory {
  argument: number;
  output: number;
  alias: number;
  temp: number;
  generated_code: number;
  /** argument + output - alias + temp: the estimate XLA's own tools use. */
  peak: number;
}

export interface Trace {
  /** Changes with every new result; _trace_stats.key refers to it. */
  key: number;
  status: "ok" | "error";
  /** Why status is "error" (then the other fields hold the last good result, or are empty). */
  message: string;
  mode: TraceMode;
  inputs: TraceLeaf[];
  outputs: TraceLeaf[];
  constraints: Constraint[];
  collectives: Collective[];
  /** Per device, in bytes. null when XLA gives no analysis. */
  memory: Memory | null;
  flops: number | null;
  /** Milliseconds: trace + lower + compile (0 when cached), and the run. */
  compile_ms: number;
  run_ms: number;
  cached: boolean;
  /** Whether the compiled function was run (outputs then carry per-shard data). */
  ran: boolean;
  /** How many leaves / records beyond those sent were left out (a bounded payload). */
  left_out: LeftOut;
  /** The jaxpr of the traced program as text: whole lines, wire.MAX_JAXPR characters at most. */
  jaxpr: string;
  /** Characters of the jaxpr left out (0: sent whole; the rest is in Python's view.trace.jaxpr). */
  jaxpr_cut: number;
  /** The distinct device groups of the collectives (device ids), each set sent once;
   *  Collective.group_set points here. Absent from older kernels. */
  group_sets?: number[][][];
  /** Python for this compiled layout (FunctionView.code); "" without a result. */
  code: string;
  /** Where the memory goes (the memory panel; wire/peak.py); null without a result, absent
   *  from older kernels. */
  peak?: PeakWire | null;
  /** Where the memory of the layout last asked for goes, when the compiler refused it for not
   *  fitting (the panel shows what is over); absent otherwise. */
  over?: PeakWire;
  /** view.largest_fit's progress and answer for this layout (wire/peak.py FitWire); absent
   *  until asked. */
  fit?: FitWire;
}

/** view.largest_fit as it stands (wire/peak.py FitWire). */
export interface FitWire {
  input: string;
  dim: number;
  /** Compiles finished so far, of at most `of`. */
  compiles: number;
  of: number;
  done: boolean;
  error: string;
  /** "largest x dim 0 that fits in 15.75 GiB: 4096 (peak 14.2 GiB); 4352 does not …". */
  text: string;
}

/** One buffer live at the peak (wire/peak.py PeakRow). */
export interface PeakRow {
  /** Its input leaf's path, else JAX's op and its line. */
  label: string;
  bytes: number;
  shape: string;
  /** The input leaf it is ("" for outputs and temporaries). */
  path: string;
  op_name: string;
  aliased: boolean;
}

/** Buffers of one kind live at the peak (wire/peak.py PeakGroup). */
export interface PeakGroup {
  name: string;
  bytes: number;
  rows: PeakRow[];
  /** Buffers of the group left out of rows. */
  more: number;
}

/** The memory peak of one compile (wire/peak.py PeakWire); `unknown` says why where there is none. */
export interface PeakWire {
  unknown: string;
  bytes: number;
  /** "peak 12.1 GiB at …". */
  title: string;
  /** Bytes live over the program (each point the largest of its run of instructions). */
  timeline: number[];
  /** The peak's point in timeline. */
  at: number;
  instructions: number;
  /** The device memory the line is drawn at; null: unknown. */
  hbm: number | null;
  hbm_name: string;
  groups: PeakGroup[];
}

export interface LeftOut {
  inputs: number;
  outputs: number;
  constraints: number;
  collectives: number;
}

export interface TraceStats {
  key: number;
  /** One per output leaf, in order (same shape as an array view's _stats). */
  outputs: Stats[];
  /** One per input array leaf, as laid out for the run (absent from older kernels). */
  inputs?: Stats[];
}

/** The function view's synced traits (Python: shardwidget's FunctionView). The payload traits are
 *  Python Dicts: `{}` until the view first publishes. */
export interface FunctionModel {
  _kind: "function";
  /** Fixed at construction. */
  mode: TraceMode;
  /** Shared mesh of every input (product == n_devices). */
  mesh_shape: number[];
  axis_names: string[];
  axis_types: AxisType[];
  /** One spec per input array leaf (one entry per dimension). */
  in_specs: SpecEntry[][];
  /** One per output leaf; null = let XLA choose (jit only; in shard_map mode every entry is a spec). */
  out_specs: (SpecEntry[] | null)[];
  /** "" or why the last request / compile / run failed. */
  error: string;
  /** True while the kernel traces, compiles, runs. */
  busy: boolean;
  _trace_options: TraceOptions;
  _trace: Trace;
  _trace_stats: TraceStats;
  /** The hardware preset estimates are for (the dropdown's choice). Both directions. Optional:
   *  absent in older saved pages. */
  hardware?: string;
  _hardware_presets?: HardwareWire[];
  /** Undo / redo (Python → JS). Absent in saved pages: they have no kernel to step. */
  _history?: HistoryWire;
  /** The estimate of the compiled layout on `hardware` (key === _trace.key). */
  _estimate?: EstimateWire;
  /** The newest view.search(...)'s candidates as they arrive (absent in older saved pages). */
  _search?: SearchWire;
}
