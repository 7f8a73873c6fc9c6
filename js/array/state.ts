// LayoutState transitions used by the controls. Pure functions.
import type { AxisType, LayoutState, Options, SpecEntry } from "../wire";
import { axesToEntry, entryAxes } from "../shared/spec";

export const DEFAULT_AXIS_NAMES = ["x", "y", "z", "w"];

export function cloneState(s: LayoutState): LayoutState {
  return {
    mesh_shape: [...s.mesh_shape],
    axis_names: [...s.axis_names],
    axis_types: [...s.axis_types],
    spec: s.spec.map((e) => (Array.isArray(e) ? [...e] : e)),
    memory_kind: s.memory_kind,
  };
}

/** Canonical text of a state; payload.py's state_key writes the same string. */
export function stateKey(s: LayoutState): string {
  return JSON.stringify({
    mesh_shape: s.mesh_shape,
    axis_names: s.axis_names,
    axis_types: s.axis_types,
    spec: s.spec,
    memory_kind: s.memory_kind,
  });
}

/**
 * Make `spec` consistent with the mesh: entries keep only existing axes, an axis used by an
 * earlier dimension is dropped, and when the axes do not divide the dimension trailing axes are
 * dropped until they do (None at worst). The result has one entry per array dimension.
 */
export function sanitizeSpec(
  spec: SpecEntry[],
  axisNames: string[],
  meshShape: number[],
  shape: number[],
): SpecEntry[] {
  const size = new Map(axisNames.map((n, i) => [n, meshShape[i] ?? 1]));
  const used = new Set<string>();
  const out: SpecEntry[] = [];
  for (let d = 0; d < shape.length; d++) {
    let axes = entryAxes(spec[d]).filter((a) => size.has(a) && !used.has(a));
    axes = [...new Set(axes)];
    while (axes.length > 0) {
      const p = axes.reduce((acc, a) => acc * size.get(a)!, 1);
      if (shape[d] % p === 0) break;
      axes = axes.slice(0, -1);
    }
    axes.forEach((a) => used.add(a));
    out.push(axesToEntry(axes));
  }
  return out;
}

/** Change the number of mesh axes: first factorization with k axes, default names, axis types
 *  kept by position, spec entries kept for still-existing axes. */
export function withNumAxes(s: LayoutState, k: number, options: Options): LayoutState {
  const facts = options.factorizations[String(k)] ?? [];
  if (facts.length === 0 || k === s.mesh_shape.length) return cloneState(s);
  const mesh_shape = [...facts[0]];
  const axis_names = DEFAULT_AXIS_NAMES.slice(0, k);
  const axis_types: AxisType[] = axis_names.map((_, i) => s.axis_types[i] ?? "auto");
  const spec = sanitizeSpec(s.spec, axis_names, mesh_shape, options.shape);
  return { mesh_shape, axis_names, axis_types, spec, memory_kind: s.memory_kind };
}

export function withMeshShape(s: LayoutState, meshShape: number[], options: Options): LayoutState {
  const n = cloneState(s);
  n.mesh_shape = [...meshShape];
  n.spec = sanitizeSpec(n.spec, n.axis_names, n.mesh_shape, options.shape);
  return n;
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** "" when `name` is a valid new name for axis i, else why not. */
export function axisNameProblem(names: string[], i: number, name: string): string {
  if (name === "") return "axis name is empty";
  if (!NAME_RE.test(name)) return "use letters, digits and _ (not starting with a digit)";
  if (names.some((n, j) => j !== i && n === name)) return `"${name}" is already used`;
  return "";
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
