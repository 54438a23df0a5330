// /hosts/:host — one host's runs, newest first, with the tasks that failed there and their messages.
import type { FleetHost, HostRun } from '@baton/contracts';
import { Fragment } from 'react';
import { Link, useLocation } from 'wouter';
import { ApiError, qs } from '../../api/client';
import { useApi, usePagedList } from '../../api/hooks';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Badge, OutcomeBadge } from '../../ui/Status';
import { Time } from '../../ui/Time';
import { useInventories, useProjects } from '../runs/lookups';
import { hostFromAddress } from './filters';
import { FlakyBadge } from './FlakyBadge';
import { seconds, shortCommit } from './format';
import './observation.css';

const REFRESH_MS = 15_000;

export default function HostPage() {
  // Re-rendered on every navigation; the name comes from the raw address (see hostFromAddress).
  useLocation();
  const host = hostFromAddress(window.location.pathname) ?? '';
  return <HostHistory key={host} host={host} />;
}

function HostHistory({ host }: { host: string }) {
  const list = usePagedList<HostRun>(`/v1/hosts/${encodeURIComponent(host)}/runs`, { refetchInterval: REFRESH_MS });
  // A host no visible run reported on is a 404: that is the empty state, not an error.
  const unknown = list.error instanceof ApiError && list.error.status === 404;
  const projects = useProjects();
  const inventories = useInventories();
  return (
    <>
      <PageHeader
        title={`Host ${host}`}
        subtitle="Its runs, newest first, with the tasks that failed on it."
        actions={
          <>
            <Link href={`/tasks${qs({ host })}`} className="btn">
              Tasks on this host
            </Link>
            <Link href="/fleet" className="btn">
              Fleet
            </Link>
          </>
        }
      />
      <HostSummary host={host} />
      <PagedTable
        list={unknown ? { ...list, error: null } : list}
        what="Loading the host's runs"
        caption={`Runs on ${host}, newest first`}
        className="host-runs-table"
        testId="host-runs"
        empty={
          <EmptyState title="No runs on this host">
            No run you may see has reported on <span className="mono">{host}</span>. Host names are matched exactly as
            the inventory spells them.
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Outcome</th>
            <th scope="col">Run</th>
            <th scope="col">Playbook</th>
            <th scope="col">Project@commit</th>
            <th scope="col">Inventory</th>
            <th scope="col">Tasks</th>
            <th scope="col" className="num">
              Duration
            </th>
            <th scope="col">Finished</th>
          </>
        }
        row={(r) => (
          <HostRunRows
            key={r.run_id}
            run={r}
            project={r.project_id ? (projects.nameOf(r.project_id) ?? r.project_id) : null}
            inventory={r.inventory_id ? (inventories.nameOf(r.inventory_id) ?? r.inventory_id) : null}
          />
        )}
      />
    </>
  );
}

const COUNT_KEYS = ['ok', 'changed', 'failed', 'unreachable', 'skipped', 'rescued', 'ignored'] as const;

function HostRunRows({
  run: r,
  project,
  inventory,
}: {
  run: HostRun;
  project: string | null;
  inventory: string | null;
}) {
  const failures = r.failed_tasks.length > 0;
  return (
    <Fragment>
      <tr data-run={r.run_id} className={failures ? 'has-failures' : undefined}>
        <td>
          <OutcomeBadge outcome={r.outcome} />
        </td>
        <td>
          <Link href={`/runs/${r.run_id}`} className="mono" title={r.run_id}>
            {r.run_id}
          </Link>
          {r.check ? (
            <div>
              <Badge tone="muted" icon="ring" label="dry run (check)" data={{ check: true }} />
            </div>
          ) : null}
        </td>
        <td className="mono">
          {r.playbook}
          {r.origin === 'reconcile' ? (
            <div>
              <Badge tone="muted" icon="ring" label="reconcile" data={{ origin: 'reconcile' }} />
            </div>
          ) : null}
        </td>
        <td>
          {project ?? <span className="muted">—</span>}
          {r.commit ? (
            <span className="mono muted" title={r.commit}>
              @{shortCommit(r.commit)}
            </span>
          ) : null}
        </td>
        <td>{inventory ?? <em>inline</em>}</td>
        <td className="obs-counts">
          {COUNT_KEYS.filter((k) => r.counts[k] > 0)
            .map((k) => `${r.counts[k]} ${k}`)
            .join(' · ') || <span className="muted">none</span>}
        </td>
        <td className="num">{seconds(r.duration_s)}</td>
        <td>
          <Time at={r.finished_at} />
        </td>
      </tr>
      {failures ? (
        <tr className="failed-tasks-row" data-failures={r.run_id}>
          <td colSpan={8}>
            <ul className="failed-tasks" aria-label={`Tasks that failed in run ${r.run_id}`}>
              {r.failed_tasks.map((t, i) => (
                <li key={i}>
                  <strong>{t.task}</strong>
                  <pre className="failed-task-msg">{t.message}</pre>
                </li>
              ))}
            </ul>
          </td>
        </tr>
      ) : null}
    </Fragment>
  );
}

/** The host's row of the fleet (its last 20 runs): failure rate and whether it is flaky, and why. */
function HostSummary({ host }: { host: string }) {
  const fleet = useApi<FleetHost[]>(`/v1/fleet${qs({ host })}`, { refetchInterval: REFRESH_MS });
  const row = fleet.data?.[0];
  if (!row) return null;
  return (
    <p className="host-summary" data-testid="host-summary">
      {`Over its last ${row.runs} run${row.runs === 1 ? '' : 's'}: ${row.failed + row.unreachable} failed or unreachable (${Math.round(row.failure_rate * 100)}%).`}{' '}
      {row.flaky ? <FlakyBadge reason={row.flaky_reason} /> : null}
    </p>
  );
}
