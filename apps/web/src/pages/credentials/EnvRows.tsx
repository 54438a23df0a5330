// The variables of an env credential: NAME = value rows. Values are secret: on edit only the names are known.
import { useId } from 'react';
import { asApiError, FieldMessages } from '../../ui/forms';

export interface EnvRow {
  name: string;
  value: string;
}

interface EnvRowsProps {
  rows: EnvRow[];
  onChange(rows: EnvRow[]): void;
  editing: boolean;
  error: unknown;
  localError?: string | undefined;
}

export function EnvRows({ rows, onChange, editing, error, localError }: EnvRowsProps) {
  const id = useId();
  const messages = [...(localError ? [localError] : []), ...(asApiError(error)?.fieldErrors('inputs.variables') ?? [])];
  const set = (i: number, patch: Partial<EnvRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset
      className={`field${messages.length ? ' field-invalid' : ''}`}
      data-field="inputs.variables"
      aria-describedby={`${id}-hint${messages.length ? ` ${id}-err` : ''}`}
    >
      <legend>Variables</legend>
      <div className="hint" id={`${id}-hint`}>
        {editing
          ? 'Stored values are never shown. Leave every value blank to keep the variables as they are; changing any name, adding or removing one replaces the whole set, so type every value again.'
          : 'Names are letters, digits and _ (not starting with a digit); values are secret.'}
      </div>
      <div className="env-rows">
        {rows.map((r, i) => (
          <div className="env-row" key={i}>
            <div className="field">
              <label htmlFor={`${id}-n${i}`}>Variable {i + 1} name</label>
              <input
                id={`${id}-n${i}`}
                className="mono"
                value={r.name}
                onChange={(e) => set(i, { name: e.target.value })}
                autoComplete="off"
                spellCheck={false}
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-v${i}`}>Variable {i + 1} value</label>
              <input
                id={`${id}-v${i}`}
                type="password"
                value={r.value}
                placeholder={editing && r.name ? '(stored: leave blank to keep)' : undefined}
                onChange={(e) => set(i, { value: e.target.value })}
                autoComplete="new-password"
              />
            </div>
            <button
              type="button"
              className="btn btn-small"
              aria-label={`Remove variable ${i + 1}${r.name ? ` (${r.name})` : ''}`}
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
              disabled={rows.length === 1}
            >
              Remove
            </button>
          </div>
        ))}
      </div>
      <div>
        <button type="button" className="btn btn-small" onClick={() => onChange([...rows, { name: '', value: '' }])}>
          Add variable
        </button>
      </div>
      <FieldMessages id={`${id}-err`} messages={messages} />
    </fieldset>
  );
}
