// How the AI helpers' failures read: the provider's failure with its status, the ask limit with when to ask again,
// a proposal's reasons, each in the API's own words (the server's problem detail).
import type { ReactNode } from 'react';
import { asApiError, ErrorBanner, FormError } from '../../ui/forms';

/** The problem+json extension of a 502 `ai-provider-error`: the provider's HTTP status, when it answered one. */
function providerStatus(problem: object): number | null {
  const v = (problem as { provider_status?: unknown }).provider_status;
  return typeof v === 'number' ? v : null;
}

/** The error of an AI call; `fields`: the form's field names (their messages show beside them instead). */
export function AiProblem({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  const api = asApiError(error);
  if (!api) return <FormError error={error} fields={fields} />;
  const { problem } = api;
  let title: string;
  let extra: ReactNode = null;
  switch (api.status) {
    case 502: {
      title = 'The AI provider failed';
      const status = providerStatus(problem);
      extra = (
        <p data-testid="provider-status">
          {status === null
            ? 'The provider gave no HTTP status (it was unreachable, too slow, or its answer was unusable).'
            : `The provider answered HTTP ${status}.`}{' '}
          Try again later, or ask an admin to check the AI settings.
        </p>
      );
      break;
    }
    case 429:
      title = 'Too many questions';
      break;
    case 503:
      title = 'No AI provider is configured';
      break;
    case 409:
      title = 'Not yet';
      break;
    case 422: {
      // A proposal the submission refused: each reason (paths name the proposal's fields, not this form's), and the
      // assurance that nothing was created. The detail repeats the first reason, so it shows only without them.
      title = 'The proposed run cannot be submitted';
      const reasons = problem.errors ?? [];
      extra = (
        <>
          {reasons.length ? (
            <ul data-testid="ai-reasons">
              {reasons.map((e, i) => {
                const field = e.path.replace(/^body\./, '');
                return (
                  <li key={i}>
                    {field && field !== 'proposal' && field !== 'body' ? (
                      <>
                        <code>{field}</code>:{' '}
                      </>
                    ) : null}
                    {e.message}
                  </li>
                );
              })}
            </ul>
          ) : null}
          <p>No run was created.</p>
        </>
      );
      if (reasons.length) return <ErrorBanner title={title}>{extra}</ErrorBanner>;
      break;
    }
    default:
      return <FormError error={error} fields={fields} />;
  }
  return (
    <ErrorBanner title={title}>
      {problem.detail ? <p>{problem.detail}</p> : null}
      {extra}
    </ErrorBanner>
  );
}
