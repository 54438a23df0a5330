// Credentials for a run: a checkbox per credential the caller may use (ssh keys, become and vault passwords, env).
import { useId } from 'react';
import { Link } from 'wouter';
import { asApiError, FieldMessages } from '../../ui/forms';
import { useCredentials } from './lookups';

/** The credential types a run accepts (others belong to projects and inventory sources). */
const RUN_TYPES = new Set(['ssh_key', 'become_password', 'vault_password', 'env']);

export function CredentialChoice({
  selected,
  onChange,
  error,
}: {
  selected: string[];
  onChange(ids: string[]): void;
  error: unknown;
}) {
  const credentials = useCredentials();
  const errId = useId();
  const usable = credentials.full.filter((c) => RUN_TYPES.has(c.type));
  const messages = asApiError(error)?.fieldErrors('credential_ids') ?? [];
  const toggle = (id: string, on: boolean) => onChange(on ? [...selected, id] : selected.filter((s) => s !== id));
  return (
    <fieldset
      className={`credential-choice${messages.length ? ' field-invalid' : ''}`}
      data-field="credential_ids"
      aria-describedby={messages.length ? errId : undefined}
    >
      <legend>Credentials</legend>
      {credentials.isLoading ? (
        <span className="muted">Loading credentials…</span>
      ) : usable.length === 0 ? (
        <span className="hint">
          No credentials you may use. Runs on local hosts need none; add an SSH key under{' '}
          <Link href="/credentials">Credentials</Link>.
        </span>
      ) : (
        <div className="checks">
          {usable.map((c) => (
            <label key={c.id} className="check-label">
              <input
                type="checkbox"
                checked={selected.includes(c.id)}
                onChange={(e) => toggle(c.id, e.target.checked)}
              />
              {c.name} <span className="muted">({c.type.replaceAll('_', ' ')})</span>
            </label>
          ))}
        </div>
      )}
      <FieldMessages id={errId} messages={messages} />
    </fieldset>
  );
}
