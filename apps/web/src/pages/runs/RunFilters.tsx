// The history's filter controls: each change rewrites the address's query string, which the list reads.
import { useEffect, useState } from 'react';
import { useSearchParams } from 'wouter';
import { Field } from '../../ui/forms';
import { FILTER_KEYS, type FilterKey, readFilters, SINCE_PRESETS, withFilter, withoutFilters } from './filters';
import type { Named } from './lookups';

const STATUSES = ['pending', 'held', 'waiting', 'running', 'finished'];
const CONCLUSIONS = ['succeeded', 'failed', 'canceled', 'rejected', 'error'];
const ORIGINS = ['api', 'template', 'schedule', 'trigger', 'ai', 'reconcile', 'import'];

const words = (v: string) => ({ value: v, label: v });

interface Props {
  projects: Named[];
  templates: Named[];
  inventories: Named[];
  /** the list's error: a bad filter value is a 400 at `query.<name>`, shown next to its control */
  error: unknown;
}

export function RunFilters({ projects, templates, inventories, error }: Props) {
  const [params, setParams] = useSearchParams();
  const filters = readFilters(params);
  const set = (key: FilterKey, value: string) => setParams((prev) => withFilter(prev, key, value));
  const named = (items: Named[], current: string | undefined) => {
    const options = items.map((i) => ({ value: i.id, label: i.name }));
    // A bookmarked id outside the loaded page still shows as selected.
    if (current && !items.some((i) => i.id === current)) options.push({ value: current, label: current });
    return options;
  };
  const since = filters.since;
  const sinceOptions = SINCE_PRESETS.map((p) => ({ value: p.value, label: p.label }));
  if (since && !SINCE_PRESETS.some((p) => p.value === since)) sinceOptions.push({ value: since, label: since });

  return (
    <form className="filters" role="search" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
      <FilterSelect label="Status" name="status" options={STATUSES.map(words)} {...{ filters, set, error }} />
      <FilterSelect
        label="Conclusion"
        name="conclusion"
        options={CONCLUSIONS.map(words)}
        {...{ filters, set, error }}
      />
      <FilterSelect label="Origin" name="origin" options={ORIGINS.map(words)} {...{ filters, set, error }} />
      <FilterSelect
        label="Project"
        name="project"
        options={named(projects, filters.project)}
        {...{ filters, set, error }}
      />
      <FilterSelect
        label="Template"
        name="template"
        options={named(templates, filters.template)}
        {...{ filters, set, error }}
      />
      <FilterSelect
        label="Inventory"
        name="inventory"
        options={named(inventories, filters.inventory)}
        {...{ filters, set, error }}
      />
      <HostFilter value={filters.host ?? ''} onApply={(v) => set('host', v)} error={error} />
      <FilterSelect
        label="Since"
        name="since"
        anyLabel="Any time"
        options={sinceOptions}
        {...{ filters, set, error }}
      />
      {FILTER_KEYS.some((k) => filters[k]) ? (
        <button type="button" className="btn" onClick={() => setParams((prev) => withoutFilters(prev))}>
          Clear filters
        </button>
      ) : null}
    </form>
  );
}

function FilterSelect({
  label,
  name,
  options,
  anyLabel = 'Any',
  filters,
  set,
  error,
}: {
  label: string;
  name: FilterKey;
  options: Array<{ value: string; label: string }>;
  anyLabel?: string;
  filters: Record<string, string | undefined>;
  set(key: FilterKey, value: string): void;
  error: unknown;
}) {
  return (
    <Field label={label} name={name} error={error}>
      {(p) => (
        <select {...p} value={filters[name] ?? ''} onChange={(e) => set(name, e.target.value)}>
          <option value="">{anyLabel}</option>
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

/** Host names are typed: applied on Enter or when the field loses focus, not on every key. */
function HostFilter({ value, onApply, error }: { value: string; onApply(v: string): void; error: unknown }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const apply = () => {
    if (text.trim() !== value) onApply(text.trim());
  };
  return (
    <Field label="Host" name="host" error={error}>
      {(p) => (
        <input
          {...p}
          type="search"
          value={text}
          placeholder="host name"
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
