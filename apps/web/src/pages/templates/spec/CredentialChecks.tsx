// Credentials picked by checkbox from those the caller may see.
import { FieldGroup } from './FieldGroup';
import { useCredentialNames } from './lookups';

export function CredentialChecks({
  name,
  error,
  value,
  onChange,
}: {
  name: string;
  error: unknown;
  value: string[];
  onChange(ids: string[]): void;
}) {
  const credentials = useCredentialNames();
  const known = new Set(credentials.items.map((c) => c.id));
  // Ids the list does not show (not visible to the caller, or beyond the first page) stay selected.
  const others = value.filter((id) => !known.has(id));
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, id] : value.filter((v) => v !== id));
  return (
    <FieldGroup legend="Credentials" name={name} error={error}>
      {credentials.items.length === 0 && others.length === 0 ? (
        <span className="muted">No credentials you may use.</span>
      ) : null}
      <div className="check-list">
        {[...credentials.items, ...others.map((id) => ({ id, name: id }))].map((c) => (
          <label key={c.id}>
            <input type="checkbox" checked={value.includes(c.id)} onChange={(e) => toggle(c.id, e.target.checked)} />{' '}
            {c.name}
          </label>
        ))}
      </div>
    </FieldGroup>
  );
}
