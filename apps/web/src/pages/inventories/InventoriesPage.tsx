// Inventories: the stored host lists runs target.
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import type { InventorySummary } from '../projects/types';
import '../projects/inputs.css';

export default function InventoriesPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<InventorySummary>('/v1/inventories');
  return (
    <>
      <PageHeader
        title="Inventories"
        subtitle="Hosts and groups that runs target, in INI, YAML or JSON."
        actions={
          canCreate ? (
            <Link href="/inventories/new" className="btn btn-primary">
              New inventory
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading inventories"
        caption="Inventories"
        empty={
          <EmptyState title="No inventories yet">
            {canCreate
              ? 'Create one with “New inventory” (paste INI, YAML or JSON), or fill one from an inventory source.'
              : 'Ask an operator to create an inventory, or to grant you access to one.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Format</th>
            <th scope="col" className="num">
              Hosts
            </th>
            <th scope="col">Groups</th>
            <th scope="col">Updated</th>
          </>
        }
        row={(inv) => (
          <tr key={inv.id}>
            <td>
              <Link href={`/inventories/${inv.id}`}>{inv.name}</Link>
            </td>
            <td>{inv.format.toUpperCase()}</td>
            <td className="num">{inv.host_count}</td>
            <td>
              {inv.groups
                .map((g) => g.name)
                .filter((g) => g !== 'all' && g !== 'ungrouped')
                .join(', ') || <span className="muted">—</span>}
            </td>
            <td>
              <Time at={inv.updated_at} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
