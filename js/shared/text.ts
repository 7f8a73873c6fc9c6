// Small text helpers: number / byte formatting, text-width estimates.

/** Estimated width of `s` in px in the monospace code font at `fontPx` (0.6 em per char, + margin). */
export function textWidth(s: string, fontPx = 12): number {
  return Math.ceil(s.length * fontPx * 0.62);
}

/** `n` in units of `base`: [the digits, or null below one unit, and the unit's index]. The one
 *  rounding rule of every scaled number shown: 3 significant digits (at most 2 decimals), no
 *  trailing zeros. */
function scaled(n: number, base: number, units: number): [string | null, number] {
  let u = 0;
  let v = n;
  while (Math.abs(v) >= base && u < units - 1) {
    v /= base;
    u++;
  }
  if (u === 0) return [null, 0];
  const a = Math.abs(v); // 3 significant digits whatever the sign, as Python's fmt_bytes
  return [trimZeros(v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2)), u];
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
const SI_PREFIXES = ["", "k", "M", "G", "T", "P"];

/** Bytes in binary units: "512 B", "1.5 KiB", "4 MiB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const [digits, u] = scaled(n, 1024, BYTE_UNITS.length);
  return digits === null ? `${n} B` : `${digits} ${BYTE_UNITS[u]}`;
}

/** Counts in engineering units: "950", "1.2 k", "3.4 M"; with a unit: "352 FLOP", "1.05 MFLOP". */
export function formatCount(n: number, unit = ""): string {
  if (!Number.isFinite(n)) return String(n);
  const [digits, u] = scaled(n, 1000, SI_PREFIXES.length);
  const s = digits ?? String(Math.round(n));
  const tail = `${SI_PREFIXES[u]}${unit}`;
  return tail ? `${s} ${tail}` : s;
}

/** A duration: "0.4 ms", "12 ms", "1.5 s", "12 s". */
export function formatMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}

function trimZeros(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** A float for tables: up to 5 significant digits, exponent form for large / tiny values. */
export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return "nan";
  if (v === Infinity) return "inf";
  if (v === -Infinity) return "-inf";
  if (v === 0) return "0";
  if (Number.isInteger(v) && Math.abs(v) < 1e7) return String(v);
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(3).replace(/\.?0+e/, "e");
  return trimZeros(v.toPrecision(5));
}

export function formatComplex(re: number, im: number): string {
  const sign = im < 0 || Object.is(im, -0) ? "-" : "+";
  return `${formatNumber(re)}${sign}${formatNumber(Math.abs(im))}j`;
}

/** "0:2048" */
export function formatRange(r: [number, number]): string {
  return `${r[0]}:${r[1]}`;
}

/** "[0:2048)" */
export function formatHalfOpen(r: [number, number]): string {
  return `[${r[0]}:${r[1]})`;
}

export function product(xs: number[]): number {
  return xs.reduce((a, b) => a * b, 1);
}

export function plural(n: number, word: string, pluralWord = word + "s"): string {
  return `${n} ${n === 1 ? word : pluralWord}`;
}

/** Seconds in the unit that reads best, 3 significant digits (Python's cost.estimate.fmt_seconds):
 *  "0 s", "349 ps", "38.1 ns", "12.3 µs", "4.56 ms", "1.2 s". */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return String(s);
  if (s === 0) return "0 s";
  const units: [string, number][] = [["s", 1], ["ms", 1e-3], ["µs", 1e-6], ["ns", 1e-9]];
  for (const [unit, f] of units) if (s >= f) return `${Number((s / f).toPrecision(3))} ${unit}`;
  // Below a nanosecond (a tiny compute part), ps: "0.349 ps", not "0.000349 ns".
  return `${Number((s / 1e-12).toPrecision(3))} ps`;
}
