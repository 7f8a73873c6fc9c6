// What the user points at in an array view, and what lights up for it: the hovered block or
// device, the pinned one, and the devices the find box matches. Pure: the view (view.ts) keeps
// one Selection and hands its highlight to the panes.
import type { Layout } from "../wire";
import type { Pin } from "./detail";
import { matchDevices, parseDeviceQuery } from "./header";
import { coordText, devicesAt, isCoordQuery, parseCoordQuery } from "./find";

/** What the find box matched: the devices, the blocks they hold, and what to say about it. */
export interface FindMatch {
  found: Set<number>;
  foundBlocks: Set<number>;
  message: string;
  invalid: boolean;
}

/** The blocks the devices hold, and "N devices · M blocks". */
function blocksOf(ids: number[], byDevice: Map<number, number[]>): [Set<number>, string] {
  const foundBlocks = new Set<number>();
  for (const id of ids) for (const k of byDevice.get(id) ?? []) foundBlocks.add(k);
  const nb = foundBlocks.size;
  const devs = ids.length === 1 ? `device ${ids[0]}` : `${ids.length} devices`;
  return [foundBlocks, nb === 0 ? `${devs}: holds nothing` : `${devs} · ${nb} ${nb === 1 ? "block" : "blocks"}`];
}

const noMatch = (message: string, invalid: boolean): FindMatch => ({
  found: new Set(),
  foundBlocks: new Set(),
  message,
  invalid,
});

/** The find box by mesh coordinate: "x=3", "y=*", "x=1,y=2". */
function matchCoords(text: string, layout: Layout | null, byDevice: Map<number, number[]>): FindMatch {
  const q = parseCoordQuery(text, layout?.mesh ?? null);
  if ("error" in q) return noMatch(q.error, true);
  const ids = devicesAt(layout!.mesh!, q);
  const [foundBlocks, said] = blocksOf(ids, byDevice);
  const where = ids.length === 1 ? ` at ${coordText(layout!.mesh, ids[0])}` : "";
  return { found: new Set(ids), foundBlocks, message: said.replace(/^(device \d+)/, `$1${where}`), invalid: false };
}

/** The find box's text against a layout: device ids ("1234", "12-15", "3,7,9", or a mix) or
 *  mesh coordinates ("x=3", "y=*", "x=1,y=2"). */
export function matchFind(
  text: string,
  layout: Layout | null,
  byDevice: Map<number, number[]>,
): FindMatch {
  if (isCoordQuery(text)) return matchCoords(text, layout, byDevice);
  const none = noMatch;
  const q = parseDeviceQuery(text);
  if (q === null) return none("", false);
  if ("error" in q) return none(q.error, true);
  const known = layout ? [...(layout.mesh?.device_ids ?? []), ...layout.devices.ids] : [];
  const ids = matchDevices(q.ranges, known);
  if (ids.length === 0) return none(q.single ? `no device ${q.ranges[0][0]}` : "no such devices", true);
  const found = new Set(ids);
  const [foundBlocks, said] = blocksOf(ids, byDevice);
  const at = ids.length === 1 ? coordText(layout?.mesh ?? null, ids[0]) : "";
  const missing = q.ranges.filter(([lo, hi]) => lo === hi && !found.has(lo)).map((r) => r[0]);
  const message =
    (at ? said.replace(/^(device \d+)/, `$1 at ${at}`) : said) +
    (missing.length
      ? ` · no device ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", …" : ""}`
      : "");
  return { found, foundBlocks, message, invalid: false };
}

export function samePin(a: Pin | null, b: Pin): boolean {
  if (!a || a.kind !== b.kind) return false;
  if (a.kind === "block") return b.kind === "block" && a.block === b.block;
  return b.kind === "device" && a.device === b.device;
}

/** What lights up in the grid (blocks) and in the mesh (devices). */
export interface Highlights {
  blocks: { related: Set<number>; found: Set<number>; pinned: number | null };
  devices: { related: Set<number>; found: Set<number>; pinned: Set<number> };
  /** Fade what is not lit. */
  dim: boolean;
}

export interface Pointing {
  hoverBlock: number | null;
  hoverDevice: number | null;
  pin: Pin | null;
  find: FindMatch;
}

/** A hovered block lights its devices, a hovered device its blocks; found devices and their
 *  blocks stay lit (over the dimming) while the find box matches. */
export function highlights(layout: Layout, p: Pointing, byDevice: Map<number, number[]>): Highlights {
  const relatedBlocks = new Set<number>();
  const relatedDevices = new Set<number>();
  if (p.hoverBlock !== null && layout.blocks[p.hoverBlock]) {
    relatedBlocks.add(p.hoverBlock);
    for (const id of layout.blocks[p.hoverBlock].d) relatedDevices.add(id);
  }
  if (p.hoverDevice !== null) {
    relatedDevices.add(p.hoverDevice);
    for (const k of byDevice.get(p.hoverDevice) ?? []) relatedBlocks.add(k);
  }
  const { found, foundBlocks } = p.find;
  for (const k of foundBlocks) relatedBlocks.add(k);
  for (const id of found) relatedDevices.add(id);
  let pinnedBlock: number | null = null;
  const pinnedDevices = new Set<number>();
  if (p.pin?.kind === "block" && layout.blocks[p.pin.block]) {
    pinnedBlock = p.pin.block;
    for (const id of layout.blocks[pinnedBlock].d) pinnedDevices.add(id);
  } else if (p.pin?.kind === "device") {
    pinnedDevices.add(p.pin.device);
    pinnedBlock = byDevice.get(p.pin.device)?.[0] ?? null;
  }
  return {
    blocks: { related: relatedBlocks, found: foundBlocks, pinned: pinnedBlock },
    devices: { related: relatedDevices, found, pinned: pinnedDevices },
    dim: p.hoverBlock !== null || p.hoverDevice !== null || found.size > 0,
  };
}
