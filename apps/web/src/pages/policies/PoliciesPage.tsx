// Approval policies: enabled ones hold every run they match until enough approvers say yes. Admins edit them,
// operators read them, viewers are told the page is not for them (the API answers 403).
import type { Policy } from '@baton/contracts';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { useApiMutation, usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { ConfirmButton } from '../../ui/Confirm';
import { FormError } from '../../ui/forms';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { ApproversSummary, EnabledBadge, expiryWords, MatchSummary } from './PolicySummary';
import './policies.css';

export default function PoliciesPage() {
  const isAdmin = useHasRole('admin');
  const policies = usePagedList<Policy>(`/v1/policies${qs({ limit: 50 })}`);
  const remove = useApiMutation<string, void>('DELETE', (id) => `/v1/policies/${id}`, { invalidate: ['/v1/policies'] });
  return (
    <>
      <PageHeader
        title="Policies"
        subtitle="Approval policies hold matching runs until enough approvers say yes."
        actions={
          isAdmin ? (
            <Link href="/policies/new" className="btn btn-primary">
              New policy
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={policies}
        what="Loading policies"
        empty={
          <EmptyState title="No approval policies">
            {isAdmin
              ? 'Runs start as soon as they are submitted. Create a policy to hold, say, production inventories for approval.'
              : 'Runs start as soon as they are submitted; an admin can create approval policies.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">State</th>
            <th scope="col">Holds</th>
            <th scope="col">Approvers</th>
            <th scope="col" className="num">
              Approvals
            </th>
            <th scope="col">Expires</th>
            <th scope="col">Updated</th>
            {isAdmin ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </>
        }
        row={(p) => (
          <tr key={p.id} data-policy={p.id}>
            <td>
              <Link href={`/policies/${p.id}`}>{p.name}</Link>
            </td>
            <td>
              <EnabledBadge enabled={p.enabled} />
            </td>
            <td>
              <MatchSummary policy={p} />
            </td>
            <td>
              <ApproversSummary policy={p} />
            </td>
            <td className="num">{p.min_approvals}</td>
            <td>{expiryWords(p.expires_after_s)}</td>
            <td>
              <Time at={p.updated_at} />
            </td>
            {isAdmin ? (
              <td>
                <div className="form-actions">
                  <ToggleEnabled policy={p} />
                  <ConfirmButton
                    question={`Delete the policy ${p.name}?`}
                    detail={<p>Runs it already holds stay held until decided or expired.</p>}
                    onConfirm={() => remove.mutate(p.id)}
                    disabled={remove.isPending}
                  >
                    Delete
                  </ConfirmButton>
                </div>
              </td>
            ) : null}
          </tr>
        )}
      />
      <FormError error={remove.error} />
    </>
  );
}

/** Enable or disable in one click (a PUT of `enabled` alone); its error shows next to it. */
export function ToggleEnabled({ policy }: { policy: Policy }) {
  const toggle = useApiMutation<{ enabled: boolean }, Policy>('PUT', `/v1/policies/${policy.id}`, {
    invalidate: ['/v1/policies'],
  });
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        onClick={() => toggle.mutate({ enabled: !policy.enabled })}
        disabled={toggle.isPending}
        aria-label={`${policy.enabled ? 'Disable' : 'Enable'} ${policy.name}`}
      >
        {policy.enabled ? 'Disable' : 'Enable'}
      </button>
      <FormError error={toggle.error} />
    </>
  );
}
