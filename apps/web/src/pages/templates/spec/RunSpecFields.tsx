// The fields of a run spec: playbook (inline or a project's path at a ref), inventory, credentials, vars, limit,
// check mode, shards, labels and the rest. Used by templates, pipeline steps, schedules and triggers; `prefix` is
// where the fields sit in the request body (`spec.`, `steps.0.`, `target.run.`), so the API's messages land here.
import type { RunIf } from '@baton/contracts';
import { useId } from 'react';
import { Field } from '../../../ui/forms';
import { CredentialChecks } from './CredentialChecks';
import { useProjectNames } from './lookups';
import { type InventoryMode, type LocalErrors, PLAYBOOK_EXAMPLE, type RunDraft } from './runDraft';
import { InventoryFields, LabelsInput, NumberInput, TextInput, VarsInput } from './SpecInputs';
import './launch.css';

interface Props {
  draft: RunDraft;
  onChange(patch: Partial<RunDraft>): void;
  prefix: string;
  error: unknown;
  localErrors?: LocalErrors;
  /** a pipeline step: a name, run_if, and the pipeline's inventory to inherit */
  step?: boolean;
}

/** The inventory modes of a run (a pipeline step also offers the pipeline's, first). */
export const INVENTORY_MODES: ReadonlyArray<readonly [InventoryMode, string]> = [
  ['stored', 'A stored inventory'],
  ['inline', 'Inline content'],
];

const RUN_IF_WORDS: Record<RunIf, string> = {
  success: 'every earlier step that ran succeeded (default)',
  failure: 'an earlier step failed (clean-up, rollback)',
  always: 'always',
};

export function RunSpecFields({ draft, onChange, prefix, error, localErrors = {}, step = false }: Props) {
  const projects = useProjectNames();
  const f = (name: string) => `${prefix}${name}`;
  const group = useId();
  return (
    <div className="spec-fields">
      {step ? (
        <div className="spec-row">
          <TextInput
            label="Step name"
            name={f('name')}
            error={error}
            hint="Optional; shown on the pipeline's run page."
            value={draft.name}
            onChange={(name) => onChange({ name })}
          />
          <Field label="Runs when" name={f('run_if')} error={error}>
            {(p) => (
              <select {...p} value={draft.run_if} onChange={(e) => onChange({ run_if: e.target.value as RunIf })}>
                {(Object.keys(RUN_IF_WORDS) as RunIf[]).map((k) => (
                  <option key={k} value={k}>
                    {RUN_IF_WORDS[k]}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
      ) : null}

      <fieldset className="choice-row">
        <legend>Playbook source</legend>
        <label>
          <input
            type="radio"
            name={`${group}-source`}
            checked={draft.source === 'inline'}
            onChange={() => onChange({ source: 'inline' })}
          />{' '}
          Inline playbook
        </label>
        <label>
          <input
            type="radio"
            name={`${group}-source`}
            checked={draft.source === 'project'}
            onChange={() => onChange({ source: 'project' })}
          />{' '}
          A project's playbook
        </label>
      </fieldset>

      {draft.source === 'inline' ? (
        <Field label="Playbook (YAML)" name={f('playbook')} error={error}>
          {(p) => (
            <textarea
              {...p}
              className="mono"
              rows={7}
              spellCheck={false}
              placeholder={PLAYBOOK_EXAMPLE}
              value={draft.playbook}
              onChange={(e) => onChange({ playbook: e.target.value })}
            />
          )}
        </Field>
      ) : (
        <div className="spec-row">
          <Field label="Project" name={f('project_id')} error={error}>
            {(p) => (
              <select {...p} value={draft.project_id} onChange={(e) => onChange({ project_id: e.target.value })}>
                <option value="">— pick a project —</option>
                {projects.items.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <TextInput
            label="Playbook path"
            name={f('playbook')}
            error={error}
            hint="Relative to the repository root."
            mono
            placeholder="site.yml"
            value={draft.playbook}
            onChange={(playbook) => onChange({ playbook })}
          />
          <TextInput
            label="Ref"
            name={f('ref')}
            error={error}
            hint="Branch, tag or commit; empty: the project's branch head."
            mono
            value={draft.ref}
            onChange={(ref) => onChange({ ref })}
          />
        </div>
      )}

      <InventoryFields
        draft={draft}
        onChange={onChange}
        modes={step ? [['inherit', "The pipeline's"], ...INVENTORY_MODES] : INVENTORY_MODES}
        prefix={prefix}
        error={error}
        placeholder={'[web]\nweb1.example.com'}
      />

      <CredentialChecks
        name={f('credential_ids')}
        error={error}
        value={draft.credential_ids}
        onChange={(credential_ids) => onChange({ credential_ids })}
      />

      <VarsInput
        name={f('extra_vars')}
        error={error}
        localErrors={localErrors.extra_vars}
        placeholder="region: eu"
        value={draft.vars}
        onChange={(vars) => onChange({ vars })}
      />

      <div className="spec-row">
        <TextInput
          label="Limit"
          name={f('limit')}
          error={error}
          hint="Ansible host pattern."
          mono
          value={draft.limit}
          onChange={(limit) => onChange({ limit })}
        />
        <NumberInput
          label="Shards"
          name={f('shards')}
          error={error}
          hint="2 or more splits the hosts."
          min={0}
          value={draft.shards}
          onChange={(shards) => onChange({ shards })}
        />
        <LabelsInput
          name={f('labels')}
          error={error}
          value={draft.labels}
          onChange={(labels) => onChange({ labels })}
        />
      </div>
      <div className="spec-row">
        <NumberInput
          label="Forks"
          name={f('forks')}
          error={error}
          min={1}
          value={draft.forks}
          onChange={(forks) => onChange({ forks })}
        />
        <NumberInput
          label="Verbosity (0–4)"
          name={f('verbosity')}
          error={error}
          min={0}
          max={4}
          value={draft.verbosity}
          onChange={(verbosity) => onChange({ verbosity })}
        />
        <NumberInput
          label="Timeout (seconds)"
          name={f('timeout_s')}
          error={error}
          min={1}
          value={draft.timeout_s}
          onChange={(timeout_s) => onChange({ timeout_s })}
        />
      </div>
      <label className="check-row">
        <input type="checkbox" checked={draft.check} onChange={(e) => onChange({ check: e.target.checked })} /> Check
        mode (dry run: --check --diff)
      </label>
    </div>
  );
}
