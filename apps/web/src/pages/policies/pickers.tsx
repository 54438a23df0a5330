// Choosing several objects (projects, templates, inventories, users, teams) from the API's paged lists.
import { qs } from '../../api/client';
import { usePagedList } from '../../api/hooks';
import { Field, FieldMessages } from '../../ui/forms';

interface Named {
  id: string;
  name?: string;
  username?: string;
}

/** A MultiPicker as a labelled field, with the API's messages for `name` next to it. */
export function PickerField({
  label,
  name,
  error,
  hint,
  ...picker
}: {
  label: string;
  name: string;
  error: unknown;
  hint?: string | undefined;
} & Omit<Parameters<typeof MultiPicker>[0], 'controlProps'>) {
  return (
    <Field label={label} name={name} error={error} hint={hint}>
      {(p) => <MultiPicker {...picker} controlProps={p} />}
    </Field>
  );
}

/**
 * A multiple select over `/v1/<collection>`; ids already chosen but not (yet) loaded stay listed by id, so editing
 * never drops them. `controlProps` from <Field>.
 */
export function MultiPicker({
  collection,
  value,
  onChange,
  controlProps,
}: {
  collection: 'projects' | 'templates' | 'inventories' | 'users' | 'teams';
  value: string[];
  onChange(ids: string[]): void;
  controlProps: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string };
}) {
  const list = usePagedList<Named>(`/v1/${collection}${qs({ limit: 200 })}`);
  const loaded = new Set(list.items.map((o) => o.id));
  const options = [
    ...list.items.map((o) => ({ id: o.id, label: o.name ?? o.username ?? o.id })),
    ...value.filter((id) => !loaded.has(id)).map((id) => ({ id, label: id })),
  ];
  return (
    <>
      <select
        {...controlProps}
        multiple
        size={Math.min(6, Math.max(3, options.length))}
        value={value}
        onChange={(e) => onChange(Array.from(e.target.selectedOptions, (o) => o.value))}
      >
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.label}
          </option>
        ))}
      </select>
      {list.hasMore ? (
        <button type="button" className="btn btn-small" onClick={list.loadMore} disabled={list.loadingMore}>
          Load more {collection}
        </button>
      ) : null}
      {list.error ? (
        <span className="field-errors">
          Could not load {collection}: {list.error.message}
        </span>
      ) : null}
    </>
  );
}

/** A group of checkboxes over fixed words (origins, roles). */
export function CheckboxGroup<T extends string>({
  legend,
  options,
  value,
  onChange,
  errors,
}: {
  legend: string;
  options: readonly T[];
  value: T[];
  onChange(next: T[]): void;
  errors: string[];
}) {
  return (
    <fieldset className={`checkbox-group${errors.length ? ' field-invalid' : ''}`}>
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o}>
          <input
            type="checkbox"
            checked={value.includes(o)}
            onChange={(e) => onChange(e.target.checked ? [...value, o] : value.filter((v) => v !== o))}
          />{' '}
          {o}
        </label>
      ))}
      <FieldMessages messages={errors} />
    </fieldset>
  );
}
