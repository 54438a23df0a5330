// One inventory: its groups (hosts, children, variables), its hosts (groups, variables), the SSH host keys runs
// trust for them, and its content. `?host=<inventory host>` (a run's link) starts the pin form on that host.
import type { InventoryHost } from '@baton/contracts';
import { useMemo } from 'react';
import { Link, useParams, useSearch } from 'wouter';
import { useApi, usePagedList } from '../../api/hooks';
import { AccessPanel, useCanManage } from '../../ui/AccessPanel';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { HOST_KEY_CHECKING } from '../known-hosts/host-key-checking';
import { HostKeysSection } from '../known-hosts/HostKeysSection';
import { inventoryNamesBySshHost, inventorySshHost } from '../known-hosts/ssh-host';
import { DeleteError } from '../projects/objects';
import type { Inventory } from '../projects/types';
import { readVars, type Vars } from './inventory-text';
import '../projects/inputs.css';

export default function InventoryPage() {
  const { id } = useParams<{ id: string }>();
  const canManage = useCanManage(id);
  const q = useApi<Inventory>(`/v1/inventories/${id}`);
  const remove = useDeleteObject('inventories', id);
  const vars = useMemo(() => readVars(q.data?.content ?? ''), [q.data?.content]);
  const inv = q.data;
  const hostNames = useMemo(
    () => [...(inv?.groups ?? []).flatMap((g) => g.hosts), ...Object.keys(vars.hostVars)],
    [inv?.groups, vars],
  );
  const aliases = useMemo(() => inventoryNamesBySshHost(hostNames, vars.hostVars), [hostNames, vars]);
  const failedHost = new URLSearchParams(useSearch()).get('host');
  if (q.error || !inv) return <NotLoaded error={q.error} what="Loading the inventory" />;
  return (
    <>
      <PageHeader
        title={inv.name}
        subtitle={`${inv.format.toUpperCase()} inventory, ${inv.host_count} host${inv.host_count === 1 ? '' : 's'}`}
        actions={
          canManage ? (
            <>
              <Link href={`/inventories/${id}/edit`} className="btn">
                Edit
              </Link>
              <DeleteButton
                remove={remove}
                question={`Delete the inventory ${inv.name}?`}
                detail="Its grants go with it. Runs that used it keep their record."
              />
            </>
          ) : null
        }
      />
      <DeleteError error={remove.error} />
      <Details
        items={[
          ['Format', inv.format.toUpperCase()],
          ['Hosts', String(inv.host_count)],
          [
            'Host key checking',
            <a href="#host-keys" data-testid="policy-link">
              {HOST_KEY_CHECKING[inv.host_key_checking].label}
            </a>,
          ],
          ['Created', <Time at={inv.created_at} />],
          ['Updated', <Time at={inv.updated_at} />],
        ]}
      />
      <section aria-labelledby="groups-heading">
        <h2 id="groups-heading">Groups</h2>
        {inv.groups.length === 0 ? (
          <EmptyState title="No groups">Every host is in the group all.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table data-testid="groups">
              <thead>
                <tr>
                  <th scope="col">Group</th>
                  <th scope="col">Hosts</th>
                  <th scope="col">Child groups</th>
                  <th scope="col">Variables</th>
                </tr>
              </thead>
              <tbody>
                {inv.groups.map((g) => (
                  <tr key={g.name} data-group={g.name}>
                    <th scope="row">{g.name}</th>
                    <td>
                      <Chips items={g.hosts} />
                    </td>
                    <td>
                      <Chips items={g.children} />
                    </td>
                    <td>
                      <VarList vars={vars.groupVars[g.name]} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Hosts inventoryId={inv.id} hostVars={vars.hostVars} />
      <HostKeysSection
        scope="inventories"
        ownerId={inv.id}
        ownerName={inv.name}
        canManage={canManage}
        aliases={aliases}
        suggestHost={failedHost ? inventorySshHost(failedHost, vars.hostVars[failedHost]) : undefined}
      />
      <details className="card">
        <summary>Content</summary>
        <pre className="content-view" data-testid="inventory-content">
          {inv.content}
        </pre>
      </details>
      <AccessPanel objectId={inv.id} />
    </>
  );
}

function Hosts({ inventoryId, hostVars }: { inventoryId: string; hostVars: Record<string, Vars> }) {
  const hosts = usePagedList<InventoryHost>(`/v1/inventories/${inventoryId}/hosts`);
  return (
    <section aria-labelledby="hosts-heading">
      <h2 id="hosts-heading">Hosts</h2>
      <PagedTable
        list={hosts}
        what="Loading hosts"
        testId="hosts"
        empty={<EmptyState title="No hosts">Edit the content to add hosts.</EmptyState>}
        head={
          <>
            <th scope="col">Host</th>
            <th scope="col">Groups</th>
            <th scope="col">Variables</th>
          </>
        }
        row={(h) => (
          <tr key={h.name} data-host={h.name}>
            <th scope="row" className="mono">
              {h.name}
            </th>
            <td>
              <Chips items={h.groups} />
            </td>
            <td>
              <VarList vars={hostVars[h.name]} />
            </td>
          </tr>
        )}
      />
    </section>
  );
}

function Chips({ items }: { items: string[] }) {
  if (items.length === 0) return <span className="muted">—</span>;
  return (
    <span className="chips">
      {items.map((i) => (
        <span key={i} className="chip">
          {i}
        </span>
      ))}
    </span>
  );
}

function VarList({ vars }: { vars: Vars | undefined }) {
  const entries = Object.entries(vars ?? {});
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="vars">
      {entries.map(([k, v]) => (
        <li key={k}>
          {k}={typeof v === 'string' ? v : JSON.stringify(v)}
        </li>
      ))}
    </ul>
  );
}
