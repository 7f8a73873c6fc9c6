// Synthetic function-view payloads for tests and the dev preview, following wire/function.ts (what
// wire/function.py's trace_options / trace / trace_stats send). Layouts come from fixtures.ts.
import type {
  AxisType,
  Collective,
  Constraint,
  Layout,
  Memory,
  SpecEntry,
  Stats,
  Trace,
  TraceLeaf,
  TraceMode,
  TraceOptions,
  TraceState,
  TraceStats,
} from "../wire";
import { factorizations, namedFixture } from "./fixtures";
import { entryAxes } from "../shared/spec";
import { unavailableStats } from "../function/leaf";

export interface LeafDef {
  path: string;
  /** Inputs and jit outputs: the global shape. shard_map outputs: the body's local shape. */
  shape: number[];
  dtype?: string;
  /** Element value at a global index (drawn as per-shard data). Inputs without one count up
   *  in row-major order, like jnp.arange(n).reshape(shape). */
  value?: (idx: number[]) => number;
}

export interface TraceDef {
  fn_name: string;
  mode: TraceMode;
  static_args?: string[];
  inputs: LeafDef[];
  outputs: LeafDef[];
  /** jit: the output specs XLA picks when out_specs[i] is null. */
  xlaOut?: (s: TraceState) => SpecEntry[][];
  collectives?: (s: TraceState) => Collective[];
  constraints?: Constraint[];
  memory?: Memory | null;
  flops?: number | null;
  compile_ms?: number;
  run_ms?: number;
  run_disabled?: string;
  /** The jaxpr text the kernel sends (wire Trace.jaxpr) and the characters cut from it. */
  jaxpr?: string;
  jaxpr_cut?: number;
}

export interface TraceFixture {
  def: TraceDef;
  options: TraceOptions;
  state: TraceState;
  trace: Trace;
  stats: TraceStats;
  error: string;
}


function prod(xs: number[]): number {
  return xs.reduce((a, b) => a * b, 1);
}

function axisSize(s: TraceState, e: SpecEntry): number {
  return prod(entryAxes(e).map((a) => s.mesh_shape[s.axis_names.indexOf(a)] ?? 1));
}

/** Per-shard statistics computed from a value function: min / max / mean / std per block, the
 *  values of blocks of at most 64 elements, heatmap thumbnails over dims (0, 1) (as wire/). */
export function valueStats(layout: Layout, value: (idx: number[]) => number, thumbMax = 16): Stats {
  const nd = layout.shape.length;
  const vd = nd >= 2 ? [0, 1] : nd === 1 ? [0] : [];
  const blocks: number[][] = [];
  const vals: number[] = [];
  const valuesOffsets: number[] = [];
  let vmin = Infinity;
  let vmax = -Infinity;
  const each = (b: (typeof layout.blocks)[number], f: (idx: number[]) => void) => {
    const rec = (d: number, idx: number[]) => {
      if (d === nd) return f(idx);
      for (let x = b.i[d][0]; x < b.i[d][1]; x++) rec(d + 1, [...idx, x]);
    };
    rec(0, []);
  };
  for (const b of layout.blocks) {
    let mn = Infinity, mx = -Infinity, sum = 0, sq = 0, k = 0;
    const bv: number[] = [];
    each(b, (idx) => {
      const v = value(idx);
      mn = Math.min(mn, v);
      mx = Math.max(mx, v);
      sum += v;
      sq += v * v;
      k++;
      bv.push(v);
    });
    const mean = sum / Math.max(1, k);
    blocks.push([mn, mx, mean, Math.sqrt(Math.max(0, sq / Math.max(1, k) - mean * mean)), 0, 0]);
    vmin = Math.min(vmin, mn);
    vmax = Math.max(vmax, mx);
    if (k <= 64) {
      valuesOffsets.push(vals.length);
      vals.push(...bv);
    } else valuesOffsets.push(-1);
  }
  const span = vmax - vmin || 1;
  const thumbShapes: [number, number][] = [];
  const thumbOffsets: number[] = [];
  const px: number[] = [];
  for (let bi = 0; bi < layout.blocks.length; bi++) {
    const b = layout.blocks[bi];
    if (vd.length === 0) {
      thumbShapes.push([0, 0]);
      thumbOffsets.push(-1);
      continue;
    }
    const rd = vd.length === 2 ? vd[0] : -1;
    const cd = vd[vd.length - 1];
    const rlen = rd >= 0 ? b.i[rd][1] - b.i[rd][0] : 1;
    const clen = b.i[cd][1] - b.i[cd][0];
    const rows = Math.min(thumbMax, rlen);
    const cols = Math.min(thumbMax, clen);
    thumbOffsets.push(px.length);
    thumbShapes.push([rows, cols]);
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) {
        const idx = b.i.map((rg) => rg[0]);
        if (rd >= 0) idx[rd] = b.i[rd][0] + Math.floor(((r + 0.5) * rlen) / rows);
        idx[cd] = b.i[cd][0] + Math.floor(((c + 0.5) * clen) / cols);
        px.push(Math.round(((value(idx) - vmin) / span) * 255));
      }
  }
  return {
    key: layout.key,
    status: "ready",
    message: "",
    blocks,
    values: vals.length ? new DataView(new Float64Array(vals).buffer) : null,
    values_offsets: valuesOffsets,
    thumbs: px.length ? new DataView(new Uint8Array(px).buffer) : null,
    thumb_shapes: thumbShapes,
    thumb_offsets: thumbOffsets,
    thumbs_dims: vd,
    vmin,
    vmax,
    partials: [],
  };
}

function leafOf(
  path: string,
  shape: number[],
  dtype: string,
  spec: SpecEntry[],
  s: TraceState,
  key: number,
  local?: number[],
): TraceLeaf {
  const f = namedFixture({
    shape,
    dtype,
    meshShape: s.mesh_shape,
    axisNames: s.axis_names,
    axisTypes: s.axis_types,
    spec,
    key,
    stats: "pending",
  });
  // wire/function.py's leaf: the layout of an output is the array's own ("original" source, no note,
  // no code: the function view's own code covers every leaf).
  const l = { ...f.layout, code: "" };
  const shard = l.blocks[0].i.map((r) => r[1] - r[0]);
  return {
    path,
    shape: [...shape],
    dtype,
    typeof: l.typeof,
    spec_str: l.spec_str,
    local_shape: local ?? shard,
    layout: l,
    note: "",
  };
}

/** The trace and statistics `def` gives for state `s` (a stand-in for the kernel). */
export function buildTrace(def: TraceDef, s: TraceState, key: number): { trace: Trace; stats: TraceStats } {
  const inputs = def.inputs.map((d, i) =>
    leafOf(d.path, d.shape, d.dtype ?? "float32", s.in_specs[i] ?? [], s, key),
  );
  const xla = def.xlaOut?.(s) ?? [];
  const outputs = def.outputs.map((d, i) => {
    const dtype = d.dtype ?? "float32";
    if (def.mode === "shard_map") {
      const spec = s.out_specs[i] ?? d.shape.map(() => null);
      const global = d.shape.map((n, k) => n * axisSize(s, spec[k] ?? null));
      return leafOf(d.path, global, dtype, spec, s, key, d.shape);
    }
    const spec = s.out_specs[i] ?? xla[i] ?? d.shape.map(() => null);
    return leafOf(d.path, d.shape, dtype, spec, s, key);
  });
  const ran = !def.run_disabled;
  const trace: Trace = {
    key,
    status: "ok",
    message: "",
    mode: def.mode,
    inputs,
    outputs,
    constraints: def.constraints ?? [],
    collectives: def.collectives?.(s) ?? [],
    memory: def.memory === undefined ? null : def.memory,
    flops: def.flops ?? null,
    compile_ms: def.compile_ms ?? 41.7,
    run_ms: ran ? def.run_ms ?? 0.6 : 0,
    cached: false,
    ran,
    left_out: { inputs: 0, outputs: 0, constraints: 0, collectives: 0 },
    jaxpr: def.jaxpr ?? "",
    jaxpr_cut: def.jaxpr_cut ?? 0,
    code: `f_sharded = jax.jit(f, in_shardings=...)  # ${def.mode}`,
  };
  const arange = (shape: number[]) => (idx: number[]) => idx.reduce((acc, v, k) => acc * shape[k] + v, 0);
  const stats: TraceStats = {
    key,
    inputs: inputs.map((l, i) =>
      ran
        ? valueStats(l.layout, def.inputs[i].value ?? arange(def.inputs[i].shape))
        : unavailableStats(key, def.run_disabled || "not run"),
    ),
    outputs: outputs.map((o, i) =>
      ran && def.outputs[i].value
        ? valueStats(o.layout, def.outputs[i].value!)
        : unavailableStats(key, def.run_disabled || "not run"),
    ),
  };
  return { trace, stats };
}

/** A fixture from a definition and its initial state. */
export function makeFixture(def: TraceDef, s: TraceState, key = 1): TraceFixture {
  const { trace, stats } = buildTrace(def, s, key);
  const options: TraceOptions = {
    n_devices: prod(s.mesh_shape),
    platform: "cpu",
    factorizations: factorizations(prod(s.mesh_shape)),
    memory_kinds: ["device", "pinned_host", "unpinned_host"],
    mode: def.mode,
    fn_name: def.fn_name,
    inputs: def.inputs.map((d) => ({ path: d.path, shape: [...d.shape], dtype: d.dtype ?? "float32" })),
    outputs: trace.outputs.map((o) => ({ path: o.path, shape: [...o.shape], dtype: o.dtype })),
    static_args: def.static_args ?? [],
    original: s,
    run_disabled: def.run_disabled ?? "",
  };
  return { def, options, state: s, trace, stats, error: "" };
}

/** The model's trait values for a fixture. */
export function traceTraitsOf(f: TraceFixture): Record<string, unknown> {
  return {
    _kind: "function",
    mode: f.options.mode,
    mesh_shape: f.state.mesh_shape,
    axis_names: f.state.axis_names,
    axis_types: f.state.axis_types,
    in_specs: f.state.in_specs,
    out_specs: f.state.out_specs,
    error: f.error,
    busy: false,
    _trace_options: f.options,
    _trace: f.trace,
    _trace_stats: f.stats,
  };
}

const MESH_2X4 = { mesh_shape: [2, 4], axis_names: ["x", "y"], axis_types: ["auto", "auto"] as AxisType[] };
const SRC = "ipykernel_3187/2841516370.py";

// x = jnp.arange(128.0).reshape(8, 16) / 16
const xElem = (idx: number[]) => (idx[0] * 16 + idx[1]) / 16;

/** (a) Elementwise: f(x) = 2 * jnp.sin(x) + 1 on P('x', 'y'): the output keeps the layout and no
 *  device talks to another. */
export function fxTraceElementwise(): TraceFixture {
  return makeFixture(
    {
      fn_name: "f",
      mode: "jit",
      inputs: [{ path: "x", shape: [8, 16] }],
      outputs: [{ path: "out", shape: [8, 16], value: (i) => 2 * Math.sin(xElem(i)) + 1 }],
      xlaOut: (s) => [[...(s.in_specs[0] ?? [null, null])]],
      collectives: () => [],
      memory: { argument: 64, output: 64, alias: 0, temp: 0, generated_code: 4096, peak: 128 },
      flops: 48,
      compile_ms: 38.4,
      run_ms: 0.31,
    },
    { ...MESH_2X4, in_specs: [["x", "y"]], out_specs: [null] },
  );
}

/** (b) A reduction: x.sum(axis=0) on P('x', 'y') gives P('y'), after an all-reduce over x (each
 *  x-row of devices holds part of every column's sum). */
export function fxTraceSum(): TraceFixture {
  const allReduce = (s: TraceState): Collective[] => {
    const sp = s.in_specs[0] ?? [];
    const over = entryAxes(sp[0] ?? null);
    if (over.length === 0) return [];
    const local = 64 / axisSize(s, sp[1] ?? null);
    const g = axisSize(s, sp[0] ?? null);
    const bytes = local * 4;
    return [
      {
        kind: "all-reduce",
        axes: over,
        shape: [local],
        dtype: "f32",
        bytes: Math.round((2 * (g - 1) * bytes) / g),
        group_size: g,
        n_groups: 8 / g,
        op_name: "jit(f)/reduce_sum",
        source: `${SRC}:3`,
        groups_text: "{{0,4},{1,5},{2,6},{3,7}}",
      },
    ];
  };
  return makeFixture(
    {
      fn_name: "f",
      mode: "jit",
      inputs: [{ path: "x", shape: [8, 64] }],
      // x = jnp.arange(512.0).reshape(8, 64): column j sums to 64·28 + 8j
      outputs: [{ path: "out", shape: [64], value: (i) => 64 * 28 + 8 * i[0] }],
      xlaOut: (s) => [[(s.in_specs[0] ?? [])[1] ?? null]],
      collectives: allReduce,
      memory: { argument: 256, output: 64, alias: 0, temp: 64, generated_code: 6144, peak: 384 },
      flops: 64,
      compile_ms: 52.9,
      run_ms: 0.42,
    },
    { ...MESH_2X4, in_specs: [["x", "y"]], out_specs: [null] },
  );
}

// The three-approaches layer: x (8, 16), w (16, 8), b (8,); sigmoid(x @ w + b).
const lx = (i: number, k: number) => 0.5 * Math.sin(i + k);
const lw = (k: number, j: number) => 0.3 * Math.cos(k - j);
const lb = (j: number) => 0.1 * j;
const layerValue = (idx: number[]) => {
  const [i, j] = idx;
  let acc = lb(j);
  for (let k = 0; k < 16; k++) acc += lx(i, k) * lw(k, j);
  return 1 / (1 + Math.exp(-acc));
};
const layerInputs: LeafDef[] = [
  { path: "x", shape: [8, 16] },
  { path: "w", shape: [16, 8] },
  { path: "b", shape: [8] },
];
const psumY = (fn: string, line: number) => (s: TraceState): Collective[] => {
  const g = s.mesh_shape[s.axis_names.indexOf("y")] ?? 1;
  if (g <= 1) return [];
  const local = [8 / (s.mesh_shape[s.axis_names.indexOf("x")] ?? 1), 8];
  const bytes = prod(local) * 4;
  return [
    {
      kind: "all-reduce",
      axes: ["y"],
      shape: local,
      dtype: "f32",
      bytes: Math.round((2 * (g - 1) * bytes) / g),
      group_size: g,
      n_groups: 8 / g,
      op_name: fn,
      source: `${SRC}:${line}`,
      groups_text: "{{0,1,2,3},{4,5,6,7}}",
    },
  ];
};

/** (c) The layer in shard_map: each device multiplies its (4, 4) block of x by its (4, 8) rows of
 *  w, psum over 'y' adds the partial products, out_specs P('x', None). */
export function fxTraceLayerShardMap(): TraceFixture {
  return makeFixture(
    {
      fn_name: "layer",
      mode: "shard_map",
      inputs: layerInputs,
      outputs: [{ path: "out", shape: [4, 8], value: layerValue }],
      collectives: psumY("jit(layer)/shard_map/psum", 6),
      memory: { argument: 224, output: 128, alias: 0, temp: 128, generated_code: 9216, peak: 480 },
      flops: 352,
      compile_ms: 87.3,
      run_ms: 0.58,
    },
    {
      ...MESH_2X4,
      in_specs: [["x", "y"], ["y", null], [null]],
      out_specs: [["x", null]],
    },
  );
}

/** The layer under plain jit (approach 1): XLA adds the all-reduce the contraction over 'y' needs. */
export function fxTraceLayerJit(): TraceFixture {
  return makeFixture(
    {
      fn_name: "layer",
      mode: "jit",
      inputs: layerInputs,
      outputs: [{ path: "out", shape: [8, 8], value: layerValue }],
      xlaOut: () => [["x", null]],
      collectives: psumY("jit(layer)/dot_general", 4),
      memory: { argument: 224, output: 128, alias: 0, temp: 128, generated_code: 8704, peak: 480 },
      flops: 352,
      compile_ms: 64.1,
      run_ms: 0.47,
    },
    { ...MESH_2X4, in_specs: [["x", "y"], ["y", null], [null]], out_specs: [null] },
  );
}

/** Approach 2: the layer with with_sharding_constraint(h, P('x', None)) and out_shardings set. */
export function fxTraceLayerConstraint(): TraceFixture {
  const f = fxTraceLayerJit();
  f.def.constraints = [
    {
      kind: "with_sharding_constraint",
      shape: [8, 8],
      dtype: "float32",
      spec_str: "P('x', None)",
      source: `${SRC}:5 (layer)`,
    },
  ];
  const g = makeFixture(f.def, { ...f.state, out_specs: [["x", null]] });
  return g;
}

/** (d) An error: the layer with 'y' made Explicit asks for out_sharding; the last good view stays. */
export function fxTraceError(): TraceFixture {
  const f = fxTraceLayerJit();
  f.error =
    "ShardingTypeError: Contracting dimensions are sharded and it is ambiguous how the output " +
    "should be sharded. Please specify the output sharding via the `out_sharding` parameter. " +
    "Got lhs_contracting_spec=('y',) and rhs_contracting_spec=('y',)";
  return f;
}

/** No layout ever compiled: an error trace with no leaves (the controls still work). */
export function fxTraceErrorInitial(): TraceFixture {
  const f = fxTraceLayerJit();
  const msg =
    "dot_general requires contracting dimensions to have the same shape, got (16,) and (8,).";
  f.trace = {
    key: 1,
    status: "error",
    message: msg,
    mode: "jit",
    inputs: [],
    outputs: [],
    constraints: [],
    collectives: [],
    memory: null,
    flops: null,
    compile_ms: 0,
    run_ms: 0,
    cached: false,
    ran: false,
    left_out: { inputs: 0, outputs: 0, constraints: 0, collectives: 0 },
    jaxpr: "",
    jaxpr_cut: 0,
    code: "",
  };
  f.stats = { key: 1, outputs: [] };
  f.options.outputs = [];
  f.state = { ...f.state, out_specs: [] };
  f.error = msg;
  return f;
}

/** Several kinds of collective in one function (a table with every tag): a reshard P('x', None)
 *  → P(None, 'x') (all-to-all), a roll along x (collective-permute), a gather and a scatter. */
export function fxTraceMixed(): TraceFixture {
  const coll = (): Collective[] => [
    {
      kind: "all-to-all",
      axes: ["x"],
      shape: [8, 4],
      dtype: "f32",
      bytes: 64,
      group_size: 2,
      n_groups: 4,
      op_name: "jit(g)/reshard",
      source: `${SRC}:3`,
      groups_text: "mesh['axis_0'=2,'axis_1'=4] {'axis_0'}",
    },
    {
      kind: "collective-permute",
      axes: ["x"],
      shape: [8, 4],
      dtype: "f32",
      bytes: 128,
      group_size: 2,
      n_groups: 8,
      op_name: "jit(g)/roll",
      source: `${SRC}:4`,
      groups_text: "{{0,4},{4,0},{1,5},{5,1},{2,6},{6,2},{3,7},{7,3}}",
    },
    {
      kind: "all-gather",
      axes: ["x", "y"],
      shape: [16, 8],
      dtype: "f32",
      bytes: 448,
      group_size: 8,
      n_groups: 1,
      op_name: "jit(g)/all_gather",
      source: `${SRC}:5`,
      groups_text: "device_ids=([8]T(0))",
    },
    {
      kind: "reduce-scatter",
      axes: [],
      shape: [2, 8],
      dtype: "bf16",
      bytes: 28,
      group_size: 8,
      n_groups: 1,
      op_name: "",
      source: "",
      groups_text: "{{0,1,2,3,4,5,6,7}}",
    },
  ];
  return makeFixture(
    {
      fn_name: "g",
      mode: "jit",
      static_args: ["shift=1"],
      inputs: [{ path: "x", shape: [16, 8] }],
      outputs: [
        { path: "out[0]", shape: [16, 8], value: (i) => Math.cos(i[0] / 3) * Math.sin(i[1] / 2) },
        { path: "out[1]", shape: [16], dtype: "bfloat16", value: (i) => i[0] * 0.5 },
      ],
      xlaOut: () => [[null, "x"], ["x"]],
      collectives: coll,
      constraints: [
        { kind: "reshard", shape: [16, 8], dtype: "float32", spec_str: "P(None, 'x')", source: `${SRC}:3 (g)` },
      ],
      memory: { argument: 256, output: 288, alias: 0, temp: 1024, generated_code: 12288, peak: 1568 },
      flops: 2.4e6,
      compile_ms: 1240,
      run_ms: 3.2,
    },
    { ...MESH_2X4, in_specs: [["x", null]], out_specs: [null, null] },
  );
}

export const TRACE_FIXTURES: Record<string, () => TraceFixture> = {
  trace_elementwise: fxTraceElementwise,
  trace_sum: fxTraceSum,
  trace_layer: fxTraceLayerShardMap,
  trace_layer_jit: fxTraceLayerJit,
  trace_layer_wsc: fxTraceLayerConstraint,
  trace_error: fxTraceError,
  trace_error_initial: fxTraceErrorInitial,
  trace_mixed: fxTraceMixed,
};

