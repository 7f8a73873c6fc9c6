// Small text helpers: number / byte formatting, text-width estimates.

/** Estimated width of `s` in px in the monospace code font at `fontPx` (0.6 em per char, + margin). */
export function textWidth(s: string, fontPx = 12): number {
  return Math.ceil(s.length * fontPx * 0.62);
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let u = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${n} B`;
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${trimZeros(v.toFixed(digits))} ${units[u]}`;
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
