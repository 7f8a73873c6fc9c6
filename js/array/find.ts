// Find by mesh coordinate: "x=3", "y=*", "x=1,y=2", "x=0-1 y=2" pick the devices at those
// positions of the mesh (device_ids are row-major over axis_sizes); axes not named match all.
import type { MeshInfo } from "../wire";

/** A parsed coordinate query: per mesh axis, the positions it allows (null: any). */
export type CoordQuery = { axes: Map<string, [number, number] | null> } | { error: string };

/** Whether the find box holds a coordinate query (it names an axis: "x=…"). */
export function isCoordQuery(text: string): boolean {
  return text.includes("=");
}

/** Parse "x=3", "y=*", "x=1,y=2", "x=0-1" (commas or spaces between terms). */
export function parseCoordQuery(text: string, mesh: MeshInfo | null): CoordQuery {
  if (!mesh) return { error: "this layout has no mesh: find devices by id" };
  const axes = new Map<string, [number, number] | null>();
  for (const part of text.trim().split(/[\s,;]+/)) {
    if (part === "") continue;
    const m = /^([^=]+)=(\*|\d{1,9}(?:(?:-|–|\.\.)\d{1,9})?)$/.exec(part);
    if (!m) {
      return {
        error: /^\d/.test(part)
          ? `"${part}": use ids or axis=position, not both`
          : `"${part}" is not axis=position (use x=3, y=*, x=1,y=2)`,
      };
    }
    const [, name, val] = m;
    const k = mesh.axis_names.indexOf(name);
    if (k < 0) return { error: `no mesh axis "${name}" (axes: ${mesh.axis_names.join(", ")})` };
    if (axes.has(name)) return { error: `${name} is given twice` };
    if (val === "*") {
      axes.set(name, null);
      continue;
    }
    const [a, b = a] = val.split(/-|–|\.\./).map(Number);
    const [lo, hi] = a <= b ? [a, b] : [b, a];
    const size = mesh.axis_sizes[k];
    if (hi >= size) return { error: `${name}=${val}: ${name} has size ${size} (positions 0-${size - 1})` };
    axes.set(name, [lo, hi]);
  }
  if (axes.size === 0) return { error: "name an axis: x=3, y=*, x=1,y=2" };
  return { axes };
}

/** The position of mesh device number `i` (row-major) along each axis. */
export function meshCoords(mesh: MeshInfo, i: number): number[] {
  const out = new Array<number>(mesh.axis_sizes.length);
  for (let k = mesh.axis_sizes.length - 1; k >= 0; k--) {
    out[k] = i % mesh.axis_sizes[k];
    i = Math.floor(i / mesh.axis_sizes[k]);
  }
  return out;
}

/** The device ids at the positions the query allows, in mesh order. */
export function devicesAt(mesh: MeshInfo, q: { axes: Map<string, [number, number] | null> }): number[] {
  const want = mesh.axis_names.map((n) => q.axes.get(n) ?? null);
  const out: number[] = [];
  mesh.device_ids.forEach((id, i) => {
    const c = meshCoords(mesh, i);
    if (want.every((r, k) => r === null || (r[0] <= c[k] && c[k] <= r[1]))) out.push(id);
  });
  return out;
}

/** "x=1, y=2": where a device sits in the mesh ("" when it is not in it). */
export function coordText(mesh: MeshInfo | null, id: number): string {
  if (!mesh) return "";
  const i = mesh.device_ids.indexOf(id);
  if (i < 0) return "";
  const c = meshCoords(mesh, i);
  return mesh.axis_names.map((n, k) => `${n}=${c[k]}`).join(", ");
}
