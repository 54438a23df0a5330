// One approval policy: admins edit it (or enable, disable, delete it); operators read it.
import type { Policy } from '@baton/contracts';
import { useState } from 'react';
import { Link, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { FormError } from '../../ui/forms';
import { Details, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { ToggleEnabled } from './PoliciesPage';
import { bodyOf, draftOf, type PolicyBody } from './policy-draft';
import { PolicyForm } from './PolicyForm';
import { ApproversSummary, EnabledBadge, expiryWords, MatchSummary } from './PolicySummary';
import { SubjectName } from '../../ui/AccessPanel';
import './policies.css';

export default function PolicyPage() {
  const { id } = useParams<{ id: string }>();
  const isAdmin = useHasRole('admin');
  const [editing, setEditing] = useState(false);
  const policy = useApi<Policy>(`/v1/policies/${id}`);
  const update = useApiMutation<PolicyBody, Policy>('PUT', `/v1/policies/${id}`, {
    invalidate: ['/v1/policies'],
    onSuccess: () => setEditing(false),
  });
  const remove = useDeleteObject('policies', id);

  if (policy.error || !policy.data) return <NotLoaded error={policy.error} what="Loading policy" />;
  const p = policy.data;
  return (
    <>
      <PageHeader
        title={p.name}
        subtitle={
          <>
            Approval policy · <Link href="/policies">all policies</Link>
          </>
        }
        actions={
          isAdmin && !editing ? (
            <>
              <button type="button" className="btn" onClick={() => setEditing(true)}>
                Edit
              </button>
              <ToggleEnabled policy={p} />
              <DeleteButton
                remove={remove}
                question={`Delete the policy ${p.name}?`}
                detail={<p>Runs it already holds stay held until decided or expired.</p>}
              />
            </>
          ) : null
        }
      />
      <FormError error={remove.error} />
      {editing ? (
        <PolicyForm
          key={p.updated_at}
          initial={draftOf(p)}
          submitLabel="Save policy"
          pending={update.isPending}
          error={update.error}
          onSubmit={(d) => update.mutate(bodyOf(d, 'update'))}
          onCancel={() => {
            update.reset();
            setEditing(false);
          }}
        />
      ) : (
        <Details
          items={[
            ['State', <EnabledBadge key="s" enabled={p.enabled} />],
            ['Description', p.description],
            ['Holds', <MatchSummary key="m" policy={p} />],
            ['Approvers', <ApproversSummary key="a" policy={p} />],
            ['Approvals needed', p.min_approvals],
            ['Held runs expire', expiryWords(p.expires_after_s)],
            ['Created', <Time key="c" at={p.created_at} />],
            ['Created by', <SubjectName key="by" id={p.created_by} showKind={false} />],
            ['Updated', <Time key="u" at={p.updated_at} />],
            ['ID', <code key="id">{p.id}</code>],
          ]}
        />
      )}
    </>
  );
}
