// Webhook triggers: a forge's push launches a target, of exactly the pushed commit.
import type { Trigger } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { useTemplateList } from '../templates/spec/lookups';
import { targetWords } from '../templates/spec/SpecSummary';
import { filterWords } from './filters';
import '../templates/spec/launch.css';

export default function TriggersPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<Trigger>('/v1/triggers');
  const templates = useTemplateList(list.items.some((t) => t.target.template_id));
  return (
    <>
      <PageHeader
        title="Triggers"
        subtitle="Webhooks for GitHub, Gitea and GitLab: a push runs the pushed commit."
        actions={
          canCreate ? (
            <Link href="/triggers/new" className="btn btn-primary">
              New trigger
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading triggers"
        caption="Triggers"
        empty={
          <EmptyState title="No triggers yet">
            {canCreate
              ? 'Create one with “New trigger”, then add its hook URL and secret to your repository’s webhooks.'
              : 'Ask an operator to create a trigger, or to grant you access to one.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Starts</th>
            <th scope="col">Fires on</th>
            <th scope="col">Signature</th>
            <th scope="col">Last delivery</th>
          </>
        }
        row={(t) => (
          <tr key={t.id}>
            <td>
              <Link href={`/triggers/${t.id}`}>{t.name}</Link>
            </td>
            <td>{targetWords(t.target, templates.nameOf)}</td>
            <td>{filterWords(t.filters)}</td>
            <td>{t.require_signature ? 'required' : 'not required'}</td>
            <td>
              <Time at={t.last_delivery_at} empty="never" />
            </td>
          </tr>
        )}
      />
    </>
  );
}
