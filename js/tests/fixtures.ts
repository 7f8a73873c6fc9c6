// Synthetic payloads for tests and the dev preview. Mirrors what src/shardwidget/wire/ sends.
import type {
  AxisType,
  Block,
  Layout,
  LayoutState,
  Options,
  SpecEntry,
  Stats,
} from "../wire";
import { entryAxes, specString } from "../shared/spec";

export interface Fixture {
  layout: Layout;
  stats: Stats;
  options: Options;
  state: LayoutState;
  view_dims: number[];
}

const ITEMSIZE: Record<string, number> = {
  float32: 4,
  float64: 8,
  bfloat16: 2,
  float16: 2,
  int32: 4,
  complex64: 8,
  bool: 1,
};

function prod(xs: number[]): number {
  return xs.reduce((a, b) => a * b, 1);
}

/** All ordered factorizations of n into k factors (k = 1..4). */
export function factorizations(n: number): Record<string, number[][]> {
  const out: Record<string, number[][]> = {};
  const rec = (rem: number, k: number): number[][] => {
    if (k === 1) return [[rem]];
    const res: number[][] = [];
    for (let f = 1; f <= rem; f++) if (rem % f === 0) for (const t of rec(rem / f, k - 1)) res.push([f, ...t]);
    return res;
  };
  for (let k = 1; k <= 4; k++) {
    const all = rec(n, k);
    const no1 = all.filter((s) => s.every((x) => x > 1));
    const with1 = all.filter((s) => s.some((x) => x === 1));
    out[String(k)] = [...no1, ...with1];
  }
  return out;
}

/** A deterministic test signal. */
export function signal(idx: number[]): number {
  let v = 0;
  idx.forEach((x, d) => (v += Math.sin((x + 1) * 0.21 * (d + 1)) * (d === 0 ? 1.3 : 1)));
  return v + 0.02 * idx[0];
}

export interface NamedOpts {
  shape: number[];
  dtype?: string;
  meshShape: number[];
  axisNames?: string[];
  axisTypes?: AxisType[];
  spec: SpecEntry[];
  key?: number;
  stats?: "ready" | "pending" | "unavailable";
  thumbMax?: number;
  viewDims?: number[];
  platform?: string;
  kind?: string;
  memoryKind?: string;
  processes?: number;
  /** TPU-like coords: `tpuCoords` is 4×4×8 chips × 2 cores; `topology` any [x, y, z?] chips ×
   *  cores, device id = core + cores × (x + X × (y + Y × z)) (x fastest, as TPU ids go). */
  tpuCoords?: boolean;
  topology?: { chips: number[]; cores: number };
  deviceIds?: number[];
  source?: "original" | "resharded";
}

/** Coords of device `id` on a TPU-like slice of `chips` = [X, Y, Z?] chips with `cores` each. */
export function topologyCoords(id: number, chips: number[], cores: number): number[] {
  let chip = Math.floor(id / cores);
  return chips.map((size, k) => {
    const v = k === chips.length - 1 ? chip : chip % size;
    chip = Math.floor(chip / size);
    return v;
  });
}

export function namedFixture(o: NamedOpts): Fixture {
  const dtype = o.dtype ?? "float32";
  const itemsize = ITEMSIZE[dtype] ?? 4;
  const names = o.axisNames ?? ["x", "y", "z", "w"].slice(0, o.meshShape.length);
  const types: AxisType[] = o.axisTypes ?? names.map(() => "auto");
  const n = prod(o.meshShape);
  const ids = o.deviceIds ?? Array.from({ length: n }, (_, i) => i);
  const spec: SpecEntry[] = o.shape.map((_, d) => o.spec[d] ?? null);
  const axisIndex = new Map(names.map((a, i) => [a, i]));
  // mesh coords of device at mesh position p
  const coordsOf = (p: number): number[] => {
    const c: number[] = [];
    for (let a = o.meshShape.length - 1; a >= 0; a--) {
      c.unshift(p % o.meshShape[a]);
      p = Math.floor(p / o.meshShape[a]);
    }
    return c;
  };
  const blockMap = new Map<string, Block>();
  for (let p = 0; p < n; p++) {
    const c = coordsOf(p);
    const i: [number, number][] = o.shape.map((size, d) => {
      const axes = entryAxes(spec[d]);
      let parts = 1;
      let idx = 0;
      for (const a of axes) {
        const ai = axisIndex.get(a)!;
        idx = idx * o.meshShape[ai] + c[ai];
        parts *= o.meshShape[ai];
      }
      const len = Math.ceil(size / parts);
      return [Math.min(size, idx * len), Math.min(size, (idx + 1) * len)];
    });
    const key = JSON.stringify(i);
    let b = blockMap.get(key);
    if (!b) blockMap.set(key, (b = { i, d: [] }));
    b.d.push(ids[p]);
  }
  const blocks = [...blockMap.values()];
  const shardShape = blocks[0].i.map((r) => r[1] - r[0]);
  const typeofStr = `${dtype}[${o.shape
    .map((s, d) => {
      const a = entryAxes(spec[d]);
      return a.length ? `${s}@${a.length > 1 ? `(${a.join(",")})` : a[0]}` : String(s);
    })
    .join(",")}]`;
  const platform = o.platform ?? "cpu";
  const procs = o.processes ?? 1;
  const topo = o.topology ?? (o.tpuCoords ? { chips: [4, 4, 8], cores: 2 } : null);
  const coords = topo ? ids.map((id) => topologyCoords(id, topo.chips, topo.cores)) : null;
  const layout: Layout = {
    key: o.key ?? 1,
    shape: [...o.shape],
    dtype,
    itemsize,
    typeof: typeofStr,
    sharding: "NamedSharding",
    source: o.source ?? "original",
    mesh: { axis_names: names, axis_sizes: [...o.meshShape], axis_types: types, device_ids: ids },
    spec,
    spec_str: specString(spec),
    memory_kind: o.memoryKind ?? "device",
    devices: {
      ids: [...ids],
      process: ids.map((_, p) => Math.floor((p * procs) / n)),
      platform,
      kind: o.kind ?? platform,
      coords,
      core_on_chip: topo ? ids.map((id) => id % topo.cores) : null,
      local_process: 0,
    },
    blocks,
    bytes_per_device: prod(shardShape) * itemsize,
    logical_bytes: prod(o.shape) * itemsize,
    replication: n / blocks.length,
    note: "",
    unreduced: [],
    code: `x = jax.device_put(x, NamedSharding(mesh, ${specString(spec)}))`,
  };
  const viewDims = o.viewDims ?? (o.shape.length >= 2 ? [0, 1] : o.shape.length === 1 ? [0] : []);
  const options: Options = {
    n_devices: n,
    platform,
    ndim: o.shape.length,
    shape: [...o.shape],
    dtype,
    factorizations: factorizations(n),
    memory_kinds: ["device", "pinned_host", "unpinned_host"],
    original: {
      mesh_shape: [...o.meshShape],
      axis_names: [...names],
      axis_types: [...types],
      spec: [...spec],
      memory_kind: o.memoryKind ?? "device",
      devices: "array",
    },
    reshard_disabled: procs > 1 ? "the array spans several processes" : "",
    own_devices: [...ids],
    own_factorizations: factorizations(n),
  };
  const state: LayoutState = {
    mesh_shape: [...o.meshShape],
    axis_names: [...names],
    axis_types: [...types],
    spec: [...spec],
    memory_kind: o.memoryKind ?? "device",
    devices: "array",
  };
  const stats = makeStats(layout, o.stats ?? "ready", viewDims, o.thumbMax ?? 16);
  return { layout, stats, options, state, view_dims: viewDims };
}

/** Statistics by sampling the test signal: thumbnails over `viewDims`, values of small blocks. */
export function makeStats(
  layout: Layout,
  status: "ready" | "pending" | "unavailable",
  viewDims: number[],
  thumbMax = 16,
): Stats {
  const empty: Stats = {
    key: layout.key,
    status,
    message: status === "unavailable" ? "statistics are off for arrays over 1 GiB" : "",
    blocks: [],
    values: null,
    values_offsets: [],
    thumbs: null,
    thumb_shapes: [],
    thumb_offsets: [],
    thumbs_dims: viewDims,
    vmin: 0,
    vmax: 0,
    partials: [],
  };
  if (status !== "ready") return empty;
  const cplx = layout.dtype.startsWith("complex");
  const values: number[] = [];
  const valuesOffsets: number[] = [];
  const thumbsRaw: number[][] = [];
  const thumbShapes: [number, number][] = [];
  const blockStats: (number[] | null)[] = [];
  let vmin = Infinity;
  let vmax = -Infinity;
  for (const b of layout.blocks) {
    const sizes = b.i.map((r) => r[1] - r[0]);
    const count = prod(sizes);
    // sample up to ~4096 points
    const step = Math.max(1, Math.ceil(Math.pow(count / 4096, 1 / Math.max(1, sizes.length))));
    let mn = Infinity, mx = -Infinity, sum = 0, sq = 0, k = 0;
    const visit = (d: number, idx: number[]) => {
      if (d === sizes.length) {
        const v = signal(idx);
        mn = Math.min(mn, v); mx = Math.max(mx, v); sum += v; sq += v * v; k++;
        return;
      }
      for (let x = b.i[d][0]; x < b.i[d][1]; x += step) visit(d + 1, [...idx, x]);
    };
    visit(0, []);
    const mean = sum / Math.max(1, k);
    blockStats.push([mn, mx, mean, Math.sqrt(Math.max(0, sq / Math.max(1, k) - mean * mean)), 0, 0]);
    vmin = Math.min(vmin, mn);
    vmax = Math.max(vmax, mx);
    if (count <= 64) {
      valuesOffsets.push(values.length / (cplx ? 2 : 1));
      const all = (d: number, idx: number[]) => {
        if (d === sizes.length) {
          const v = signal(idx);
          values.push(v);
          if (cplx) values.push(-v / 2);
          return;
        }
        for (let x = b.i[d][0]; x < b.i[d][1]; x++) all(d + 1, [...idx, x]);
      };
      all(0, []);
    } else valuesOffsets.push(-1);
  }
  const span = vmax - vmin || 1;
  for (const b of layout.blocks) {
    if (viewDims.length === 0) {
      thumbShapes.push([0, 0]);
      thumbsRaw.push([]);
      continue;
    }
    const rd = viewDims.length === 2 ? viewDims[0] : -1;
    const cd = viewDims[viewDims.length - 1];
    const rlen = rd >= 0 ? b.i[rd][1] - b.i[rd][0] : 1;
    const clen = b.i[cd][1] - b.i[cd][0];
    const rows = Math.min(thumbMax, rlen);
    const cols = Math.min(thumbMax, clen);
    const px: number[] = [];
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) {
        const idx = b.i.map((rg) => rg[0]);
        if (rd >= 0) idx[rd] = b.i[rd][0] + Math.floor(((r + 0.5) * rlen) / rows);
        idx[cd] = b.i[cd][0] + Math.floor(((c + 0.5) * clen) / cols);
        px.push(Math.round(((signal(idx) - vmin) / span) * 255));
      }
    thumbShapes.push([rows, cols]);
    thumbsRaw.push(px);
  }
  const thumbOffsets: number[] = [];
  let total = 0;
  for (const t of thumbsRaw) {
    thumbOffsets.push(t.length ? total : -1);
    total += t.length;
  }
  const tb = new Uint8Array(total);
  let at = 0;
  for (const t of thumbsRaw) {
    tb.set(t, at);
    at += t.length;
  }
  const vb = new Float64Array(values);
  return {
    ...empty,
    blocks: blockStats,
    values: values.length ? new DataView(vb.buffer) : null,
    values_offsets: valuesOffsets,
    thumbs: new DataView(tb.buffer),
    thumb_shapes: thumbShapes,
    thumb_offsets: thumbOffsets,
    vmin,
    vmax,
    partials: [],
  };
}

/** The model's trait values for a fixture. */
export function traitsOf(f: Fixture): Record<string, unknown> {
  return {
    mesh_shape: f.state.mesh_shape,
    axis_names: f.state.axis_names,
    axis_types: f.state.axis_types,
    spec: f.state.spec,
    memory_kind: f.state.memory_kind,
    devices: f.state.devices,
    view_dims: f.view_dims,
    error: "",
    busy: false,
    _options: f.options,
    _layout: f.layout,
    _stats: f.stats,
  };
}

// ---- the fixtures ----------------------------------------------------------------------------

/** 8 devices, 2×4 mesh, P('x','y') on a (8,16) float32, with stats and thumbnails. */
export function fx8(): Fixture {
  return namedFixture({ shape: [8, 16], meshShape: [2, 4], spec: ["x", "y"] });
}

/** A numpy array placed on device 0 of 8. */
export function fxSingle(): Fixture {
  const f = namedFixture({ shape: [4, 6], meshShape: [8], spec: [null, null] });
  f.layout.sharding = "SingleDeviceSharding";
  f.layout.mesh = null;
  f.layout.spec_str = "";
  f.layout.typeof = "float32[4,6]";
  f.layout.blocks = [{ i: [[0, 4], [0, 6]], d: [0] }];
  f.layout.devices = { ...f.layout.devices, ids: [0], process: [0] };
  f.layout.bytes_per_device = f.layout.logical_bytes;
  f.layout.replication = 1;
  f.layout.note = "numpy array placed on CpuDevice(id=0)";
  f.options.original = null;
  f.stats = makeStats(f.layout, "ready", [0, 1]);
  return f;
}

/** A replicated 1-D array: P(None) over 8 devices (or `n`). */
export function fxReplicated(n = 8): Fixture {
  return namedFixture({ shape: [32], meshShape: [n], spec: [null] });
}

/** Partially replicated: 2×4 mesh, P('x') on (8,16): 2 blocks of 4 holders each. */
export function fxPartial(): Fixture {
  return namedFixture({ shape: [8, 16], meshShape: [2, 4], spec: ["x", null] });
}

/** 3-D (6,8,16) on 2×4, P('x', None, 'y'), drawing dims (1, 2) with a slider over dim 0. */
export function fx3d(): Fixture {
  return namedFixture({
    shape: [6, 8, 16],
    meshShape: [2, 4],
    spec: ["x", null, "y"],
    viewDims: [1, 2],
  });
}

/** 256 devices, 16×16 mesh, P('x','y') on (4096,4096) bfloat16, TPU-like. */
export function fx256(): Fixture {
  return namedFixture({
    shape: [4096, 4096],
    dtype: "bfloat16",
    meshShape: [16, 16],
    spec: ["x", "y"],
    thumbMax: 8,
    platform: "tpu",
    kind: "TPU v5 lite",
    tpuCoords: true,
    processes: 1,
  });
}

/** 4096 devices, 64×64 mesh: canvas rendering. Statistics pending. */
export function fx4096(): Fixture {
  return namedFixture({
    shape: [8192, 8192],
    meshShape: [64, 64],
    spec: ["x", "y"],
    stats: "pending",
    platform: "tpu",
    kind: "TPU v5p",
  });
}

/** 3-axis mesh (2×2×2) with multi-axis sharding and a complex dtype, 2 processes. */
export function fx3axis(): Fixture {
  return namedFixture({
    shape: [4, 8],
    dtype: "complex64",
    meshShape: [2, 2, 2],
    spec: [["x", "y"], "z"],
    processes: 2,
  });
}

/** TPU v4-like: 2×2×2 chips (x, y, z) with 2 cores each = 16 devices; mesh 4×4 over them in id
 *  order, P('x', 'y') on (16, 16). */
export function fxTpuV4(): Fixture {
  return namedFixture({
    shape: [16, 16],
    meshShape: [4, 4],
    axisNames: ["data", "model"],
    spec: ["data", "model"],
    platform: "tpu",
    kind: "TPU v4",
    topology: { chips: [2, 2, 2], cores: 2 },
  });
}

/** TPU v5e-like: 4×4 chips, 1 core each = 16 devices; mesh 2×8 in an order that is not the
 *  physical one (as jax.make_mesh may choose), P('x', 'y') on (8, 32). */
export function fxTpuV5e(): Fixture {
  const order = [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15];
  const f = namedFixture({
    shape: [8, 32],
    meshShape: [2, 8],
    spec: ["x", "y"],
    platform: "tpu",
    kind: "TPU v5 lite",
    topology: { chips: [4, 4, 1], cores: 1 },
    deviceIds: order,
  });
  return f;
}
