// A task's duration per run as an inline SVG line chart: runs in order along x (oldest left), seconds up y, a
// tooltip (<title>) per point. The table under the chart carries the same numbers for screen readers.
import type { TaskPoint } from '@baton/contracts';
import { absoluteTime } from '../../ui/Time';
import { seconds } from './format';

const W = 720;
const H = 240;
const PAD = { left: 64, right: 16, top: 14, bottom: 40 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;

/** A round step for about `count` ticks up to `max` (1, 2 or 5 times a power of ten). */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = 0; v < max + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1]! < max) ticks.push(ticks[ticks.length - 1]! + step);
  return ticks;
}

/** A tick's label: whole milliseconds under a second's range, else seconds with as few decimals as the step needs. */
export function tickLabel(value: number, top: number): string {
  if (top < 1) return `${Math.round(value * 1000)} ms`;
  if (top >= 120) return seconds(value);
  return `${Number(value.toFixed(2))} s`;
}

export function DurationChart({ points, label }: { points: TaskPoint[]; label: string }) {
  if (points.length === 0) return <p className="muted">No runs to chart.</p>;
  const ticks = niceTicks(Math.max(...points.map((p) => p.duration_s)));
  const top = ticks[ticks.length - 1]!;
  const x = (i: number) => PAD.left + (points.length === 1 ? PLOT_W / 2 : (i * PLOT_W) / (points.length - 1));
  const y = (s: number) => PAD.top + PLOT_H - (s / top) * PLOT_H;
  const line = points.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.duration_s).toFixed(1)}`).join(' ');
  const first = points[0]!;
  const last = points[points.length - 1]!;
  // Dates under the first, middle and last run (the middle only when there is room for it).
  const dated = [...new Set([0, points.length > 4 ? Math.floor((points.length - 1) / 2) : 0, points.length - 1])];
  const summary =
    `${label}: duration over ${points.length} run${points.length === 1 ? '' : 's'}, oldest first, ` +
    `from ${seconds(first.duration_s)} to ${seconds(last.duration_s)}, ` +
    `longest ${seconds(Math.max(...points.map((p) => p.duration_s)))}.`;
  return (
    <figure className="chart">
      <svg
        role="img"
        aria-label={summary}
        viewBox={`0 0 ${W} ${H}`}
        className="chart-svg"
        data-testid="duration-chart"
        data-points={points.length}
      >
        <g className="chart-grid">
          {ticks.map((t) => (
            <g key={t}>
              <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
              <text x={PAD.left - 8} y={y(t)} dy="0.32em" textAnchor="end">
                {tickLabel(t, top)}
              </text>
            </g>
          ))}
        </g>
        <g className="chart-axis">
          <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={PAD.top + PLOT_H} />
          <line x1={PAD.left} x2={W - PAD.right} y1={PAD.top + PLOT_H} y2={PAD.top + PLOT_H} />
          {dated.map((i) => (
            <text
              key={i}
              x={x(i)}
              y={H - PAD.bottom + 18}
              textAnchor={
                points.length === 1 ? 'middle' : i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle'
              }
            >
              {absoluteTime(new Date(points[i]!.finished_at))}
            </text>
          ))}
          <text x={PAD.left + PLOT_W / 2} y={H - 4} textAnchor="middle" className="chart-axis-title">
            runs, oldest to newest
          </text>
        </g>
        <path d={line} className="chart-line" />
        {points.map((p, i) => (
          <circle key={p.run_id} cx={x(i)} cy={y(p.duration_s)} r={4} className="chart-point" data-point={p.run_id}>
            <title>{`${seconds(p.duration_s)} · run ${p.run_id} · ${absoluteTime(new Date(p.finished_at))}`}</title>
          </circle>
        ))}
      </svg>
    </figure>
  );
}
