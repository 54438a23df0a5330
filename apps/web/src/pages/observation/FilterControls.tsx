// Filter controls of the observation pages: each one rewrites its query parameter; a 400 for a bad value shows
// next to the control it came from (`query.<name>`).
import { useEffect, useState } from 'react';
import { Field } from '../../ui/forms';
import type { Named } from '../runs/lookups';
import type { useUrlFilters } from './filters';

interface Common {
  label: string;
  /** the query parameter */
  name: string;
  value: string | undefined;
  onChange(value: string): void;
  /** the list's error */
  error: unknown;
}

/** A select over named objects (projects, inventories); a bookmarked id not in the list still shows as chosen. */
export function NamedSelect({ items, ...p }: Common & { items: Named[] }) {
  const options = items.map((i) => ({ value: i.id, label: i.name }));
  if (p.value && !items.some((i) => i.id === p.value)) options.push({ value: p.value, label: p.value });
  return (
    <Field label={p.label} name={p.name} error={p.error}>
      {(a) => (
        <select {...a} value={p.value ?? ''} onChange={(e) => p.onChange(e.target.value)}>
          <option value="">Any</option>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** Typed values apply on Enter or when the field loses focus, not on every key. */
export function TextFilter({
  placeholder,
  type = 'search',
  min,
  max,
  ...p
}: Common & { placeholder?: string; type?: 'search' | 'number'; min?: number; max?: number }) {
  const current = p.value ?? '';
  const [text, setText] = useState(current);
  useEffect(() => setText(current), [current]);
  const apply = () => {
    if (text.trim() !== current) p.onChange(text.trim());
  };
  return (
    <Field label={p.label} name={p.name} error={p.error}>
      {(a) => (
        <input
          {...a}
          type={type}
          inputMode={type === 'number' ? 'numeric' : undefined}
          min={min}
          max={max}
          className={type === 'number' ? 'obs-number' : undefined}
          value={text}
          placeholder={placeholder}
          onChange={(e) => setText(e.target.value)}
          onBlur={apply}
          onKeyDown={(e) => {
            if (e.key === 'Enter') apply();
          }}
        />
      )}
    </Field>
  );
}

/** A yes/no filter: checked sets the parameter to `true`, unchecked removes it. */
export function CheckFilter({ label, name, value, onChange }: Omit<Common, 'error'>) {
  return (
    <div className="field obs-check" data-field={name}>
      <label>
        <input type="checkbox" checked={value === 'true'} onChange={(e) => onChange(e.target.checked ? 'true' : '')} />{' '}
        {label}
      </label>
    </div>
  );
}

export function ClearFilters({ shown, onClear }: { shown: boolean; onClear(): void }) {
  return shown ? (
    <button type="button" className="btn" onClick={onClear}>
      Clear filters
    </button>
  ) : null;
}

/** One control of a FilterBar, bound to the query parameter `name`. */
export type FilterField<K extends string> =
  | { kind: 'named'; name: K; label: string; items: Named[] }
  | {
      kind: 'text';
      name: K;
      label: string;
      placeholder?: string;
      type?: 'search' | 'number';
      min?: number;
      max?: number;
    }
  | { kind: 'check'; name: K; label: string };

/** The text filters several pages share. */
export const PLAYBOOK_FILTER = { kind: 'text', name: 'playbook', label: 'Playbook', placeholder: 'site.yml' } as const;
export const HOST_FILTER = { kind: 'text', name: 'host', label: 'Host', placeholder: 'host name' } as const;

/** A page's filters as a search form: each field reads and rewrites its parameter; a 400 shows beside its field. */
export function FilterBar<K extends string>({
  label,
  filters,
  fields,
  error,
}: {
  /** the form's accessible name ("Filter hosts") */
  label: string;
  filters: ReturnType<typeof useUrlFilters<K>>;
  fields: FilterField<K>[];
  /** the list's error */
  error: unknown;
}) {
  return (
    <form className="filters" role="search" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      {fields.map((field) => {
        const bound = {
          label: field.label,
          name: field.name,
          value: filters.values[field.name],
          onChange: (v: string) => filters.set(field.name, v),
        };
        if (field.kind === 'named')
          return <NamedSelect key={field.name} {...bound} items={field.items} error={error} />;
        if (field.kind === 'check') return <CheckFilter key={field.name} {...bound} />;
        const { kind: _kind, ...text } = field;
        return <TextFilter key={field.name} {...text} {...bound} error={error} />;
      })}
      <ClearFilters shown={filters.any} onClear={filters.clear} />
    </form>
  );
}
