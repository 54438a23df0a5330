// Form building blocks: every field shows the API's problem+json messages for its path next to it.
import { type ReactNode, useId } from 'react';
import { ApiError } from '../api/client';

/** The error of a mutation or query, when it is an API problem. */
export function asApiError(err: unknown): ApiError | null {
  return err instanceof ApiError ? err : null;
}

interface FieldProps {
  label: string;
  /** the field's path in the request body (`name`, `survey_answers.region`…), to pick its problem messages */
  name: string;
  error?: unknown;
  hint?: ReactNode;
  /** messages found in the browser before sending */
  localErrors?: string[];
  children: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ReactNode;
}

/** A labelled control with its hint and its error messages, linked for screen readers. */
export function Field({ label, name, error, hint, localErrors = [], children }: FieldProps) {
  const id = useId();
  const messages = [...localErrors, ...(asApiError(error)?.fieldErrors(name) ?? [])];
  const hintId = hint ? `${id}-hint` : undefined;
  const errId = messages.length ? `${id}-err` : undefined;
  const describedBy = [hintId, errId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${messages.length ? ' field-invalid' : ''}`} data-field={name}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': messages.length > 0, 'aria-describedby': describedBy })}
      {hint ? (
        <div className="hint" id={hintId}>
          {hint}
        </div>
      ) : null}
      <FieldMessages id={errId} messages={messages} />
    </div>
  );
}

/** A field's error messages, announced as they appear (nothing when there are none). */
export function FieldMessages({ id, messages }: { id?: string; messages: string[] }) {
  if (!messages.length) return null;
  // role=alert on the <ul> itself would strip its list semantics (axe: listitem), so it wraps the list.
  return (
    <div id={id} role="alert">
      <ul className="field-errors">
        {messages.map((m, i) => (
          <li key={i}>{m}</li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The problem's title and detail, plus the messages whose paths no field on the form claims (so nothing the server
 * said is hidden). `fields`: the names the form's <Field>s use.
 */
export function FormError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  const api = asApiError(error);
  if (!api) return <ErrorBanner>{String((error as Error).message ?? error)}</ErrorBanner>;
  const unclaimed = (api.problem.errors ?? []).filter((e) => {
    const path = e.path.replace(/^(body|query)\./, '');
    return !fields.some((f) => path === f || path.startsWith(`${f}.`) || path.startsWith(`${f}[`));
  });
  return (
    <ErrorBanner title={api.problem.title}>
      {api.problem.detail ? <p>{api.problem.detail}</p> : null}
      {unclaimed.length ? (
        <ul>
          {unclaimed.map((e, i) => (
            <li key={i}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </ErrorBanner>
  );
}

export function ErrorBanner({ title, children }: { title?: string; children?: ReactNode }) {
  return (
    <div className="banner banner-error" role="alert">
      {title ? <strong>{title}</strong> : null}
      {children}
    </div>
  );
}

/** A query's error as a page-level banner (404s say the object is gone or not visible). */
export function LoadError({ error }: { error: unknown }) {
  const api = asApiError(error);
  if (api?.status === 404)
    return <ErrorBanner title="Not found">It does not exist, or you do not have access to it.</ErrorBanner>;
  if (api?.status === 403)
    return (
      <ErrorBanner title="Not available to you">
        <p>Your role or grants do not allow this{api.problem.detail ? `: ${api.problem.detail}` : '.'}</p>
      </ErrorBanner>
    );
  return <FormError error={error} />;
}

/** The row of a form's buttons. */
export function SubmitRow({ children }: { children: ReactNode }) {
  return <div className="form-actions">{children}</div>;
}
