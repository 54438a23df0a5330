// One way of showing a run's state everywhere: an icon, a word and a colour (never colour alone).
import type { RunConclusion, RunStatus } from '@baton/contracts';

export type Tone = 'ok' | 'bad' | 'warn' | 'muted' | 'live' | 'held';
export type Icon =
  'check' | 'cross' | 'bang' | 'slash' | 'minus' | 'dot' | 'ring' | 'pause' | 'dots' | 'triangle' | 'dash';

const LOOK: Record<string, { icon: Icon; label: string; tone: Tone }> = {
  succeeded: { icon: 'check', label: 'Succeeded', tone: 'ok' },
  failed: { icon: 'cross', label: 'Failed', tone: 'bad' },
  error: { icon: 'bang', label: 'Error', tone: 'bad' },
  canceled: { icon: 'slash', label: 'Canceled', tone: 'muted' },
  rejected: { icon: 'minus', label: 'Rejected', tone: 'warn' },
  running: { icon: 'dot', label: 'Running', tone: 'live' },
  pending: { icon: 'ring', label: 'Pending', tone: 'muted' },
  held: { icon: 'pause', label: 'Awaiting approval', tone: 'held' },
  waiting: { icon: 'dots', label: 'Waiting', tone: 'muted' },
};

// Drawn, not font glyphs: every system renders them alike (headless Chromium lacks some symbol glyphs).
const PATHS: Record<Icon, string> = {
  check: 'M3 8.5l3 3 7-7',
  cross: 'M4 4l8 8M12 4l-8 8',
  bang: 'M8 3v6M8 12v1',
  slash: 'M8 2a6 6 0 1 0 0 12A6 6 0 1 0 8 2zM4 12l8-8',
  minus: 'M8 2a6 6 0 1 0 0 12A6 6 0 1 0 8 2zM5 8h6',
  dot: 'M8 4a4 4 0 1 0 0 8A4 4 0 1 0 8 4z',
  ring: 'M8 3a5 5 0 1 0 0 10A5 5 0 1 0 8 3z',
  pause: 'M6 3v10M10 3v10',
  dots: 'M3 8h1M7.5 8h1M12 8h1',
  triangle: 'M8 3l5.5 10h-11z',
  dash: 'M4 8h8',
};

function StatusIcon({ icon }: { icon: Icon }) {
  return (
    <svg className="status-icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path
        d={PATHS[icon]}
        fill={icon === 'dot' ? 'currentColor' : 'none'}
        stroke="currentColor"
        strokeWidth="2"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}

/** The word for a run's state: its conclusion when finished, else its status. */
export function statusKey(status: RunStatus | string, conclusion: RunConclusion | string | null): string {
  return status === 'finished' && conclusion ? conclusion : status;
}

export function StatusBadge({
  status,
  conclusion = null,
  reason,
}: {
  status: RunStatus | string;
  conclusion?: RunConclusion | string | null;
  reason?: string | null;
}) {
  const key = statusKey(status, conclusion);
  const look = LOOK[key] ?? { icon: 'dash' as Icon, label: key, tone: 'muted' as Tone };
  return (
    <span className={`status status-${look.tone}`} data-status={key} title={reason ?? undefined}>
      <StatusIcon icon={look.icon} />
      {look.label}
      {reason ? <span className="status-reason"> ({reason.replaceAll('_', ' ')})</span> : null}
    </span>
  );
}

/** Per-host outcome words with their tones, for host tables and summaries. */
export const OUTCOME_TONE: Record<string, Tone> = {
  ok: 'ok',
  changed: 'warn',
  failed: 'bad',
  unreachable: 'bad',
  skipped: 'muted',
  rescued: 'ok',
  ignored: 'muted',
};

export function OutcomeBadge({ outcome }: { outcome: string }) {
  const tone = OUTCOME_TONE[outcome] ?? 'muted';
  const icon: Icon = tone === 'ok' ? 'check' : tone === 'bad' ? 'cross' : tone === 'warn' ? 'triangle' : 'dash';
  return (
    <span className={`status status-${tone}`} data-outcome={outcome}>
      <StatusIcon icon={icon} />
      {outcome}
    </span>
  );
}

/**
 * The same look for any other state (a worker's lease, a token, a sync): icon + word + tone. `data` becomes
 * data-* attributes, for tests and styling.
 */
export function Badge({
  tone,
  icon,
  label,
  title,
  data = {},
}: {
  tone: Tone;
  icon: Icon;
  label: string;
  title?: string;
  data?: Record<string, string | boolean>;
}) {
  const attrs = Object.fromEntries(Object.entries(data).map(([k, v]) => [`data-${k}`, String(v)]));
  return (
    <span className={`status status-${tone}`} title={title} {...attrs}>
      <StatusIcon icon={icon} />
      {label}
    </span>
  );
}
