// What an AI page says instead of its form: the role it needs, or that no provider is configured (the nav hides
// these pages then; this is for a bookmark).
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { useHasRole } from '../../auth/auth';
import { EmptyState, Loading, PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { useAiStatus } from './useAiStatus';

/** `children` when the caller is an operator and a provider is configured. */
export function AiOperatorPage({ title, what, children }: { title: string; what: string; children: ReactNode }) {
  const isOperator = useHasRole('operator');
  const isAdmin = useHasRole('admin');
  const configured = useAiStatus();
  if (!isOperator)
    return (
      <NotAllowed title={title}>
        {what} needs the operator or admin role. <Link href="/runs">Back to runs</Link>
      </NotAllowed>
    );
  if (configured === null) return <Loading what="Checking the AI helpers" />;
  if (!configured)
    return (
      <>
        <PageHeader title={title} />
        <EmptyState title="The AI helpers are not configured">
          {isAdmin ? (
            <>
              Configure a provider in the <Link href="/settings/ai">AI settings</Link>.
            </>
          ) : (
            'An admin can configure an AI provider to turn them on.'
          )}
        </EmptyState>
      </>
    );
  return <>{children}</>;
}
