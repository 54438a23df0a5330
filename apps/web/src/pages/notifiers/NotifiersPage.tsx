// Notifiers: who hears about runs, schedules and workers, and how.
import type { Notifier } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { KIND_LABELS } from './events';

export default function NotifiersPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<Notifier>('/v1/notifiers');
  return (
    <>
      <PageHeader
        title="Notifications"
        subtitle="Webhooks, chat and e-mail told when runs start, finish, fail or wait for approval."
        actions={
          canCreate ? (
            <Link href="/notifiers/new" className="btn btn-primary">
              New notifier
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading notifiers"
        caption="Notifiers"
        empty={
          <EmptyState title="No notifiers yet">
            {canCreate ? 'Create one with “New notifier”.' : 'Ask an operator to create one, or to grant you access.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Events</th>
            <th scope="col">Updated</th>
          </>
        }
        row={(n) => (
          <tr key={n.id}>
            <td>
              <Link href={`/notifiers/${n.id}`}>{n.name}</Link>
            </td>
            <td>{KIND_LABELS[n.kind] ?? n.kind}</td>
            <td className="mono">{n.events.join(', ')}</td>
            <td>
              <Time at={n.updated_at} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
