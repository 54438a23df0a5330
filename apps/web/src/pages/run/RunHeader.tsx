// The run's header: state, what ran where and when, who submitted it, its hold, and the actions.
import type { Run, User } from '@baton/contracts';
import { Link } from 'wouter';
import { useApi } from '../../api/hooks';
import { StatusBadge } from '../../ui/Status';
import { durationBetween, formatDuration, Time } from '../../ui/Time';
import { Details, PageHeader } from '../../ui/layout';
import { RunActions } from './RunActions';

const KIND_WORDS: Record<Run['kind'], string> = {
  run: 'Run',
  split: 'Split',
  shard: 'Shard',
  pipeline: 'Pipeline run',
  step: 'Pipeline step',
};

/** A link to the object the run used, by its name when the caller may read it (else by its id). */
function Ref({ to, id }: { to: string; id: string | null }) {
  const named = useApi<{ name: string }>(id ? `/v1${to}/${id}` : null, { retry: false, staleTime: 300_000 });
  if (!id) return null;
  return (
    <Link href={`${to}/${id}`} className={named.data ? undefined : 'mono'} title={id}>
      {named.data?.name ?? id}
    </Link>
  );
}

function Submitter({ id }: { id: string }) {
  // Not every caller may read users: the id stands in for the name then.
  const user = useApi<User>(`/v1/users/${id}`, { retry: false, staleTime: 300_000 });
  return <span title={id}>{user.data?.username ?? id}</span>;
}

function title(run: Run): string {
  const base = `${KIND_WORDS[run.kind]} ${run.id}`;
  if (run.kind === 'shard' && run.shard_index !== null && run.shard_count !== null)
    return `${base} (shard ${run.shard_index + 1} of ${run.shard_count})`;
  if (run.kind === 'step' && run.step_name) return `${base} (${run.step_name})`;
  return base;
}

export function RunHeader({ run }: { run: Run }) {
  const duration = durationBetween(run.started_at, run.finished_at);
  const items: Array<[string, React.ReactNode]> = [
    ['Playbook', <span className="mono">{run.playbook}</span>],
    ['Project', <Ref to="/projects" id={run.project_id} />],
    [
      'Commit',
      run.commit ? (
        <span className="mono" title={run.commit}>
          {run.commit.slice(0, 12)}
        </span>
      ) : null,
    ],
    ['Ref', run.ref ? <span className="mono">{run.ref}</span> : null],
    ['Inventory', run.inventory_id ? <Ref to="/inventories" id={run.inventory_id} /> : 'inline'],
    ['Limit', run.limit ? <span className="mono">{run.limit}</span> : null],
    ['Template', <Ref to="/templates" id={run.template_id} />],
    ['Origin', run.origin],
    ['Submitted by', <Submitter id={run.submitted_by} />],
    ['Submitted', <Time at={run.created_at} />],
    ['Started', <Time at={run.started_at} empty="not yet" />],
    ['Finished', <Time at={run.finished_at} empty="not yet" />],
    ['Duration', run.started_at ? formatDuration(duration) : null],
    ['Check mode', run.check ? 'yes (--check --diff)' : 'no'],
    [
      'Labels',
      run.labels.length
        ? run.labels.map((l) => (
            <code key={l} className="label">
              {l}
            </code>
          ))
        : null,
    ],
    ['Worker', run.worker],
    ['Exit code', run.exit_code === null ? null : String(run.exit_code)],
  ];
  if (run.hosts) items.push(['Hosts', <span className="mono">{run.hosts.join(', ')}</span>]);
  if (run.schedule_id) items.push(['Schedule', <Ref to="/schedules" id={run.schedule_id} />]);
  if (run.trigger_id) items.push(['Trigger', <Ref to="/triggers" id={run.trigger_id} />]);
  return (
    <>
      <PageHeader
        title={title(run)}
        subtitle={
          <span className="run-subtitle">
            <StatusBadge status={run.status} conclusion={run.conclusion} reason={run.reason} />
            {run.parent_id ? (
              <span>
                Part of{' '}
                <Link href={`/runs/${run.parent_id}`}>
                  {run.kind === 'step' ? 'pipeline' : 'split'} {run.parent_id}
                </Link>
              </span>
            ) : null}
            {run.retry_of ? (
              <span>
                Retry of <Link href={`/runs/${run.retry_of}`}>{run.retry_of}</Link>
              </span>
            ) : null}
          </span>
        }
        actions={<RunActions run={run} />}
      />
      <Details items={items} />
      <HoldPanel run={run} />
    </>
  );
}

/** Which policies hold the run, the approvals each has and needs, when the hold expires, and every decision. */
function HoldPanel({ run }: { run: Run }) {
  if (run.held_by === null && run.approvals.length === 0) return null;
  const needed = run.approvals_needed ?? [];
  return (
    <section className="card hold" aria-labelledby="hold-heading">
      <h2 id="hold-heading">{run.status === 'held' ? 'Awaiting approval' : 'Approval'}</h2>
      {needed.length ? (
        <ul className="hold-policies">
          {needed.map((p) => (
            <li key={p.policy_id}>
              Policy <Link href={`/policies/${p.policy_id}`}>{p.name}</Link>:{' '}
              <strong>
                {p.approved} of {p.min_approvals}
              </strong>{' '}
              approval{p.min_approvals === 1 ? '' : 's'}
            </li>
          ))}
        </ul>
      ) : run.held_by ? (
        <p>Held because of its origin ({run.origin}): an admin decides.</p>
      ) : null}
      {run.hold_expires_at && run.status === 'held' ? (
        <p>
          Expires (rejected unless decided) <Time at={run.hold_expires_at} />
        </p>
      ) : null}
      {run.approvals.length ? (
        <ul className="decisions" aria-label="Decisions">
          {run.approvals.map((a) => (
            <li key={`${a.user_id}-${a.at}`}>
              <strong>{a.username}</strong> {a.decision === 'approve' ? 'approved' : 'rejected'} <Time at={a.at} />
              {a.comment ? <blockquote>{a.comment}</blockquote> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
