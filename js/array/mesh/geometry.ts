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

/** The tallest (px) the device cells of the mesh pane get: about the grid's own box, so that a
 *  long mesh axis (256×1, 4096×1) folds instead of making the widget thousands of px tall. */
export const MESH_MAX_HEIGHT = 440;

/** How a rows × cols mesh is drawn in the room it has: cells of `cell` px with `gap` between;
 *  the rows folded into `strips` side by side (`perStrip` rows each), or the columns folded into
 *  `bands` one above the other (`perBand` columns each). 1 strip and 1 band: not folded. */
export interface MeshFit {
  cell: number;
  gap: number;
  strips: number;
  perStrip: number;
  bands: number;
  perBand: number;
  /** Space (px) between strips or between bands. */
  foldGap: number;
}

/** The caption line (px) above a band of cells `h` px tall: none over bands thinner than it. */
export function bandCaption(h: number): number {
  return h >= 11 ? 11 : 0;
}

/** The biggest cells (3 to 40 px) for a rows × cols mesh in `width` × `maxHeight` px: unfolded
 *  when it fits, else the long axis folded. Past the smallest cells it folds to fit the width
 *  and lets the height grow. */
export function meshFit(rows: number, cols: number, width: number, maxHeight = MESH_MAX_HEIGHT): MeshFit {
  const w = Math.max(120, width - 36);
  const fit = (cell: number, strips: number, bands: number): MeshFit => {
    const gap = cell >= 10 ? 2 : 1;
    return {
      cell,
      gap,
      strips,
      perStrip: Math.ceil(rows / strips),
      bands,
      perBand: Math.ceil(cols / bands),
      foldGap: clamp(cell, 3, 10),
    };
  };
  for (let cell = 40; cell >= 3; cell--) {
    const gap = cell >= 10 ? 2 : 1;
    const step = cell + gap;
    const fg = clamp(cell, 3, 10);
    if (cols * step <= w && rows * step <= maxHeight) return fit(cell, 1, 1);
    const perStrip = Math.floor(maxHeight / step);
    if (cols * step <= w && perStrip >= 1) {
      const strips = Math.ceil(rows / perStrip);
      if (strips * (cols * step + fg) - fg <= w) return fit(cell, strips, 1);
    }
    const perBand = Math.floor(w / step);
    if (rows * step <= maxHeight && perBand >= 1) {
      const bands = Math.ceil(cols / perBand);
      if (bands * (rows * step + bandCaption(rows * step) + fg) - fg <= maxHeight) return fit(cell, 1, bands);
    }
  }
  // Too many devices for the box even at 3 px: fold to the width, let the height grow.
  const step = 4;
  if (cols * step <= w) return fit(3, Math.max(1, Math.floor((w + 3) / (cols * step + 3))), 1);
  return fit(3, 1, Math.ceil(cols / Math.floor(w / step)));
}

/** Cell size (px) for a 1-axis mesh of `n` devices wrapped in rows of `width` px, at most
 *  `maxHeight` px tall (down to 3 px cells). */
export function listCellSize(n: number, width: number, maxHeight = MESH_MAX_HEIGHT): number {
  const w = Math.max(120, width - 36);
  let cell = meshCellSize([n], width);
  for (; cell > 3; cell--) {
    const step = cell + (cell >= 10 ? 2 : 1);
    const perRow = Math.max(1, Math.min(n, Math.floor(w / step)));
    if (Math.ceil(n / perRow) * step <= maxHeight) break;
  }
  return cell;
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
  /** GPUs (a gpu_mesh plan): x is the GPU on its host, y the host, panels the slices. */
  gpu: boolean;
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
  const gpu = devices.platform === "gpu";
  // (a plan across TPU slices: the slice as a 4th coordinate; a GPU plan's 3rd is its slice)
  const names = gpu ? ["slice", "v", "u"] : ["z", "slice", "v", "u"];
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
  return { cols, rows, x0, y0, panels, perChip, places, gpu };
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

/** The font size (px) of condensed cell labels. */
const CONDENSED_PX = 9;

/** The horizontal scale (0.6 to 1) at which `text` in a 9 px face fits a `w`×`h` px cell, or
 *  null when it does not fit even at 0.6 (or the cell is under 10 px tall). */
export function condensedScale(text: string, w: number, h: number): number | null {
  if (h < 10 || w < 8) return null;
  const need = textWidth(text, CONDENSED_PX);
  const k = Math.min(1, (w - 1) / need);
  return k >= 0.6 ? Math.floor(k * 100) / 100 : null;
}

/** A device cell's label: its font size (px) and, in narrow cells, the horizontal scale of the
 *  condensed 9 px face (null: not condensed). */
export interface CellLabel {
  /** 12, 10 or CONDENSED_PX: a class of each (sw-f12, sw-f10, sw-f9 in shared/styles.ts). */
  fs: number;
  squeeze: number | null;
}

/** How a device id of `digits` digits is labelled in a w×h px cell; null when no label fits.
 *  (A label's width depends on its length only: a grid of cells works it out once a length.) */
export function cellLabel(digits: number, w: number, h: number): CellLabel | null {
  const t = "0".repeat(digits);
  const fs = Math.min(w, h) >= 22 && textWidth(t, 12) <= w - 4 ? 12 : 10;
  if (h >= 12 && w >= 8 && textWidth(t, fs) <= w - 2) return { fs, squeeze: null };
  // Narrow cells (16×16 devices in a 300 px pane): the id in a condensed 9 px face, as the
  // grid's canvas labels 3-digit ids in 14 px blocks, rather than no label past device 9.
  const squeeze = condensedScale(t, w, h);
  return squeeze === null ? null : { fs: CONDENSED_PX, squeeze };
}

/** One device cell as HTML (cells are parsed a grid at a time: 4096 of them in one go). `sized`:
 *  the cell sets its own width and height (false: a grid's tracks size it, see meshGridStyle). */
export function cellHtml(
  id: number,
  color: string,
  w: number,
  h: number,
  focusable: boolean,
  label = true,
  extra = "",
  sized = true,
): string {
  const lab = label ? cellLabel(String(id).length, w, h) : null;
  const size = sized ? `;width:${w}px;height:${h}px` : "";
  return cellMarkup(id, color, lab, focusable ? CELL_A11Y : "", extra + ` style="background:${color}${size}`);
}

export const CELL_A11Y = ' tabindex="0" role="button"';

/** A cell's markup from its parts: `lab` its label (cellLabel), `a11y` CELL_A11Y or "", `head`
 *  its attributes up to the open style value (which this closes; by default its background,
 *  ` style="background:${color}`). */
export function cellMarkup(
  id: number,
  color: string,
  lab: CellLabel | null,
  a11y: string,
  head: string | null = null,
): string {
  // The tooltip (id, coords, block) is written when the pointer enters the cell.
  const aria = a11y ? `${a11y} aria-label="device ${id}"` : "";
  const style = head ?? ' style="background:' + color;
  if (!lab) return `<div class="sw-dev" data-device="${id}"${style}"${aria}></div>`;
  // The ink and the font size are classes (a few rules), not declarations parsed on every cell;
  // the text around the id is the label's own, made once (a grid's cells are written cold, where
  // each piece joined on is a new string).
  const t = labelTags(lab);
  return (textColorOn(color) === "#ffffff" ? t[0] : t[1]) + id + '"' + style + '"' + aria + ">" + t[2] + id + t[3];
}

const TAGS = new WeakMap<CellLabel, [string, string, string, string]>();

/** A label's text around a cell's id: the opening tag on light ink and on dark ink, and what goes
 *  before and after the id inside it (a condensed label's span). */
function labelTags(lab: CellLabel): [string, string, string, string] {
  let t = TAGS.get(lab);
  if (t === undefined) {
    const sq = lab.squeeze !== null;
    t = [
      `<div class="sw-dev sw-ink-light sw-f${lab.fs}" data-device="`,
      `<div class="sw-dev sw-ink-dark sw-f${lab.fs}" data-device="`,
      sq ? `<span class="sw-dev-sq" style="transform:scaleX(${lab.squeeze})">` : "",
      sq ? "</span></div>" : "</div>",
    ];
    TAGS.set(lab, t);
  }
  return t;
}

/** The style of a grid of `cols` columns of s×s px cells, `gap` px apart: its tracks size the
 *  cells (cellHtml with sized = false). */
export function meshGridStyle(cols: number, s: number, gap: number): string {
  return `grid-template-columns:repeat(${cols}, ${s}px);grid-auto-rows:${s}px;gap:${gap}px`;
}
