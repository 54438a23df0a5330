// Times shown relative ("3 min ago") and absolute (local time; the full instant in the tooltip).
import { useEffect, useState } from 'react';

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

export function relativeTime(at: Date, now = Date.now()): string {
  const diff = (at.getTime() - now) / 1000;
  for (const [unit, secs] of UNITS) {
    if (Math.abs(diff) >= secs || unit === 'second') return rtf.format(Math.round(diff / secs), unit);
  }
  return '';
}

export function absoluteTime(at: Date): string {
  const sameDay = new Date().toDateString() === at.toDateString();
  return at.toLocaleString(undefined, {
    ...(sameDay ? {} : { year: 'numeric', month: 'short', day: 'numeric' }),
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** Re-renders every 30 s so "x ago" stays true. */
function useTick(ms = 30_000): void {
  const [, set] = useState(0);
  useEffect(() => {
    const t = setInterval(() => set((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
}

export function Time({ at, empty = '—' }: { at: string | null | undefined; empty?: string }) {
  useTick();
  if (!at) return <span className="muted">{empty}</span>;
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return <span>{at}</span>;
  return (
    <span className="time">
      <time dateTime={at} title={d.toISOString()}>
        {relativeTime(d)}
      </time>{' '}
      <span className="time-abs">{absoluteTime(d)}</span>
    </span>
  );
}

/** A duration in seconds as "1 h 2 min", "3 min 4 s" or "5.2 s". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return `${h} h ${m} min`;
  if (m) return `${m} min ${r} s`;
  return `${r} s`;
}

export function durationBetween(start: string | null, end: string | null): number | null {
  if (!start) return null;
  const e = end ? new Date(end).getTime() : Date.now();
  return (e - new Date(start).getTime()) / 1000;
}
