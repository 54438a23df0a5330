// /drift — resources the latest dry runs found out of their desired state, by host and by playbook × inventory,
// each group with a Reconcile button; then the hosts those dry runs could not assess. Filters live in the address.
import type { DriftItem, UnassessedHost } from '@baton/contracts';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { usePagedList } from '../../api/hooks';
import { EmptyState, LoadMore, Loading, PageHeader } from '../../ui/layout';
import { LoadError } from '../../ui/forms';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { useInventories, useProjects } from '../runs/lookups';
import { DriftGroupCard, type DriftGroup } from './DriftGroupCard';
import { FilterBar, HOST_FILTER, PLAYBOOK_FILTER } from './FilterControls';
import { hostPath, useUrlFilters } from './filters';
import './observation.css';

const KEYS = ['host', 'inventory', 'playbook'] as const;
const REFRESH_MS = 10_000;

/** Items by host, then by (playbook, inventory): the unit a reconcile run fixes. Order: as listed (newest first). */
export function groupDrift(items: DriftItem[]): Array<{ host: string; groups: DriftGroup[] }> {
  const hosts = new Map<string, Map<string, DriftGroup>>();
  for (const d of items) {
    let groups = hosts.get(d.host);
    if (!groups) hosts.set(d.host, (groups = new Map()));
    const key = `${d.playbook}\u0000${d.inventory_id ?? ''}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { host: d.host, playbook: d.playbook, inventory_id: d.inventory_id, items: [] }));
    g.items.push(d);
  }
  return [...hosts].map(([host, groups]) => ({ host, groups: [...groups.values()] }));
}

export default function DriftPage() {
  const filters = useUrlFilters(KEYS);
  const f = filters.values;
  const drift = usePagedList<DriftItem>(`/v1/drift${qs(f)}`, { refetchInterval: REFRESH_MS });
  const unassessed = usePagedList<UnassessedHost>(`/v1/drift/unassessed${qs(f)}`, { refetchInterval: REFRESH_MS });
  const inventories = useInventories();
  const projects = useProjects();
  const names = {
    inventory: (id: string | null) => (id ? (inventories.nameOf(id) ?? id) : 'inline inventory'),
    project: (id: string | null) => (id ? (projects.nameOf(id) ?? id) : null),
  };
  const byHost = groupDrift(drift.items);

  return (
    <>
      <PageHeader
        title="Drift"
        subtitle="What the latest dry run (check mode) of each playbook and inventory found out of its desired state on each host. A later run that finds a resource unchanged clears it."
      />
      <FilterBar
        label="Filter drift"
        filters={filters}
        error={drift.error}
        fields={[
          HOST_FILTER,
          { kind: 'named', name: 'inventory', label: 'Inventory', items: inventories.items },
          PLAYBOOK_FILTER,
        ]}
      />

      <section aria-labelledby="drifting-heading">
        <h2 id="drifting-heading">
          Drifting resources{' '}
          {drift.items.length ? (
            <span className="muted obs-count">
              ({drift.items.length}
              {drift.hasMore ? '+' : ''})
            </span>
          ) : null}
        </h2>
        {drift.error ? <LoadError error={drift.error} /> : null}
        {drift.isLoading ? (
          <Loading what="Loading drift" />
        ) : byHost.length === 0 && !drift.error ? (
          <EmptyState title={filters.any ? 'No drift matches these filters' : 'No drift found'}>
            {filters.any
              ? 'Nothing the latest dry runs found out of place matches the filters above.'
              : 'The latest dry runs found every resource in its desired state. Submit a run in check mode (dry run) to look again.'}
          </EmptyState>
        ) : (
          byHost.map(({ host, groups }) => (
            <section key={host} className="drift-host" aria-label={`Drift on ${host}`} data-drift-host={host}>
              <h3>
                <Link href={hostPath(host)} className="mono">
                  {host}
                </Link>
              </h3>
              {groups.map((g) => (
                <DriftGroupCard
                  key={`${g.playbook} ${g.inventory_id}`}
                  group={g}
                  inventoryName={names.inventory(g.inventory_id)}
                  projectName={names.project(g.items[0]!.project_id)}
                />
              ))}
            </section>
          ))
        )}
        <LoadMore hasMore={drift.hasMore} loading={drift.loadingMore} onClick={drift.loadMore} />
      </section>

      <section aria-labelledby="unassessed-heading">
        <h2 id="unassessed-heading">Hosts not assessed</h2>
        <p className="muted obs-note">
          The latest dry run could not tell whether these hosts drift: they failed, were unreachable, or skipped tasks
          in check mode.
        </p>
        <PagedTable
          // A bad filter fails both lists alike: its message shows once, above the drift.
          list={drift.error ? { ...unassessed, error: null } : unassessed}
          what="Loading hosts not assessed"
          caption="Hosts the latest dry run could not assess"
          testId="unassessed"
          empty={
            <EmptyState title="Every host was assessed">The latest dry runs reached and checked every host.</EmptyState>
          }
          head={
            <>
              <th scope="col">Host</th>
              <th scope="col">Playbook</th>
              <th scope="col">Inventory</th>
              <th scope="col">Reason</th>
              <th scope="col">Dry run</th>
              <th scope="col">When</th>
            </>
          }
          row={(u) => (
            <tr key={`${u.host} ${u.playbook} ${u.inventory_id}`} data-host={u.host}>
              <th scope="row">
                <Link href={hostPath(u.host)} className="mono">
                  {u.host}
                </Link>
              </th>
              <td className="mono">{u.playbook}</td>
              <td>{names.inventory(u.inventory_id)}</td>
              <td className="obs-reason">{u.reason}</td>
              <td>
                <Link href={`/runs/${u.run_id}`} className="mono">
                  {u.run_id}
                </Link>
              </td>
              <td>
                <Time at={u.at} />
              </td>
            </tr>
          )}
        />
      </section>
    </>
  );
}
