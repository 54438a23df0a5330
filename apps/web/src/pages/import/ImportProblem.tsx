// Why an import was refused, in the API's own words: a document the server could not read names the place in the
// document where it stopped (its first problem), and every refusal says that nothing was written.
import { asApiError, ErrorBanner, FormError } from '../../ui/forms';
import { MAX_IMPORT_BYTES, humanSize } from './import-document';

/** A problem path as a place in the document: `body.templates.2.name` → `templates.2.name`. */
export function documentPath(path: string): string {
  if (path === 'body') return '(the whole document)';
  return path.replace(/^body\./, '');
}

export function ImportProblem({ error }: { error: unknown }) {
  const api = asApiError(error);
  if (!api) return <FormError error={error} />;
  const { problem } = api;
  switch (api.status) {
    case 400: {
      const errors = problem.errors ?? [];
      const first = errors[0];
      return (
        <ErrorBanner title="The document cannot be imported">
          {problem.detail ? <p>{problem.detail}</p> : null}
          {first ? (
            <p data-testid="import-problem">
              First problem at <code data-testid="import-problem-path">{documentPath(first.path)}</code>:{' '}
              {first.message}
              {errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}
            </p>
          ) : null}
          <p>Nothing was written.</p>
        </ErrorBanner>
      );
    }
    case 403:
      return (
        <ErrorBanner title="Not allowed">
          <p>Only admins import.{problem.detail ? ` ${problem.detail}` : ''}</p>
        </ErrorBanner>
      );
    case 413:
      return (
        <ErrorBanner title="Too large">
          <p>The server accepts documents of at most {humanSize(MAX_IMPORT_BYTES)}. Nothing was written.</p>
        </ErrorBanner>
      );
    default:
      return <FormError error={error} />;
  }
}
