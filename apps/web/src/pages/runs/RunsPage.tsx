// Run history: filters in the address, newest first, paged by cursor, refreshed while anything shown is still live.
import type { Run } from '@baton/contracts';
import { useEffect, useMemo, useState } from 'react';
import { Link, useSearchParams } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, NoMatches, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { FILTER_KEYS, readFilters, runsPath, sinceInstant, withoutFilters } from './filters';
import { useInventories, useProjects, useTemplates } from './lookups';
import { RunFilters } from './RunFilters';
import { type RowNames, RunRow } from './RunRow';
import './runs.css';

/** Runs that can still change state: refetch often while one is on screen. */
const LIVE_STATUSES = new Set<string>(['pending', 'held', 'waiting', 'running']);
const LIVE_REFRESH_MS = 3_000;
/** Otherwise look for new runs now and then (and whenever the window regains focus). */
const IDLE_REFRESH_MS = 5_000;

export default function RunsPage() {
  const [params, setParams] = useSearchParams();
  const filters = readFilters(params);
  const canSubmit = useHasRole('operator');
  // A `since` preset becomes an instant once per choice, so the list's cache key stays put between refreshes.
  const since = useMemo(() => sinceInstant(filters.since, Date.now()), [filters.since]);
  const path = runsPath(filters, since, params.get('limit'));

  const [live, setLive] = useState(false);
  const list = usePagedList<Run>(path, { refetchInterval: live ? LIVE_REFRESH_MS : IDLE_REFRESH_MS });
  const anyLive = list.items.some((r) => LIVE_STATUSES.has(r.status));
  useEffect(() => setLive(anyLive), [anyLive]);

  const projects = useProjects();
  const templates = useTemplates();
  const inventories = useInventories();
  const names: RowNames = {
    project: projects.nameOf,
    template: templates.nameOf,
    inventory: inventories.nameOf,
  };
  const filtered = FILTER_KEYS.some((k) => filters[k]);

  return (
    <>
      <PageHeader
        title="Runs"
        subtitle={
          <span className="runs-live">
            Newest first · refreshed every {(live ? LIVE_REFRESH_MS : IDLE_REFRESH_MS) / 1000} s
            {live ? ' while runs are in progress' : ''}
          </span>
        }
        actions={
          canSubmit ? (
            <Link href="/runs/new" className="btn btn-primary">
              New run
            </Link>
          ) : null
        }
      />
      <RunFilters
        projects={projects.items}
        templates={templates.items}
        inventories={inventories.items}
        error={list.error}
      />
      <PagedTable
        list={list}
        what="Loading runs"
        caption="Runs, newest first"
        className="runs-table"
        empty={
          filtered ? (
            <NoMatches what="runs" onClear={() => setParams((p) => withoutFilters(p))} />
          ) : (
            <EmptyState title="No runs yet">
              {canSubmit ? (
                <>
                  <Link href="/runs/new">Submit a run</Link> (an inline playbook or a project&apos;s, against an
                  inventory), launch a <Link href="/templates">template</Link>, or POST /v1/runs.
                </>
              ) : (
                <>Runs appear here once an operator submits one or a template, schedule or trigger launches one.</>
              )}
            </EmptyState>
          )
        }
        head={
          <>
            <th scope="col">Status</th>
            <th scope="col">Run</th>
            <th scope="col">Playbook</th>
            <th scope="col">Project@commit</th>
            <th scope="col">Inventory</th>
            <th scope="col">Origin</th>
            <th scope="col">Submitted by</th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
            <th scope="col" className="num">
              Duration
            </th>
            <th scope="col">Hosts</th>
          </>
        }
        row={(run) => <RunRow key={run.id} run={run} names={names} />}
      />
    </>
  );
}
