// Creating an approval policy (admins).
import type { Policy } from '@baton/contracts';
import { Link, useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { ErrorBanner } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { bodyOf, emptyDraft, type PolicyBody } from './policy-draft';
import { PolicyForm } from './PolicyForm';
import './policies.css';

export default function PolicyNewPage() {
  const isAdmin = useHasRole('admin');
  const [, navigate] = useLocation();
  const create = useApiMutation<PolicyBody, Policy>('POST', '/v1/policies', {
    invalidate: ['/v1/policies'],
    onSuccess: (p) => navigate(`/policies/${p.id}`),
  });
  return (
    <>
      <PageHeader
        title="New policy"
        subtitle={
          <>
            Approval policy · <Link href="/policies">all policies</Link>
          </>
        }
      />
      {isAdmin ? (
        <PolicyForm
          initial={emptyDraft}
          submitLabel="Create policy"
          pending={create.isPending}
          error={create.error}
          onSubmit={(d) => create.mutate(bodyOf(d, 'create'))}
          onCancel={() => navigate('/policies')}
        />
      ) : (
        <ErrorBanner title="Not available to you">
          <p>Only admins create approval policies.</p>
        </ErrorBanner>
      )}
    </>
  );
}
