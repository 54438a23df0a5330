// Field blocks the run spec, pipeline and override forms share. Each shows the API's messages for its `name` (the
// field's path in the request body) next to it.
import { type ReactNode, useId } from 'react';
import { Field } from '../../../ui/forms';
import { useInventoryNames } from './lookups';
import type { InventoryMode, RunDraft } from './runDraft';

interface InputProps {
  label: string;
  name: string;
  error: unknown;
  hint?: ReactNode;
  value: string;
  onChange(value: string): void;
}

export function TextInput({
  mono,
  placeholder,
  value,
  onChange,
  ...field
}: InputProps & { mono?: boolean; placeholder?: string }) {
  return (
    <Field {...field}>
      {(p) => (
        <input
          {...p}
          className={mono ? 'mono' : undefined}
          placeholder={placeholder}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/** A number typed as text: what was typed goes to the API, which says what is wrong with it. */
export function NumberInput({ min, max, value, onChange, ...field }: InputProps & { min?: number; max?: number }) {
  return (
    <Field {...field}>
      {(p) => (
        <input {...p} type="number" min={min} max={max} value={value} onChange={(e) => onChange(e.target.value)} />
      )}
    </Field>
  );
}

export function VarsInput({
  localErrors,
  placeholder,
  value,
  onChange,
  ...field
}: Omit<InputProps, 'label'> & { localErrors?: string[]; placeholder?: string }) {
  return (
    <Field label="Extra vars (YAML or JSON)" localErrors={localErrors} {...field}>
      {(p) => (
        <textarea
          {...p}
          className="mono"
          rows={3}
          spellCheck={false}
          placeholder={placeholder}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

export function LabelsInput({ hint = 'Separated by commas.', ...props }: Omit<InputProps, 'label'>) {
  return <TextInput label="Worker labels" hint={hint} {...props} />;
}

/** The stored inventories the caller may see, in a select; `none` names the empty choice. */
export function InventorySelect({ label, none, value, onChange, ...field }: InputProps & { none: string }) {
  const inventories = useInventoryNames();
  return (
    <Field label={label} {...field}>
      {(p) => (
        <select {...p} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{none}</option>
          {inventories.items.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

type InventoryDraft = Pick<RunDraft, 'inventoryMode' | 'inventory_id' | 'inventory'>;

/** Where the hosts come from: the modes offered (in their order and words), then the chosen mode's field. */
export function InventoryFields({
  draft,
  onChange,
  modes,
  prefix,
  error,
  placeholder,
}: {
  draft: InventoryDraft;
  onChange(patch: Partial<InventoryDraft>): void;
  modes: ReadonlyArray<readonly [InventoryMode, string]>;
  prefix: string;
  error: unknown;
  placeholder?: string;
}) {
  const group = useId();
  return (
    <>
      <fieldset className="choice-row">
        <legend>Inventory</legend>
        {modes.map(([mode, words]) => (
          <label key={mode}>
            <input
              type="radio"
              name={`${group}-inventory`}
              checked={draft.inventoryMode === mode}
              onChange={() => onChange({ inventoryMode: mode })}
            />{' '}
            {words}
          </label>
        ))}
      </fieldset>
      {draft.inventoryMode === 'stored' ? (
        <InventorySelect
          label="Stored inventory"
          name={`${prefix}inventory_id`}
          error={error}
          none="— pick an inventory —"
          value={draft.inventory_id}
          onChange={(inventory_id) => onChange({ inventory_id })}
        />
      ) : draft.inventoryMode === 'inline' ? (
        <Field label="Inventory content (INI, YAML or JSON)" name={`${prefix}inventory`} error={error}>
          {(p) => (
            <textarea
              {...p}
              className="mono"
              rows={4}
              spellCheck={false}
              placeholder={placeholder}
              value={draft.inventory}
              onChange={(e) => onChange({ inventory: e.target.value })}
            />
          )}
        </Field>
      ) : null}
    </>
  );
}
