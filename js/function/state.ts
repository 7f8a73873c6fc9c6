// TraceState transitions for the function view's controls. Pure functions.
//
// The rules match the array view's (array/state.ts, shared/spec.ts): an axis appears at most
// once per spec, a dimension takes only axes whose product divides it, a mesh change keeps what
// still fits. One difference: a shard_map output's spec names how the device-local results are
// put together, so its global size is local × axes and any axis fits (only "once per spec"
// applies).
import type { AxisType, LeafInfo, SpecEntry, TraceMode, TraceOptions, TraceState } from "../wire";
import {
  axesToEntry,
  axisNameProblem,
  defaultAxisNames,
  entryAxes,
  sanitizeSpec,
  specOptions,
  specRewriteText,
  type SpecOption,
} from "../shared/spec";

function cloneSpec(s: SpecEntry[]): SpecEntry[] {
  return s.map((e) => (Array.isArray(e) ? [...e] : e));
}

export function cloneTraceState(s: TraceState): TraceState {
  return {
    mesh_shape: [...s.mesh_shape],
    axis_names: [...s.axis_names],
    axis_types: [...s.axis_types],
    in_specs: s.in_specs.map(cloneSpec),
    out_specs: s.out_specs.map((o) => (o === null ? null : cloneSpec(o))),
    ...(s.donate ? { donate: [...s.donate] } : {}), // (Reset's: the original donation)
  };
}

/** Whether output specs are free of divisibility (shard_map: the global shape follows them). */
function outSpecsFree(mode: TraceMode): boolean {
  return mode === "shard_map";
}

/** The shapes the output specs are checked against: the global shapes in jit mode, zeros (which
 *  every product divides) in shard_map mode. */
function outCheckShapes(options: TraceOptions, n: number): number[][] {
  return Array.from({ length: n }, (_, i) => {
    const shape = options.outputs[i]?.shape ?? [];
    return outSpecsFree(options.mode) ? shape.map(() => 0) : shape;
  });
}

/** Make every spec consistent with the state's mesh (see sanitizeSpec). */
export function sanitizeTraceState(s: TraceState, options: TraceOptions): TraceState {
  const n = cloneTraceState(s);
  n.in_specs = options.inputs.map((leaf, i) =>
    sanitizeSpec(n.in_specs[i] ?? [], n.axis_names, n.mesh_shape, leaf.shape),
  );
  const shapes = outCheckShapes(options, n.out_specs.length);
  n.out_specs = n.out_specs.map((o, i) => {
    if (o === null && !outSpecsFree(options.mode)) return null;
    const shape = shapes[i].length ? shapes[i] : (o ?? []).map(() => 0);
    return sanitizeSpec(o ?? [], n.axis_names, n.mesh_shape, shape);
  });
  return n;
}

/** Change the number of mesh axes: the first factorization with k axes, default names, types kept
 *  by position, spec entries kept where their axes still exist and fit. */
export function withTraceNumAxes(s: TraceState, k: number, options: TraceOptions): TraceState {
  const facts = options.factorizations[String(k)] ?? [];
  if (facts.length === 0 || k === s.mesh_shape.length) return cloneTraceState(s);
  const n = cloneTraceState(s);
  n.mesh_shape = [...facts[0]];
  n.axis_names = defaultAxisNames(k);
  n.axis_types = n.axis_names.map((_, i): AxisType => s.axis_types[i] ?? "auto");
  return sanitizeTraceState(n, options);
}

export function withTraceMeshShape(
  s: TraceState,
  meshShape: number[],
  options: TraceOptions,
): TraceState {
  const n = cloneTraceState(s);
  n.mesh_shape = [...meshShape];
  return sanitizeTraceState(n, options);
}

function renameIn(spec: SpecEntry[], old: string, name: string): SpecEntry[] {
  return spec.map((e) => axesToEntry(entryAxes(e).map((a) => (a === old ? name : a))));
}

/** Rename axis i; every spec follows the rename. Throws when the name is invalid. */
export function withTraceAxisName(s: TraceState, i: number, name: string): TraceState {
  const problem = axisNameProblem(s.axis_names, i, name);
  if (problem) throw new Error(problem);
  const n = cloneTraceState(s);
  const old = n.axis_names[i];
  n.axis_names[i] = name;
  n.in_specs = n.in_specs.map((sp) => renameIn(sp, old, name));
  n.out_specs = n.out_specs.map((sp) => (sp === null ? null : renameIn(sp, old, name)));
  return n;
}

export function withTraceAxisType(s: TraceState, i: number, t: AxisType): TraceState {
  const n = cloneTraceState(s);
  n.axis_types[i] = t;
  return n;
}

/** Set dimension `dim` of input `leaf`'s spec. */
export function withInSpecEntry(s: TraceState, leaf: number, dim: number, e: SpecEntry): TraceState {
  const n = cloneTraceState(s);
  while (n.in_specs.length <= leaf) n.in_specs.push([]);
  const sp = n.in_specs[leaf];
  while (sp.length <= dim) sp.push(null);
  sp[dim] = Array.isArray(e) ? [...e] : e;
  return n;
}

/** Set output `leaf`'s whole spec (null: let XLA choose, jit mode only). */
export function withOutSpec(s: TraceState, leaf: number, spec: SpecEntry[] | null): TraceState {
  const n = cloneTraceState(s);
  while (n.out_specs.length <= leaf) n.out_specs.push(null);
  n.out_specs[leaf] = spec === null ? null : cloneSpec(spec);
  return n;
}

/** Set dimension `dim` of output `leaf`'s spec (a null spec becomes all-None first). */
export function withOutSpecEntry(
  s: TraceState,
  leaf: number,
  ndim: number,
  dim: number,
  e: SpecEntry,
): TraceState {
  const n = cloneTraceState(s);
  while (n.out_specs.length <= leaf) n.out_specs.push(null);
  const sp = n.out_specs[leaf] ?? Array.from({ length: ndim }, () => null);
  while (sp.length <= dim) sp.push(null);
  sp[dim] = Array.isArray(e) ? [...e] : e;
  n.out_specs[leaf] = sp;
  return n;
}

/** The choices of one dimension's spec selector. For a free (shard_map output) dimension the
 *  divisibility rule is off: `dimSize` is then only shown, not checked. */
export function leafSpecOptions(
  dim: number,
  dimSize: number,
  state: TraceState,
  spec: SpecEntry[],
  free: boolean,
): SpecOption[] {
  return specOptions(dim, free ? 0 : dimSize, state.axis_names, state.mesh_shape, spec);
}

/** The spec of output i as sent (null = auto) padded to the leaf's rank. */
export function outSpecOf(state: TraceState, i: number, leaf: LeafInfo | undefined): SpecEntry[] | null {
  const sp = state.out_specs[i];
  if (sp === null || sp === undefined) return null;
  const nd = leaf?.shape.length ?? sp.length;
  return Array.from({ length: Math.max(nd, sp.length) }, (_, d) => sp[d] ?? null);
}

/** The state of the traits, with the lists padded to the leaves the options describe. */
export function normalizeTraceState(
  raw: Partial<TraceState>,
  options: TraceOptions | null,
): TraceState {
  const inputs = options?.inputs ?? [];
  const outputs = options?.outputs ?? [];
  const inSpecs = (raw.in_specs ?? []).map(cloneSpec);
  for (let i = inSpecs.length; i < inputs.length; i++) inSpecs.push(inputs[i].shape.map(() => null));
  const outSpecs = (raw.out_specs ?? []).map((o) => (o == null ? null : cloneSpec(o)));
  for (let i = outSpecs.length; i < outputs.length; i++)
    outSpecs.push(options?.mode === "shard_map" ? outputs[i].shape.map(() => null) : null);
  return {
    mesh_shape: [...(raw.mesh_shape ?? [])],
    axis_names: [...(raw.axis_names ?? [])],
    axis_types: [...(raw.axis_types ?? [])],
    in_specs: inSpecs,
    out_specs: outSpecs,
  };
}

/** What a mesh change did to the leaves' specs, one line per leaf it changed ("x: P('x', 'y') →
 *  P(None, 'y'): dim 0 drops 'x' (x=3 does not divide 8)"). shard_map outputs are not checked
 *  against a size (any axis fits them), so only a vanished axis rewrites them. */
export function traceSpecRewrites(before: TraceState, after: TraceState, options: TraceOptions): string[] {
  const out: string[] = [];
  const one = (name: string, b: SpecEntry[] | null | undefined, a: SpecEntry[] | null | undefined, shape: number[]) => {
    if (!b || !a) return;
    const t = specRewriteText(b, a, after.axis_names, after.mesh_shape, shape);
    if (t) out.push(`${name}: ${t}`);
  };
  options.inputs.forEach((leaf, i) => one(leaf.path, before.in_specs[i], after.in_specs[i], leaf.shape));
  const shapes = outCheckShapes(options, after.out_specs.length);
  after.out_specs.forEach((o, i) => {
    const b = before.out_specs[i];
    const shape = shapes[i].length ? shapes[i] : (o ?? []).map(() => 0);
    one(options.outputs[i]?.path ?? `output ${i}`, b, o, shape);
  });
  return out;
}

