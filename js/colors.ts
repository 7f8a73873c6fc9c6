// Device colours and the heatmap ramp. Pure functions, no DOM.

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

const PHI1 = 0.6180339887498949; // golden ratio conjugate
const R2A = 0.7548776662466927; // plastic-number sequence (second coordinate of R2)

function frac(x: number): number {
  return x - Math.floor(x);
}

/** HSL (h in [0,360), s,l in [0,100]) to "#rrggbb". */
export function hslToHex(h: number, s: number, l: number): string {
  const [r, g, b] = hslToRgb(h, s, l);
  return rgbToHex(r, g, b);
}

export function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  s /= 100;
  l /= 100;
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

export function rgbToHex(r: number, g: number, b: number): string {
  const h = (v: number) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0");
  return `#${h(r)}${h(g)}${h(b)}`;
}

export function hexToRgb(hex: string): [number, number, number] {
  const v = parseInt(hex.slice(1, 7), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

const LIGHTNESS_BANDS = [56, 40, 70, 48, 64];
const SATURATION_BANDS = [70, 55, 80];

/**
 * The colour of a device. Depends only on the device id and the number of devices in the view
 * (which is fixed for an array), so a device keeps its colour across views and re-shards.
 * ≤ 16 devices: a qualitative colour-blind-safe palette. More: hue from the golden-ratio sequence
 * (neighbouring ids get far-apart hues), lightness/saturation in bands from a second
 * low-discrepancy sequence, so that ids with similar hues still differ in lightness.
 */
export function deviceColor(id: number, nDevices: number): string {
  if (nDevices <= PALETTE16.length && id >= 0 && id < PALETTE16.length) return PALETTE16[id];
  const i = Math.abs(Math.trunc(id));
  const hue = frac(0.07 + i * PHI1) * 360;
  const band = Math.floor(frac(0.5 + i * R2A) * LIGHTNESS_BANDS.length);
  const sat = SATURATION_BANDS[i % SATURATION_BANDS.length];
  return hslToHex(hue, sat, LIGHTNESS_BANDS[band]);
}

/** Relative luminance (sRGB, 0..1). */
export function luminance(hex: string): number {
  const [r, g, b] = hexToRgb(hex).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Black or white text, whichever contrasts more with the background. */
export function textColorOn(bg: string): string {
  return luminance(bg) > 0.26 ? "#111111" : "#ffffff";
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
/** 256-entry RGBA lookup table for uint8 thumbnail values. */
export function rampLUT(): Uint8ClampedArray {
  if (LUT) return LUT;
  LUT = new Uint8ClampedArray(256 * 4);
  for (let v = 0; v < 256; v++) {
    const [r, g, b] = ramp(v / 255);
    LUT.set([r, g, b, 255], v * 4);
  }
  return LUT;
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
