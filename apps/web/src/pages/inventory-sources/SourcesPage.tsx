// Inventory sources: scripts, plugins and URLs that fill an inventory when refreshed.
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { ObjectLink } from '../projects/objects';
import type { InventorySource } from '../projects/types';
import { KIND_LABEL } from './kinds';
import { RefreshBadge } from './RefreshBadge';
import '../projects/inputs.css';

export default function SourcesPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<InventorySource>('/v1/inventory-sources');
  return (
    <>
      <PageHeader
        title="Inventory sources"
        subtitle="Dynamic inventories: a script, plugin or URL whose result replaces a target inventory on refresh."
        actions={
          canCreate ? (
            <Link href="/inventory-sources/new" className="btn btn-primary">
              New source
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading inventory sources"
        caption="Inventory sources"
        empty={
          <EmptyState title="No inventory sources yet">
            {canCreate
              ? 'Create one with “New source” to fill an inventory from a script or plugin in a project, or from a URL.'
              : 'Ask an operator to create an inventory source, or to grant you access to one.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Target inventory</th>
            <th scope="col">Last refresh</th>
            <th scope="col" className="num">
              Hosts
            </th>
            <th scope="col">Result</th>
          </>
        }
        row={(s) => (
          <tr key={s.id}>
            <td>
              <Link href={`/inventory-sources/${s.id}`}>{s.name}</Link>
            </td>
            <td>{KIND_LABEL[s.kind]}</td>
            <td>
              <ObjectLink kind="inventories" id={s.inventory_id} />
            </td>
            <td>
              <Time at={s.refreshed_at} empty="never" />
            </td>
            <td className="num">{s.host_count ?? '—'}</td>
            <td>
              <RefreshBadge source={s} />
              {s.last_error ? <div className="hint wrap-anywhere">{s.last_error}</div> : null}
            </td>
          </tr>
        )}
      />
    </>
  );
}
