// Device colours and the heatmap ramp. Pure functions, no DOM.
import { BAND_COLORS } from "./band_colors";

/** Okabe–Ito (black replaced by indigo) followed by Paul Tol's muted scheme: 16 colour-blind-safe,
 *  mutually distinct colours. Device id i (when there are at most 16 devices) gets PALETTE16[i]. */
export const PALETTE16: readonly string[] = [
  "#0072B2", // blue
  "#E69F00", // orange
  "#009E73", // bluish green
  "#CC79A7", // reddish purple
  "#56B4E9", // sky blue
  "#D55E00", // vermillion
  "#F0E442", // yellow
  "#332288", // indigo (Tol)
  "#CC6677", // rose
  "#117733", // green
  "#88CCEE", // cyan
  "#DDCC77", // sand
  "#AA4499", // purple
  "#44AA99", // teal
  "#999933", // olive
  "#882255", // wine
];

function rgbToHex(r: number, g: number, b: number): string {
  const h = (v: number) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0");
  return `#${h(r)}${h(g)}${h(b)}`;
}

function hexToRgb(hex: string): [number, number, number] {
  const v = parseInt(hex.slice(1, 7), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

// ---- more than 16 devices: hue bands along the id, lightness steps within a band ----------------
//
// Beyond 16 devices no set of colours stays both distinct and nameable, so the colour encodes the
// id in two readable parts instead of looking random: the HUE says which contiguous band of ids a
// device is in (at most 12 bands, in rainbow order, band size a power of two so that bands line up
// with mesh rows), the LIGHTNESS says the id modulo the number of steps (dark -> light). Device 1234
// of 4096 is in band 2 (ids 1024-1535, yellow-green) at step 1234 mod 8 = 2: a legend chart of
// bands x steps lists every colour, and the find box confirms. Neighbouring ids share a hue and
// differ by one lightness step; neighbouring bands differ in hue. Colours are built in OKLCH, so
// equal steps look equal, and clipped into sRGB by lowering chroma.

/** The most hue bands (so band hues are at least 360/12 = 30 degrees apart). */
const MAX_BANDS = 12;
/** The most lightness steps in a band. */
const MAX_STEPS = 8;
const L_DARK = 0.42;
const L_LIGHT = 0.87;
const CHROMA = 0.15;
const HUE0 = 25; // OKLCH hue of band 0 (red)

export interface ColorScheme {
  /** Number of devices the colours are for (the kernel's device count). */
  readonly n: number;
  /** "palette": n <= 16, a fixed colour per id. "bands": hue bands x lightness steps. */
  readonly kind: "palette" | "bands";
  /** Ids per hue band (bands only; 1 for the palette). */
  readonly bandSize: number;
  /** Lightness steps within a band: the colour repeats every `steps` ids of a band. */
  readonly steps: number;
  /** Number of hue bands. */
  readonly bands: number;
  /** True when the scheme colours by rank in `ids` (ids are not 0..n-1, e.g. several processes). */
  readonly byRank: boolean;
  color(id: number): string;
  /** Band and step of a device (what the legend reads), or null for the palette. */
  place(id: number): { band: number; step: number } | null;
}

export interface LegendRow {
  /** The ids of the band, e.g. "0–31". */
  label: string;
  /** One colour per lightness step. */
  colors: string[];
}

export interface ColorLegend {
  /** One line: how to read a colour. */
  summary: string;
  /** Column headers of the chart (the step: "0" … "7"). */
  stepTitle: string;
  rows: LegendRow[];
}

function nextPow2(x: number): number {
  let p = 1;
  while (p < x) p *= 2;
  return p;
}

/** Band size (a power of two, >= 4) such that `n` ids fill at most MAX_BANDS bands. */
function bandSizeFor(n: number): number {
  return Math.max(4, nextPow2(Math.ceil(n / MAX_BANDS)));
}

function oklabToLinear(L: number, a: number, b: number): [number, number, number] {
  const l = (L + 0.3963377774 * a + 0.2158037573 * b) ** 3;
  const m = (L - 0.1055613458 * a - 0.0638541728 * b) ** 3;
  const s = (L - 0.0894841775 * a - 1.291485548 * b) ** 3;
  return [
    4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
    -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
    -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s,
  ];
}

function gammaEncode(c: number): number {
  c = Math.max(0, Math.min(1, c));
  return c <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055;
}

/** OKLCH (L 0..1, C, h degrees) to "#rrggbb", lowering the chroma until it fits in sRGB.
 *  (Runs for every colour of a scheme on a view's first render: no allocation in the search.) */
export function oklchToHex(L: number, C: number, h: number): string {
  const rad = (h * Math.PI) / 180;
  const ca = Math.cos(rad);
  const sa = Math.sin(rad);
  const lo_ = -1e-4;
  const hi_ = 1 + 1e-4;
  const inGamut = (c: number): boolean => {
    const a = c * ca;
    const b = c * sa;
    const l = (L + 0.3963377774 * a + 0.2158037573 * b) ** 3;
    const m = (L - 0.1055613458 * a - 0.0638541728 * b) ** 3;
    const s = (L - 0.0894841775 * a - 1.291485548 * b) ** 3;
    const r = 4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s;
    if (r < lo_ || r > hi_) return false;
    const g = -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s;
    if (g < lo_ || g > hi_) return false;
    const bl = -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s;
    return bl >= lo_ && bl <= hi_;
  };
  let c = C;
  if (!inGamut(c)) {
    // Bisection to 2^-16 of C: far below one step of an 8-bit channel.
    let lo = 0;
    let hi = C;
    for (let i = 0; i < 16; i++) {
      const mid = (lo + hi) / 2;
      if (inGamut(mid)) lo = mid;
      else hi = mid;
    }
    c = lo;
  }
  const [r, g, b] = oklabToLinear(L, c * ca, c * sa);
  return rgbToHex(gammaEncode(r) * 255, gammaEncode(g) * 255, gammaEncode(b) * 255);
}

/** sRGB hex to OKLab [L, a, b]. */
export function hexToOklab(hex: string): [number, number, number] {
  const [r, g, b] = hexToRgb(hex).map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  });
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/** Perceptual distance between two colours (Euclidean in OKLab; ~0.02 is just noticeable). */
export function colorDistance(a: string, b: string): number {
  const [x, y] = [hexToOklab(a), hexToOklab(b)];
  return Math.hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]);
}

/** The colour of band `band` (of `bands`) at lightness step `step` (of `steps`): from the table of
 *  every colour a scheme can make (band_colors.ts), else computed. */
export function bandColor(band: number, bands: number, step: number, steps: number): string {
  const row = BAND_COLORS[`${steps}:${bands}`];
  if (row !== undefined && band >= 0 && band < bands && step >= 0 && step < steps && Number.isInteger(band + step)) {
    const at = (band * steps + step) * 6;
    return `#${row.slice(at, at + 6)}`;
  }
  return computeBandColor(band, bands, step, steps);
}

/** bandColor computed: OKLCH with the chroma lowered into sRGB (each colour a gamut search). */
export function computeBandColor(band: number, bands: number, step: number, steps: number): string {
  const hue = HUE0 + (360 * (((band % bands) + bands) % bands)) / Math.max(1, bands);
  const t = steps > 1 ? step / (steps - 1) : 0.5;
  return oklchToHex(L_DARK + (L_LIGHT - L_DARK) * t, CHROMA, hue);
}

/** Whether every id is an integer in 0..n-1 (a loop, not some() and a closure: a view's first
 *  render asks this of every device id, in unoptimised code). */
function denseIds(ids: readonly number[], n: number): boolean {
  for (let k = 0; k < ids.length; k++) {
    const i = ids[k];
    if (!(i >= 0 && i < n && Number.isInteger(i))) return false;
  }
  return true;
}

/**
 * The colour scheme for `n` devices. `ids` (optional): every device id the view knows; when they
 * are not 0..n-1 (several processes on CPU number their devices 0.., 2048.., …), colours follow
 * the rank of the id among them, so the colours stay as distinct as for dense ids.
 */
export function colorScheme(n: number, ids?: readonly number[]): ColorScheme {
  n = Math.max(1, Math.trunc(n) || 1);
  let rank: Map<number, number> | null = null;
  if (ids && !denseIds(ids, n)) {
    const sorted = [...new Set(ids)].sort((a, b) => a - b);
    rank = new Map(sorted.map((id, r) => [id, r]));
    n = Math.max(n, sorted.length);
  }
  const index = (id: number): number => {
    const r = rank?.get(id);
    if (r !== undefined) return r;
    return Math.abs(Math.trunc(id));
  };
  if (n <= PALETTE16.length) {
    return {
      n,
      kind: "palette",
      bandSize: 1,
      steps: 1,
      bands: PALETTE16.length,
      byRank: rank !== null,
      color: (id) => PALETTE16[index(id) % PALETTE16.length],
      place: () => null,
    };
  }
  const bandSize = bandSizeFor(n);
  const steps = Math.min(MAX_STEPS, bandSize);
  const bands = Math.ceil(n / bandSize);
  const cache = new Map<number, string>();
  const byId = new Map<number, string>();
  const place = (id: number) => {
    const i = index(id);
    return { band: Math.floor(i / bandSize) % bands, step: i % steps };
  };
  return {
    n,
    kind: "bands",
    bandSize,
    steps,
    bands,
    byRank: rank !== null,
    place,
    color(id: number): string {
      // By id first (no place object per call: a first render asks once per block and cell).
      let c = byId.get(id);
      if (c !== undefined) return c;
      const p = place(id);
      const k = p.band * steps + p.step;
      c = cache.get(k);
      if (c === undefined) cache.set(k, (c = bandColor(p.band, bands, p.step, steps)));
      if (byId.size < 65536) byId.set(id, c);
      return c;
    },
  };
}

function idRange(lo: number, hi: number): string {
  return lo === hi ? String(lo) : `${lo}–${hi}`;
}

/** What the colours mean, for the view's legend; null when there are at most 16 devices (each
 *  device has its own colour and the mesh pane labels it). `ids`: as for colorScheme. */
export function colorLegend(scheme: ColorScheme, ids?: readonly number[]): ColorLegend | null {
  if (scheme.kind !== "bands") return null;
  const { n, bandSize, steps, bands } = scheme;
  const sorted = scheme.byRank && ids ? [...new Set(ids)].sort((a, b) => a - b) : null;
  const rows: LegendRow[] = [];
  for (let b = 0; b < bands; b++) {
    const lo = b * bandSize;
    const hi = Math.min(n, (b + 1) * bandSize) - 1;
    const label = sorted ? idRange(sorted[lo] ?? lo, sorted[hi] ?? hi) : idRange(lo, hi);
    rows.push({ label, colors: Array.from({ length: steps }, (_, s) => bandColor(b, bands, s, steps)) });
  }
  const what = sorted ? "position" : "id";
  const first = rows[0].label;
  const last = rows[rows.length - 1].label;
  const repeat = bandSize > steps ? `, repeating every ${steps} ids` : "";
  return {
    summary:
      `Colour = device ${what}. Hue: ${bands} bands of ${bandSize} ids (${first}, …, ${last}). ` +
      `Lightness: ${what} mod ${steps}, dark → light${repeat}.`,
    stepTitle: `${what} mod ${steps}`,
    rows,
  };
}

const SCHEMES = new Map<number, ColorScheme>();

/**
 * The colour of a device. Depends only on the device id and the number of devices (fixed for a
 * kernel), so a device keeps its colour across views, re-shards and mesh changes.
 * <= 16 devices: a qualitative colour-blind-safe palette. More: see colorScheme (hue bands along
 * the id, lightness steps within a band).
 */
export function deviceColor(id: number, nDevices: number): string {
  let s = SCHEMES.get(nDevices);
  if (!s) {
    if (SCHEMES.size > 64) SCHEMES.clear();
    SCHEMES.set(nDevices, (s = colorScheme(nDevices)));
  }
  return s.color(id);
}

/** Relative luminance (sRGB, 0..1). */
export function luminance(hex: string): number {
  // Indexed, not destructured: a first render asks for each device's colour once, in unoptimised
  // code, where destructuring walks the array's iterator.
  const rgb = hexToRgb(hex);
  return 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2]);
}

/** An sRGB channel (0-255) as linear light (0-1). */
function linear(v: number): number {
  const c = v / 255;
  return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
}

/** WCAG contrast ratio between two colours (1 .. 21). */
export function contrastRatio(a: string, b: string): number {
  return luminanceRatio(luminance(a), luminance(b));
}

function luminanceRatio(x: number, y: number): number {
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** Black or white text, whichever contrasts more with the background: at least 4.58:1 on any
 *  background (the two ratios cross at luminance 0.179), the WCAG AA level for normal text. */
const textOnCache = new Map<string, string>();

let inkLuminance: [number, number] | null = null;

export function textColorOn(bg: string): string {
  let t = textOnCache.get(bg);
  if (t === undefined) {
    // contrastRatio(bg, black) >= contrastRatio(bg, white), with the background's luminance
    // worked out once rather than four times (a first render asks for 64 colours at once).
    const ink = (inkLuminance ??= [luminance("#000000"), luminance("#ffffff")]);
    const l = luminance(bg);
    t = luminanceRatio(l, ink[0]) >= luminanceRatio(l, ink[1]) ? "#000000" : "#ffffff";
    if (textOnCache.size < 4096) textOnCache.set(bg, t);
  }
  return t;
}

// Viridis, 9 control points, linearly interpolated.
const VIRIDIS: [number, number, number][] = [
  [68, 1, 84],
  [71, 44, 122],
  [59, 81, 139],
  [44, 113, 142],
  [33, 144, 141],
  [39, 173, 129],
  [92, 200, 99],
  [170, 220, 50],
  [253, 231, 37],
];

/** Viridis-like ramp; t in [0,1]. */
export function ramp(t: number): [number, number, number] {
  if (!Number.isFinite(t)) t = 0;
  t = Math.max(0, Math.min(1, t));
  const x = t * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  const a = VIRIDIS[i];
  const b = VIRIDIS[i + 1];
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}

let LUT: Uint8ClampedArray | null = null;
/** 256-entry RGBA lookup table for uint8 thumbnail values: ramp(v / 255) for each v, worked out
 *  in place (made as a page first draws its thumbnails, in unoptimised code, where an array a
 *  value was 80 KB of garbage). */
export function rampLUT(): Uint8ClampedArray {
  if (LUT) return LUT;
  const lut = new Uint8ClampedArray(256 * 4);
  const last = VIRIDIS.length - 1;
  for (let v = 0; v < 256; v++) {
    const x = (v / 255) * last;
    const i = Math.min(last - 1, Math.floor(x));
    const f = x - i;
    const a = VIRIDIS[i];
    const b = VIRIDIS[i + 1];
    lut[v * 4] = Math.round(a[0] + (b[0] - a[0]) * f);
    lut[v * 4 + 1] = Math.round(a[1] + (b[1] - a[1]) * f);
    lut[v * 4 + 2] = Math.round(a[2] + (b[2] - a[2]) * f);
    lut[v * 4 + 3] = 255;
  }
  return (LUT = lut);
}

/** CSS background for a block held by `colors` (one colour: solid; several: diagonal stripes). */
export function blockBackground(colors: string[], stripePx = 6): string {
  if (colors.length === 0) return "transparent";
  if (colors.length === 1) return colors[0];
  const stops = colors
    .map((c, k) => `${c} ${k * stripePx}px ${(k + 1) * stripePx}px`)
    .join(", ");
  return `repeating-linear-gradient(135deg, ${stops})`;
}

/** The holders' colours to show as stripes: at most `max` (the rest is a "×N" badge). */
export function stripeColors(ids: number[], nDevices: number, max = 8): string[] {
  return ids.slice(0, max).map((id) => deviceColor(id, nDevices));
}
