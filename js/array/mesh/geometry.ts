// The mesh pane's geometry: how big a device cell is, where each device sits by its physical
// coordinates (TPU), and one device cell's markup. Pure functions.
import type { DeviceTable } from "../../wire";
import { textColorOn } from "../../shared/colors";
import { textWidth } from "../../shared/text";

function clamp(x: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, x));
}

/** Cell size (px) for a mesh with `sizes` in `width` px. */
export function meshCellSize(sizes: number[], width: number): number {
  const w = Math.max(120, width - 36);
  const k = sizes.length;
  if (k <= 1) {
    const n = sizes[0] ?? 1;
    return clamp(Math.floor(w / Math.min(n, 16)) - 2, 6, 40);
  }
  if (k === 2) return clamp(Math.floor(w / sizes[1]) - 2, 4, 40);
  if (k === 3) {
    const panelsPerRow = Math.min(sizes[0], 4);
    return clamp(Math.floor((w - panelsPerRow * 10) / (sizes[2] * panelsPerRow)) - 2, 4, 32);
  }
  return clamp(Math.floor((w - sizes[1] * 10) / (sizes[3] * sizes[1])) - 2, 4, 28);
}

export interface PhysicalPlace {
  id: number;
  /** Column (x − min x) and row (y − min y) of the chip in its panel. */
  col: number;
  row: number;
  /** Panel index (one per distinct z, or per distinct coords[2:] when there are more). */
  panel: number;
  /** Sub-cell of the chip (devices on one chip, ordered by core_on_chip then id). */
  sub: number;
  coords: number[];
  core: number | null;
}

export interface PhysicalLayout {
  /** Chip columns (x) and rows (y) per panel; x0 / y0 are the smallest x / y. */
  cols: number;
  rows: number;
  x0: number;
  y0: number;
  /** Panel labels ("z=0", …) in order. */
  panels: string[];
  /** Sub-cells per chip (the most devices found on one chip). */
  perChip: number;
  places: PhysicalPlace[];
}

/** Whether the devices have physical coords (so that the physical view is offered). */
export function hasCoords(devices: DeviceTable): boolean {
  const coords = devices.coords;
  return !!coords && coords.length === devices.ids.length && coords.some((c) => c && c.length > 0);
}

/** Where each device goes in the physical view, or null when the devices have no coords. */
export function physicalLayout(devices: DeviceTable): PhysicalLayout | null {
  const coords = devices.coords;
  if (!coords || !hasCoords(devices)) return null;
  const cs = coords.map((c) => c ?? []);
  const at = (c: number[], k: number) => c[k] ?? 0;
  const xs = cs.map((c) => at(c, 0));
  const ys = cs.map((c) => at(c, 1));
  const x0 = Math.min(...xs);
  const y0 = Math.min(...ys);
  const cols = Math.max(...xs) - x0 + 1;
  const rows = Math.max(...ys) - y0 + 1;
  // Panels: one per distinct coords[2:] (z, and any further coordinate), in numeric order.
  const rest = cs.map((c) => c.slice(2));
  const restKeys = [...new Map(rest.map((r) => [r.join(","), r])).values()].sort((a, b) => {
    for (let i = Math.max(a.length, b.length) - 1; i >= 0; i--) {
      const d = (a[i] ?? 0) - (b[i] ?? 0);
      if (d) return d;
    }
    return 0;
  });
  const names = ["z", "w", "v", "u"];
  const panels = restKeys.map((r) =>
    r.length ? r.map((v, i) => `${names[i] ?? `c${i + 2}`}=${v}`).join(", ") : "",
  );
  const panelOf = new Map(restKeys.map((r, i) => [r.join(","), i]));
  // Devices on one chip (same coords), ordered by core then id.
  const chips = new Map<string, number[]>();
  cs.forEach((c, i) => {
    const k = c.join(",");
    let l = chips.get(k);
    if (!l) chips.set(k, (l = []));
    l.push(i);
  });
  const core = devices.core_on_chip;
  const places: PhysicalPlace[] = new Array(devices.ids.length);
  let perChip = 1;
  for (const members of chips.values()) {
    members.sort((a, b) => (core ? core[a] - core[b] : 0) || devices.ids[a] - devices.ids[b]);
    perChip = Math.max(perChip, members.length);
    members.forEach((i, sub) => {
      places[i] = {
        id: devices.ids[i],
        col: xs[i] - x0,
        row: ys[i] - y0,
        panel: panelOf.get(rest[i].join(","))!,
        sub,
        coords: cs[i],
        core: core ? core[i] : null,
      };
    });
  }
  return { cols, rows, x0, y0, panels, perChip, places };
}

/** Sub-cell grid of a chip: [columns, rows] for `n` devices on it (1×1, 2×1, 2×2, …); with
 *  `stacked`, 2 or 3 devices go one above the other instead. */
export function chipSplit(n: number, stacked = false): [number, number] {
  if (n <= 1) return [1, 1];
  if (n <= 3) return stacked ? [1, n] : [n, 1];
  const c = Math.ceil(Math.sqrt(n));
  return [c, Math.ceil(n / c)];
}

/** The tallest the physical view should get before it trades chip size for more panels per row. */
const PHYS_MAX_HEIGHT = 520;

/** Panels per row and chip size (px) for a physical layout in `width` px: the biggest chips that
 *  keep the view under PHYS_MAX_HEIGHT (else the most panels per row). */
export function physicalSizing(p: PhysicalLayout, width: number): { perRow: number; chip: number } {
  const w = Math.max(140, width - 8);
  const tick = 18; // the y tick column of each panel
  const panelGap = 12;
  const cap = p.perChip > 1 ? 56 : 44;
  const nPanels = Math.max(1, p.panels.length);
  type Fit = { perRow: number; chip: number; height: number };
  let best: Fit | null = null;
  let flattest: Fit | null = null;
  for (let perRow = 1; perRow <= Math.min(nPanels, 8); perRow++) {
    const chip = clamp(Math.floor((w - perRow * (tick + panelGap)) / (perRow * p.cols)) - 3, 4, cap);
    const across = perRow * (p.cols * (chip + 3) + tick + panelGap);
    if (perRow > 1 && across > w) break; // the panels no longer fit side by side
    const height = Math.ceil(nPanels / perRow) * (p.rows * (chip + 3) + 30);
    const c = { perRow, chip, height };
    if (height <= PHYS_MAX_HEIGHT && (!best || chip > best.chip || (chip === best.chip && height < best.height)))
      best = c;
    if (!flattest || height < flattest.height) flattest = c;
  }
  const pick = best ?? flattest!;
  return { perRow: pick.perRow, chip: pick.chip };
}

/** Sub-cell size and arrangement in a chip of `chip` px (chips under 12 px have no frame): side
 *  by side, unless only stacking leaves room for the longest id. */
export function chipCells(chip: number, perChip: number, maxId: number): { cols: number; w: number; h: number } {
  const inner = chip >= 12 ? chip - 4 : chip; // 1 px border + 1 px padding each side
  const gap = chip >= 12 ? 1 : 0;
  const size = (stacked: boolean) => {
    const [sc, sr] = chipSplit(perChip, stacked);
    return {
      cols: sc,
      w: Math.max(1, Math.floor((inner - (sc - 1) * gap) / sc)),
      h: Math.max(1, Math.floor((inner - (sr - 1) * gap) / sr)),
    };
  };
  const fits = (c: { w: number; h: number }) => c.h >= 12 && textWidth(String(maxId), 10) <= c.w - 2;
  const side = size(false);
  if (fits(side) || perChip === 1 || perChip > 3) return side;
  const stacked = size(true);
  return fits(stacked) ? stacked : side;
}

// ---- the pane ----------------------------------------------------------------------------------

/** One device cell as HTML (cells are parsed a grid at a time: 4096 of them in one go). */
export function cellHtml(
id: number,
color: string,
w: number,
h: number,
focusable: boolean,
label = true,
extra = "",
): string {
  let style = `background:${color};width:${w}px;height:${h}px`;
  let text = "";
  const s = Math.min(w, h);
  const fs = s >= 22 && textWidth(String(id), 12) <= w - 4 ? 12 : 10;
  if (label && h >= 12 && w >= 8 && textWidth(String(id), fs) <= w - 2) {
    text = String(id);
    style += `;color:${textColorOn(color)};font-size:${fs}px`;
  }
  const a11y = focusable ? ` tabindex="0" role="button" aria-label="device ${id}"` : "";
  // The tooltip (id, coords, block) is written when the pointer enters the cell.
  return `<div class="sw-dev" data-device="${id}"${extra} style="${style}"${a11y}>${text}</div>`;
}
