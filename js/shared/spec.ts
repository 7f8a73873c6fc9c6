// Spec entries and the options offered for each array dimension.
import type { SpecEntry } from "../wire";

/** The axes of a spec entry as a list (null -> []). */
export function entryAxes(e: SpecEntry | undefined): string[] {
  if (e == null) return [];
  return typeof e === "string" ? [e] : [...e];
}

/** Normalized entry from axes: [] -> null, [a] -> "a", [a, b] -> ["a", "b"]. */
export function axesToEntry(axes: string[]): SpecEntry {
  if (axes.length === 0) return null;
  if (axes.length === 1) return axes[0];
  return [...axes];
}

/** Value used in <select>s: "" for None, "x", "x+y"; a JSON list when an axis name has a "+"
 *  or starts with "[" (JAX allows any string as an axis name). */
export function encodeEntry(e: SpecEntry | undefined): string {
  const axes = entryAxes(e);
  if (axes.some((a) => a.includes("+") || a.startsWith("["))) return JSON.stringify(axes);
  return axes.join("+");
}

export function decodeEntry(v: string): SpecEntry {
  if (v.startsWith("[")) return axesToEntry(JSON.parse(v) as string[]);
  return axesToEntry(v === "" ? [] : v.split("+"));
}

export function specString(spec: SpecEntry[]): string {
  const parts = spec.map((e) => {
    const a = entryAxes(e);
    if (a.length === 0) return "None";
    if (a.length === 1) return `'${a[0]}'`;
    return `(${a.map((x) => `'${x}'`).join(", ")})`;
  });
  return `P(${parts.join(", ")})`;
}

export interface SpecOption {
  value: string;
  entry: SpecEntry;
  label: string;
  disabled: boolean;
  reason: string;
}

/** Every non-empty subset of `names`, in mesh order, singles first then pairs, … */
export function axisCombos(names: string[]): string[][] {
  const out: string[][] = [];
  const n = names.length;
  for (let mask = 1; mask < 1 << n; mask++) {
    const c: string[] = [];
    for (let i = 0; i < n; i++) if (mask & (1 << i)) c.push(names[i]);
    out.push(c);
  }
  return out.sort((a, b) => a.length - b.length);
}

/**
 * Options for the spec of dimension `dim` (size `dimSize`): None, each axis, each combo of axes
 * in mesh order. Disabled (with a reason) when the product of the axis sizes does not divide the
 * dimension, or when an axis is already used by another dimension of `spec`. The current entry of
 * the dimension is always included.
 */
export function specOptions(
  dim: number,
  dimSize: number,
  axisNames: string[],
  axisSizes: number[],
  spec: SpecEntry[],
): SpecOption[] {
  const sizeOf = new Map(axisNames.map((n, i) => [n, axisSizes[i] ?? 1]));
  const usedBy = new Map<string, number>();
  spec.forEach((e, d) => {
    if (d !== dim) for (const a of entryAxes(e)) usedBy.set(a, d);
  });
  const combos = axisCombos(axisNames);
  const current = entryAxes(spec[dim]);
  if (current.length > 0 && !combos.some((c) => c.join("+") === current.join("+"))) {
    combos.push(current);
  }
  const opts: SpecOption[] = [
    { value: "", entry: null, label: "None (replicated)", disabled: false, reason: "" },
  ];
  for (const c of combos) {
    const name = c.join("+");
    const reasons: string[] = [];
    const used = c.filter((a) => usedBy.has(a));
    if (used.length) reasons.push(`${used.join(", ")} used by dim ${usedBy.get(used[0])}`);
    const unknown = c.filter((a) => !sizeOf.has(a));
    if (unknown.length) reasons.push(`no axis ${unknown.join(", ")}`);
    const p = c.reduce((acc, a) => acc * (sizeOf.get(a) ?? 1), 1);
    if (p > 0 && dimSize % p !== 0) reasons.push(`${dimSize} not divisible by ${p}`);
    const reason = reasons.join("; ");
    opts.push({
      value: name,
      entry: axesToEntry(c),
      label: reason ? `${name} — ${reason}` : name,
      disabled: reason !== "",
      reason,
    });
  }
  return opts;
}

export const DEFAULT_AXIS_NAMES = ["x", "y", "z", "w"];

/** The names the controls give k new mesh axes: x, y, z, w, then a0..a{k-1} for more than four
 *  (mesh.default_axis_names in Python; js/tests/wire/axis_names.gen.json pins the two). */
export function defaultAxisNames(k: number): string[] {
  return k <= DEFAULT_AXIS_NAMES.length
    ? DEFAULT_AXIS_NAMES.slice(0, k)
    : Array.from({ length: k }, (_, i) => `a${i}`);
}

/**
 * Make `spec` consistent with the mesh: entries keep only existing axes, an axis used by an
 * earlier dimension is dropped, and when the axes do not divide the dimension trailing axes are
 * dropped until they do (None at worst). The result has one entry per array dimension. It keeps
 * exactly the specs Python's spec.validate accepts (js/tests/wire/spec_validity.gen.json pins the two).
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

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** "" when `name` is a valid new name for axis i, else why not. */
export function axisNameProblem(names: string[], i: number, name: string): string {
  if (name === "") return "axis name is empty";
  if (!NAME_RE.test(name)) return "use letters, digits and _ (not starting with a digit)";
  if (names.some((n, j) => j !== i && n === name)) return `"${name}" is already used`;
  return "";
}

/** What a mesh change did to one spec, in words ("" when nothing): which axes each dimension
 *  dropped and why (the axis is gone, its size no longer divides the dimension, or an earlier
 *  dimension took it), e.g. "P('x', 'y') → P(None, 'y'): dim 0 drops 'x' (x=3 does not divide 8)". */
export function specRewriteText(
  before: SpecEntry[],
  after: SpecEntry[],
  axisNames: string[],
  meshShape: number[],
  shape: number[],
): string {
  const size = new Map(axisNames.map((n, i) => [n, meshShape[i] ?? 1]));
  const reasons: string[] = [];
  for (let d = 0; d < shape.length; d++) {
    const was = entryAxes(before[d] ?? null);
    const now = new Set(entryAxes(after[d] ?? null));
    const dropped = was.filter((a) => !now.has(a));
    if (dropped.length === 0) continue;
    const why = dropped.map((a) => {
      if (!size.has(a)) return `'${a}' is no longer a mesh axis`;
      const parts = [...now, a].reduce((acc, x) => acc * (size.get(x) ?? 1), 1);
      if (shape[d] % parts !== 0)
        return now.size
          ? `${[...now, a].map((x) => `${x}=${size.get(x)}`).join("·")} = ${parts} does not divide ${shape[d]}`
          : `${a}=${size.get(a)} does not divide ${shape[d]}`;
      return `'${a}' is used by an earlier dimension`;
    });
    reasons.push(`dim ${d} drops ${dropped.map((a) => `'${a}'`).join(", ")} (${why.join("; ")})`);
  }
  if (reasons.length === 0) return "";
  return `${specString(before)} → ${specString(after)}: ${reasons.join("; ")}`;
}

