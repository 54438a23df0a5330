// Per-host outcomes from the play recap (host_stats), and for each host that failed, its failed tasks with the
// error message (the runner_on_failed / runner_on_unreachable events of that host). A host Baton refused for its SSH
// host key (`reason`) says so beside its outcome, with a link to the inventory's host keys.
import type { HostCounts, Run, RunEvent } from '@baton/contracts';
import { useQueries } from '@tanstack/react-query';
import { Link } from 'wouter';
import { api, qs } from '../../api/client';
import { OutcomeBadge } from '../../ui/Status';
import { EmptyState } from '../../ui/layout';
import { LoadError } from '../../ui/forms';
import { HOST_KEYS_ANCHOR } from '../known-hosts/HostKeysSection';
import '../known-hosts/known-hosts.css';

const COUNTS = ['ok', 'changed', 'failed', 'unreachable', 'skipped', 'rescued', 'ignored'] as const;

/** A host's final outcome: unreachable beats failed beats changed beats ok (skipped: nothing else happened). */
export function outcomeOf(c: HostCounts): string {
  if (c.unreachable) return 'unreachable';
  if (c.failed) return 'failed';
  if (c.changed) return 'changed';
  if (c.ok) return 'ok';
  return c.skipped ? 'skipped' : 'ok';
}

/** The runs whose events tell what happened on `host`: the run itself, or the shards/steps that ran it. */
function sourcesFor(run: Run, children: Run[] | undefined, host: string): string[] {
  if (!children) return [run.id];
  const holding = children.filter((c) => c.hosts === null || c.hosts.includes(host));
  return holding.map((c) => c.id);
}

/** Where a host's keys are reviewed and pinned: its inventory's host keys, the pin form set to that host. */
function hostKeysLink(run: Run, host: string): string | null {
  return run.inventory_id
    ? `/inventories/${run.inventory_id}?host=${encodeURIComponent(host)}#${HOST_KEYS_ANCHOR}`
    : null;
}

/** What a host-key reason means for the one reading the run. */
const REASON_ADVICE: Record<string, string> = {
  'host key changed':
    'The host presented a different SSH host key than the one stored. If it was reinstalled or its key rotated, check the new key and pin it; otherwise someone may be impersonating it.',
  'host key unknown':
    'Host key checking is strict and no key is stored for the host: check its key and pin it to let runs reach it.',
};

function HostKeyAlert({ run, hosts }: { run: Run; hosts: Array<[string, string]> }) {
  if (hosts.length === 0) return null;
  const reasons = [...new Set(hosts.map(([, r]) => r))];
  return (
    <div className="banner banner-error" role="alert" data-testid="host-key-alert">
      <strong>
        {hosts.length === 1
          ? `${hosts[0]![0]} was not reached: ${hosts[0]![1]}`
          : `${hosts.length} hosts were not reached over SSH`}
      </strong>
      {hosts.length > 1 ? (
        <ul>
          {hosts.map(([h, r]) => (
            <li key={h}>
              <span className="mono">{h}</span>: {r}
            </li>
          ))}
        </ul>
      ) : null}
      {reasons.map((r) => (REASON_ADVICE[r] ? <p key={r}>{REASON_ADVICE[r]}</p> : null))}
      {run.inventory_id ? (
        <p>
          <Link href={hostKeysLink(run, hosts[0]![0])!}>Review the inventory’s host keys</Link>
        </p>
      ) : null}
    </div>
  );
}

export function HostTable({ run, children }: { run: Run; children?: Run[] | undefined }) {
  const stats = run.host_stats ?? null;
  const hosts = stats ? Object.keys(stats).sort() : [];
  const failing = hosts.filter((h) => stats![h]!.failed > 0 || stats![h]!.unreachable > 0);
  const refused = hosts.flatMap((h): Array<[string, string]> => {
    const reason = stats![h]!.reason;
    return reason && stats![h]!.unreachable > 0 ? [[h, reason]] : [];
  });
  return (
    <section aria-labelledby="hosts-heading">
      <h2 id="hosts-heading">Hosts</h2>
      <HostKeyAlert run={run} hosts={refused} />
      {!stats || hosts.length === 0 ? (
        <EmptyState title={run.status === 'finished' ? 'No per-host outcomes' : 'No outcomes yet'}>
          {run.status === 'finished'
            ? 'The run ended without a play recap (see the log for why).'
            : 'Per-host outcomes appear when the play recap arrives at the end of the run.'}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table aria-label="Per-host outcomes">
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Outcome</th>
                {COUNTS.map((k) => (
                  <th key={k} scope="col" className="num">
                    {k}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {hosts.map((h) => (
                <tr key={h} data-host={h}>
                  <th scope="row" className="mono">
                    {h}
                  </th>
                  <td>
                    <OutcomeBadge outcome={outcomeOf(stats![h]!)} />
                    {stats![h]!.reason ? <HostReason run={run} host={h} reason={stats![h]!.reason!} /> : null}
                  </td>
                  {COUNTS.map((k) => (
                    <td key={k} className="num">
                      {stats![h]![k]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {failing.slice(0, 50).map((h) => (
        <HostFailures key={h} runIds={sourcesFor(run, children, h)} host={h} />
      ))}
      {failing.length > 50 ? (
        <p className="muted">{failing.length - 50} more hosts failed: filter the events below by host to see theirs.</p>
      ) : null}
    </section>
  );
}

/** "— host key changed", and where to review the host's keys. */
function HostReason({ run, host, reason }: { run: Run; host: string; reason: string }) {
  const link = /host key/.test(reason) ? hostKeysLink(run, host) : null;
  return (
    <span className="host-reason" data-reason={reason}>
      — {reason}
      {link ? (
        <>
          {' '}
          <Link href={link} className="host-reason-link" aria-label={`Host keys for ${host}`}>
            host keys
          </Link>
        </>
      ) : null}
    </span>
  );
}

/** The message ansible gave for a failed task: msg, else stderr, else the result's summary. */
function messageOf(e: RunEvent): string {
  const res = (e.data.res ?? {}) as Record<string, unknown>;
  for (const k of ['msg', 'stderr', 'reason', 'stdout']) {
    const v = res[k];
    if (typeof v === 'string' && v.trim()) return v;
  }
  if (res.truncated) return '(the result was too large to keep)';
  return JSON.stringify(res);
}

/** The failed and unreachable events of `host` in the given runs (a split's host ran in one of its shards). */
function useHostFailures(runIds: string[], host: string) {
  const queries = useQueries({
    queries: runIds.flatMap((id) =>
      ['runner_on_failed', 'runner_on_unreachable'].map((kind) => {
        const path = `/v1/runs/${id}/events${qs({ kind, host, limit: 100 })}`;
        return {
          queryKey: [path],
          queryFn: ({ signal }: { signal: AbortSignal }) => api.get<RunEvent[]>(path, signal),
        };
      }),
    ),
  });
  return {
    events: queries.flatMap((q) => q.data ?? []).sort((a, b) => a.run_id.localeCompare(b.run_id) || a.seq - b.seq),
    isLoading: queries.some((q) => q.isLoading),
    error: queries.find((q) => q.error)?.error ?? null,
  };
}

function HostFailures({ runIds, host }: { runIds: string[]; host: string }) {
  const failed = useHostFailures(runIds, host);
  const events = failed.events;
  return (
    <section className="host-failures" aria-label={`Failures on ${host}`} data-failures-host={host}>
      <h3>
        Failed on <span className="mono">{host}</span>
      </h3>
      {failed.error ? <LoadError error={failed.error} /> : null}
      {failed.isLoading ? (
        <p className="muted">Loading…</p>
      ) : events.length === 0 ? (
        <p className="muted">No failed task events were recorded for this host.</p>
      ) : (
        <ul className="failure-list">
          {events.map((e) => (
            <li key={`${e.run_id}-${e.seq}`}>
              <strong>{String(e.data.task ?? '(unnamed task)')}</strong>{' '}
              <span className="muted">
                {e.kind === 'runner_on_unreachable' ? 'unreachable' : 'failed'}
                {e.data.ignore_errors ? ' (ignored)' : ''} · event {e.seq}
              </span>
              {/* Long messages (ssh's host key warning) scroll: focusable, so the keyboard can scroll them too. */}
              <pre className="failure-msg" tabIndex={0} aria-label={`Message of event ${e.seq}`}>
                {messageOf(e)}
              </pre>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
