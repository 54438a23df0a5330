// The fields of a run spec: playbook (inline or a project's path at a ref), inventory, credentials, vars, limit,
// check mode, shards, labels and the rest. Used by templates, pipeline steps, schedules and triggers; `prefix` is
// where the fields sit in the request body (`spec.`, `steps.0.`, `target.run.`), so the API's messages land here.
import type { RunIf } from '@baton/contracts';
import { useId } from 'react';
import { Field } from '../../../ui/forms';
import { CredentialChecks } from './CredentialChecks';
import { useInventoryNames, useProjectNames } from './lookups';
import { type LocalErrors, PLAYBOOK_EXAMPLE, type RunDraft } from './runDraft';
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

const RUN_IF_WORDS: Record<RunIf, string> = {
  success: 'every earlier step that ran succeeded (default)',
  failure: 'an earlier step failed (clean-up, rollback)',
  always: 'always',
};

export function RunSpecFields({ draft, onChange, prefix, error, localErrors = {}, step = false }: Props) {
  const projects = useProjectNames();
  const inventories = useInventoryNames();
  const f = (name: string) => `${prefix}${name}`;
  const group = useId();
  return (
    <div className="spec-fields">
      {step ? (
        <div className="spec-row">
          <Field label="Step name" name={f('name')} error={error} hint="Optional; shown on the pipeline's run page.">
            {(p) => <input {...p} value={draft.name} onChange={(e) => onChange({ name: e.target.value })} />}
          </Field>
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
          <Field label="Playbook path" name={f('playbook')} error={error} hint="Relative to the repository root.">
            {(p) => (
              <input
                {...p}
                className="mono"
                placeholder="site.yml"
                value={draft.playbook}
                onChange={(e) => onChange({ playbook: e.target.value })}
              />
            )}
          </Field>
          <Field
            label="Ref"
            name={f('ref')}
            error={error}
            hint="Branch, tag or commit; empty: the project's branch head."
          >
            {(p) => (
              <input {...p} className="mono" value={draft.ref} onChange={(e) => onChange({ ref: e.target.value })} />
            )}
          </Field>
        </div>
      )}

      <fieldset className="choice-row">
        <legend>Inventory</legend>
        {step ? (
          <label>
            <input
              type="radio"
              name={`${group}-inventory`}
              checked={draft.inventoryMode === 'inherit'}
              onChange={() => onChange({ inventoryMode: 'inherit' })}
            />{' '}
            The pipeline's
          </label>
        ) : null}
        <label>
          <input
            type="radio"
            name={`${group}-inventory`}
            checked={draft.inventoryMode === 'stored'}
            onChange={() => onChange({ inventoryMode: 'stored' })}
          />{' '}
          A stored inventory
        </label>
        <label>
          <input
            type="radio"
            name={`${group}-inventory`}
            checked={draft.inventoryMode === 'inline'}
            onChange={() => onChange({ inventoryMode: 'inline' })}
          />{' '}
          Inline content
        </label>
      </fieldset>
      {draft.inventoryMode === 'stored' ? (
        <Field label="Stored inventory" name={f('inventory_id')} error={error}>
          {(p) => (
            <select {...p} value={draft.inventory_id} onChange={(e) => onChange({ inventory_id: e.target.value })}>
              <option value="">— pick an inventory —</option>
              {inventories.items.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : draft.inventoryMode === 'inline' ? (
        <Field label="Inventory content (INI, YAML or JSON)" name={f('inventory')} error={error}>
          {(p) => (
            <textarea
              {...p}
              className="mono"
              rows={4}
              spellCheck={false}
              placeholder={'[web]\nweb1.example.com'}
              value={draft.inventory}
              onChange={(e) => onChange({ inventory: e.target.value })}
            />
          )}
        </Field>
      ) : null}

      <CredentialChecks
        name={f('credential_ids')}
        error={error}
        value={draft.credential_ids}
        onChange={(credential_ids) => onChange({ credential_ids })}
      />

      <Field
        label="Extra vars (YAML or JSON)"
        name={f('extra_vars')}
        error={error}
        localErrors={localErrors.extra_vars}
      >
        {(p) => (
          <textarea
            {...p}
            className="mono"
            rows={3}
            spellCheck={false}
            placeholder="region: eu"
            value={draft.vars}
            onChange={(e) => onChange({ vars: e.target.value })}
          />
        )}
      </Field>

      <div className="spec-row">
        <Field label="Limit" name={f('limit')} error={error} hint="Ansible host pattern.">
          {(p) => (
            <input {...p} className="mono" value={draft.limit} onChange={(e) => onChange({ limit: e.target.value })} />
          )}
        </Field>
        <Field label="Shards" name={f('shards')} error={error} hint="2 or more splits the hosts.">
          {(p) => (
            <input
              {...p}
              type="number"
              min={0}
              value={draft.shards}
              onChange={(e) => onChange({ shards: e.target.value })}
            />
          )}
        </Field>
        <Field label="Worker labels" name={f('labels')} error={error} hint="Separated by commas.">
          {(p) => <input {...p} value={draft.labels} onChange={(e) => onChange({ labels: e.target.value })} />}
        </Field>
      </div>
      <div className="spec-row">
        <Field label="Forks" name={f('forks')} error={error}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={1}
              value={draft.forks}
              onChange={(e) => onChange({ forks: e.target.value })}
            />
          )}
        </Field>
        <Field label="Verbosity (0–4)" name={f('verbosity')} error={error}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={0}
              max={4}
              value={draft.verbosity}
              onChange={(e) => onChange({ verbosity: e.target.value })}
            />
          )}
        </Field>
        <Field label="Timeout (seconds)" name={f('timeout_s')} error={error}>
          {(p) => (
            <input
              {...p}
              type="number"
              min={1}
              value={draft.timeout_s}
              onChange={(e) => onChange({ timeout_s: e.target.value })}
            />
          )}
        </Field>
      </div>
      <label className="check-row">
        <input type="checkbox" checked={draft.check} onChange={(e) => onChange({ check: e.target.checked })} /> Check
        mode (dry run: --check --diff)
      </label>
    </div>
  );
}
