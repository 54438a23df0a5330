// One run in the history table: state, what ran where, who started it, when, and how its hosts ended.
import type { HostOutcomeSummary, Run } from '@baton/contracts';
import { Link } from 'wouter';
import { StatusBadge } from '../../ui/Status';
import { durationBetween, formatDuration, Time } from '../../ui/Time';
import { useUsername } from './lookups';

export interface RowNames {
  project(id: string): string | undefined;
  template(id: string): string | undefined;
  inventory(id: string): string | undefined;
}

export function RunRow({ run, names }: { run: Run; names: RowNames }) {
  return (
    <tr data-run={run.id}>
      <td>
        {/* A reason that only repeats the conclusion (canceled: canceled) adds nothing. */}
        <StatusBadge
          status={run.status}
          conclusion={run.conclusion}
          reason={run.reason === run.conclusion ? null : run.reason}
        />
      </td>
      <td>
        <Link href={`/runs/${run.id}`} className="mono run-id" title={run.id}>
          {run.id}
        </Link>
        <RunKindNote run={run} />
      </td>
      <td className="mono run-playbook">{run.playbook}</td>
      <td>
        <ProjectAt run={run} names={names} />
      </td>
      <td>{run.inventory_id ? (names.inventory(run.inventory_id) ?? run.inventory_id) : <em>inline</em>}</td>
      <td>
        {run.origin}
        {run.template_id ? <div className="muted">{names.template(run.template_id) ?? run.template_id}</div> : null}
      </td>
      <td>
        <Submitter id={run.submitted_by} />
      </td>
      <td>
        <Time at={run.started_at} empty="not yet" />
      </td>
      <td>
        <Time at={run.finished_at} />
      </td>
      <td className="num">{run.started_at ? formatDuration(durationBetween(run.started_at, run.finished_at)) : '—'}</td>
      <td>
        <HostCounts summary={run.host_summary} />
      </td>
    </tr>
  );
}

function RunKindNote({ run }: { run: Run }) {
  const notes: string[] = [];
  if (run.kind === 'split' && run.shard_count) notes.push(`split × ${run.shard_count}`);
  if (run.kind === 'pipeline') notes.push('pipeline');
  if (run.check) notes.push('check mode');
  if (run.retry_of) notes.push('retry');
  return notes.length ? <div className="muted run-notes">{notes.join(' · ')}</div> : null;
}

function ProjectAt({ run, names }: { run: Run; names: RowNames }) {
  if (!run.project_id) return <span className="muted">—</span>;
  return (
    <span>
      {names.project(run.project_id) ?? run.project_id}
      {run.commit ? (
        <span className="mono muted" title={run.ref ? `${run.ref} → ${run.commit}` : run.commit}>
          @{run.commit.slice(0, 8)}
        </span>
      ) : null}
    </span>
  );
}

export function Submitter({ id }: { id: string }) {
  const name = useUsername(id);
  return <span title={id}>{name ?? id}</span>;
}

const COUNTS: Array<{ key: keyof Omit<HostOutcomeSummary, 'total'>; tone: string }> = [
  { key: 'ok', tone: 'ok' },
  { key: 'changed', tone: 'warn' },
  { key: 'failed', tone: 'bad' },
  { key: 'unreachable', tone: 'bad' },
];

/** "3 ok · 1 changed · 1 failed": the non-zero outcomes, each in words (never colour alone). */
export function HostCounts({ summary }: { summary: HostOutcomeSummary | null }) {
  if (!summary) return <span className="muted">—</span>;
  const shown = COUNTS.filter((c) => summary[c.key] > 0);
  if (!shown.length) return <span className="muted">{summary.total} hosts</span>;
  return (
    <span className="host-counts" title={`${summary.total} hosts`}>
      {shown.map((c) => (
        <span key={c.key} className={`host-count status-${c.tone}`} data-outcome={c.key}>
          {summary[c.key]} {c.key}
        </span>
      ))}
    </span>
  );
}
