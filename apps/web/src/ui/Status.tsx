// One way of showing a run's state everywhere: an icon, a word and a colour (never colour alone).
import type { RunConclusion, RunStatus } from '@baton/contracts';

type Tone = 'ok' | 'bad' | 'warn' | 'muted' | 'live' | 'held';

const LOOK: Record<string, { icon: string; label: string; tone: Tone }> = {
  succeeded: { icon: '✓', label: 'Succeeded', tone: 'ok' },
  failed: { icon: '✕', label: 'Failed', tone: 'bad' },
  error: { icon: '!', label: 'Error', tone: 'bad' },
  canceled: { icon: '⊘', label: 'Canceled', tone: 'muted' },
  rejected: { icon: '⊖', label: 'Rejected', tone: 'warn' },
  running: { icon: '●', label: 'Running', tone: 'live' },
  pending: { icon: '○', label: 'Pending', tone: 'muted' },
  held: { icon: '⏸', label: 'Awaiting approval', tone: 'held' },
  waiting: { icon: '…', label: 'Waiting', tone: 'muted' },
};

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
  const look = LOOK[key] ?? { icon: '?', label: key, tone: 'muted' as Tone };
  return (
    <span className={`status status-${look.tone}`} data-status={key} title={reason ?? undefined}>
      <span className="status-icon" aria-hidden="true">
        {look.icon}
      </span>
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
  const icon = tone === 'ok' ? '✓' : tone === 'bad' ? '✕' : tone === 'warn' ? '△' : '–';
  return (
    <span className={`status status-${tone}`} data-outcome={outcome}>
      <span className="status-icon" aria-hidden="true">
        {icon}
      </span>
      {outcome}
    </span>
  );
}
