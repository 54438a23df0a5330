/** The q-quantile (0–1) of values, linearly interpolated between the closest ranks (0 for none). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export const mean = (values: readonly number[]): number =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The change of the median from the older half of `oldestFirst` to its newer half, in % (one decimal); null under two
 * values or when the older median is 0. With an odd count the middle value belongs to neither half.
 */
export function trendPct(oldestFirst: readonly number[]): number | null {
  const half = Math.floor(oldestFirst.length / 2);
  if (half === 0) return null;
  const older = quantile(oldestFirst.slice(0, half), 0.5);
  const newer = quantile(oldestFirst.slice(oldestFirst.length - half), 0.5);
  if (older === 0) return null;
  return Math.round(((newer - older) / older) * 1000) / 10;
}

/** Milliseconds as seconds with millisecond precision. */
export const seconds = (ms: number): number => Math.round(ms) / 1000;
