// LayoutState transitions used by the controls. Pure functions.
import type { AxisType, DeviceSet, LayoutState, Options, RequestMsg, SpecEntry } from "../wire";
import type { QueueOptions } from "../shared/requests";
import {
  axesToEntry,
  axisNameProblem,
  defaultAxisNames,
  entryAxes,
  sanitizeSpec,
  specRewriteText,
} from "../shared/spec";

export function cloneState(s: LayoutState): LayoutState {
  return {
    mesh_shape: [...s.mesh_shape],
    axis_names: [...s.axis_names],
    axis_types: [...s.axis_types],
    spec: s.spec.map((e) => (Array.isArray(e) ? [...e] : e)),
    memory_kind: s.memory_kind,
    devices: s.devices,
  };
}

/** The mesh shapes the controls offer for a state's device set (the array's own, or all). */
export function meshChoices(
  options: Options,
  devices: DeviceSet,
): { factorizations: Record<string, number[][]>; n_devices: number } {
  return devices === "array"
    ? { factorizations: options.own_factorizations, n_devices: options.own_devices.length }
    : { factorizations: options.factorizations, n_devices: options.n_devices };
}

/** How an array view's requests are made (for its RequestQueue). */
export const layoutRequests: Pick<QueueOptions<LayoutState, RequestMsg>, "clone" | "build"> = {
  clone: cloneState,
  build: (seq, state) => ({ type: "request", seq, state }),
};

/** Canonical text of a state; wire/array.py's state_key writes the same string (pinned by
 *  js/tests/wire/state_key.gen.json). */
export function stateKey(s: LayoutState): string {
  return JSON.stringify({
    mesh_shape: s.mesh_shape,
    axis_names: s.axis_names,
    axis_types: s.axis_types,
    spec: s.spec,
    memory_kind: s.memory_kind,
    devices: s.devices,
  });
}

/** Change the number of mesh axes: first factorization with k axes, default names, axis types
 *  kept by position, spec entries kept for still-existing axes. */
export function withNumAxes(s: LayoutState, k: number, options: Options): LayoutState {
  const facts = meshChoices(options, s.devices).factorizations[String(k)] ?? [];
  if (facts.length === 0 || k === s.mesh_shape.length) return cloneState(s);
  const axis_names = defaultAxisNames(k);
  const mesh_shape = [...keepingTheSplit(s, facts, axis_names, options.shape)];
  const axis_types: AxisType[] = axis_names.map((_, i) => s.axis_types[i] ?? "auto");
  const spec = sanitizeSpec(s.spec, axis_names, mesh_shape, options.shape);
  return { mesh_shape, axis_names, axis_types, spec, memory_kind: s.memory_kind, devices: s.devices };
}

/** Of the mesh shapes with k axes, the one that keeps the array split as it was: the most
 *  dimensions still split (over axes of size > 1), then the most axes keeping their old size,
 *  then the fewest axes of size 1; the first listed on a tie (the first shape, 1×8, would
 *  turn P('x', None, 'z') on 2×2×2 into a replicated array: x of size 1). */
function keepingTheSplit(s: LayoutState, facts: number[][], names: string[], shape: number[]): number[] {
  const old = new Map(s.axis_names.map((n, i) => [n, s.mesh_shape[i]]));
  const score = (f: number[]): number[] => {
    const size = new Map(names.map((n, i) => [n, f[i]]));
    const spec = sanitizeSpec(s.spec, names, f, shape);
    const split = spec.filter((e) => entryAxes(e).some((a) => (size.get(a) ?? 1) > 1)).length;
    const kept = names.filter((n, i) => old.get(n) === f[i]).length;
    return [split, kept, -f.filter((v) => v === 1).length];
  };
  let best = facts[0];
  let bestScore = score(best);
  for (const f of facts.slice(1)) {
    const sc = score(f);
    const i = sc.findIndex((v, j) => v !== bestScore[j]);
    if (i >= 0 && sc[i] > bestScore[i]) [best, bestScore] = [f, sc];
  }
  return best;
}

/** Lay out onto another device set: the mesh shape is kept when it has as many devices, else
 *  the first shape with as many axes over the new set (one axis when none has). */
export function withDevices(s: LayoutState, devices: DeviceSet, options: Options): LayoutState {
  if (devices === s.devices) return cloneState(s);
  const { factorizations, n_devices } = meshChoices(options, devices);
  const n = cloneState(s);
  n.devices = devices;
  if (n.mesh_shape.reduce((a, b) => a * b, 1) === n_devices) return n;
  const same = factorizations[String(n.mesh_shape.length)] ?? [];
  if (same.length > 0) {
    n.mesh_shape = [...same[same.length - 1]];
  } else {
    n.mesh_shape = [n_devices];
    n.axis_names = defaultAxisNames(1);
    n.axis_types = [s.axis_types[0] ?? "auto"];
  }
  n.spec = sanitizeSpec(n.spec, n.axis_names, n.mesh_shape, options.shape);
  return n;
}

export function withMeshShape(s: LayoutState, meshShape: number[], options: Options): LayoutState {
  const n = cloneState(s);
  n.mesh_shape = [...meshShape];
  n.spec = sanitizeSpec(n.spec, n.axis_names, n.mesh_shape, options.shape);
  return n;
}

/** Rename axis i (spec entries follow the rename). Throws when the name is invalid. */
export function withAxisName(s: LayoutState, i: number, name: string): LayoutState {
  const problem = axisNameProblem(s.axis_names, i, name);
  if (problem) throw new Error(problem);
  const n = cloneState(s);
  const old = n.axis_names[i];
  n.axis_names[i] = name;
  n.spec = n.spec.map((e) => axesToEntry(entryAxes(e).map((a) => (a === old ? name : a))));
  return n;
}

export function withAxisType(s: LayoutState, i: number, t: AxisType): LayoutState {
  const n = cloneState(s);
  n.axis_types[i] = t;
  return n;
}

export function withSpecEntry(s: LayoutState, dim: number, e: SpecEntry): LayoutState {
  const n = cloneState(s);
  while (n.spec.length <= dim) n.spec.push(null);
  n.spec[dim] = Array.isArray(e) ? [...e] : e;
  return n;
}

export function withMemoryKind(s: LayoutState, kind: string): LayoutState {
  const n = cloneState(s);
  n.memory_kind = kind;
  return n;
}

/** What a mesh change did to the spec, in words ("" when nothing): the controls drop an axis from
 *  a dimension when the new mesh no longer has it or its size no longer divides the dimension,
 *  e.g. "P('x', 'y') → P(None, 'y'): dim 0 drops 'x' (x=3 does not divide 8)". */
export function specRewrite(before: LayoutState, after: LayoutState, shape: number[]): string {
  return specRewriteText(before.spec, after.spec, after.axis_names, after.mesh_shape, shape);
}
