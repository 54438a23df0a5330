// Numbers as the observation pages show them.

/** Seconds of a task or run: "120 ms", "3.25 s", "12.4 s", then minutes. */
export function seconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 10) return `${s.toFixed(2)} s`;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  const r = Math.round(s % 60);
  return m >= 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m} min ${r} s`;
}

/** A 0–1 rate as a percentage: "0%", "33%", "0.5%". */
export function percent(rate: number): string {
  const p = rate * 100;
  if (p === 0 || p >= 10 || Number.isInteger(p)) return `${Math.round(p)}%`;
  return `${p.toFixed(1)}%`;
}

/** A commit as people read it. */
export const shortCommit = (commit: string | null) => (commit ? commit.slice(0, 8) : null);
