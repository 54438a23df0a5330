// A task's trend: ▲ slower / ▼ faster with the change in %, coloured, and said in words for screen readers.

/** Changes smaller than this are noise: shown as steady. */
const STEADY_PCT = 5;

export function Trend({ pct }: { pct: number | null }) {
  if (pct === null)
    return (
      <span className="muted" title="fewer than 2 runs">
        —
      </span>
    );
  const rounded = Math.abs(pct) >= 10 ? Math.round(pct) : Math.round(pct * 10) / 10;
  const kind = Math.abs(pct) < STEADY_PCT ? 'steady' : pct > 0 ? 'slower' : 'faster';
  const arrow = kind === 'steady' ? '≈' : kind === 'slower' ? '▲' : '▼';
  const sign = rounded > 0 ? '+' : rounded < 0 ? '−' : '±';
  return (
    <span
      className={`trend trend-${kind}`}
      data-trend={kind}
      title={`median ${kind} than in the older half of the window`}
    >
      <span aria-hidden="true">{arrow}</span> {sign}
      {Math.abs(rounded)}%<span className="visually-hidden"> ({kind})</span>
    </span>
  );
}
