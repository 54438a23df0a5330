// The fields a template lets its launcher override, each with the API's messages at `<prefix><field>`. Empty means
// "as the template says".
import type { OverridableField } from '@baton/contracts';
import { Field } from '../../../ui/forms';
import { CredentialChecks } from '../spec/CredentialChecks';
import { InventorySelect, LabelsInput, NumberInput, TextInput, VarsInput } from '../spec/SpecInputs';
import { compact, optionalNumber, parseVars, parseWords } from '../spec/vars';

export interface OverrideDraft {
  limit: string;
  extra_vars: string;
  inventory_id: string;
  credential_ids: string[] | null;
  /** '' as the template says, 'true' or 'false' */
  check: string;
  verbosity: string;
  labels: string;
  shards: string;
  ref: string;
}

export const emptyOverrides = (): OverrideDraft => ({
  limit: '',
  extra_vars: '',
  inventory_id: '',
  credential_ids: null,
  check: '',
  verbosity: '',
  labels: '',
  shards: '',
  ref: '',
});

/** The overrides to send (only what was given), and a local problem with the vars if they do not parse. */
export function overridesFrom(d: OverrideDraft): { overrides: Record<string, unknown>; varsError?: string } {
  const vars = parseVars(d.extra_vars);
  const labels = parseWords(d.labels);
  return {
    overrides: compact({
      limit: d.limit.trim() || undefined,
      extra_vars: vars.ok ? vars.vars : undefined,
      inventory_id: d.inventory_id || undefined,
      credential_ids: d.credential_ids ?? undefined,
      check: d.check === '' ? undefined : d.check === 'true',
      verbosity: optionalNumber(d.verbosity),
      labels: labels.length ? labels : undefined,
      shards: optionalNumber(d.shards),
      ref: d.ref.trim() || undefined,
    }),
    varsError: vars.ok ? undefined : vars.error,
  };
}

export function OverrideFields({
  allowed,
  draft,
  onChange,
  prefix,
  error,
  varsError,
}: {
  allowed: OverridableField[];
  draft: OverrideDraft;
  onChange(patch: Partial<OverrideDraft>): void;
  prefix: string;
  error: unknown;
  varsError?: string;
}) {
  const on = (f: OverridableField) => allowed.includes(f);
  const n = (f: string) => `${prefix}${f}`;
  const hint = 'Empty: as the template says.';
  return (
    <div className="override-fields">
      <div className="spec-row">
        {on('limit') ? (
          <TextInput
            label="Limit"
            name={n('limit')}
            error={error}
            hint={hint}
            mono
            value={draft.limit}
            onChange={(limit) => onChange({ limit })}
          />
        ) : null}
        {on('ref') ? (
          <TextInput
            label="Ref"
            name={n('ref')}
            error={error}
            hint={hint}
            mono
            value={draft.ref}
            onChange={(ref) => onChange({ ref })}
          />
        ) : null}
        {on('inventory_id') ? (
          <InventorySelect
            label="Inventory"
            name={n('inventory_id')}
            error={error}
            none="as the template says"
            value={draft.inventory_id}
            onChange={(inventory_id) => onChange({ inventory_id })}
          />
        ) : null}
        {on('check') ? (
          <Field label="Check mode" name={n('check')} error={error}>
            {(p) => (
              <select {...p} value={draft.check} onChange={(e) => onChange({ check: e.target.value })}>
                <option value="">as the template says</option>
                <option value="true">on (dry run)</option>
                <option value="false">off</option>
              </select>
            )}
          </Field>
        ) : null}
        {on('verbosity') ? (
          <NumberInput
            label="Verbosity (0–4)"
            name={n('verbosity')}
            error={error}
            hint={hint}
            min={0}
            max={4}
            value={draft.verbosity}
            onChange={(verbosity) => onChange({ verbosity })}
          />
        ) : null}
        {on('shards') ? (
          <NumberInput
            label="Shards"
            name={n('shards')}
            error={error}
            hint={hint}
            min={0}
            value={draft.shards}
            onChange={(shards) => onChange({ shards })}
          />
        ) : null}
        {on('labels') ? (
          <LabelsInput
            name={n('labels')}
            error={error}
            hint={hint}
            value={draft.labels}
            onChange={(labels) => onChange({ labels })}
          />
        ) : null}
      </div>
      {on('extra_vars') ? (
        <VarsInput
          name={n('extra_vars')}
          error={error}
          hint={hint}
          localErrors={varsError ? [varsError] : []}
          value={draft.extra_vars}
          onChange={(extra_vars) => onChange({ extra_vars })}
        />
      ) : null}
      {on('credential_ids') ? (
        <>
          <label className="check-row">
            <input
              type="checkbox"
              checked={draft.credential_ids !== null}
              onChange={(e) => onChange({ credential_ids: e.target.checked ? [] : null })}
            />{' '}
            Use other credentials than the template's
          </label>
          {draft.credential_ids !== null ? (
            <CredentialChecks
              name={n('credential_ids')}
              error={error}
              value={draft.credential_ids}
              onChange={(credential_ids) => onChange({ credential_ids })}
            />
          ) : null}
        </>
      ) : null}
    </div>
  );
}
