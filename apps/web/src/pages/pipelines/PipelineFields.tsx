// The pipeline editor: what every step inherits (inventory, vars, credentials, labels), then the ordered steps,
// each a run spec with a name and the condition it runs under. Add, remove, move up and down; `prefix` is where the
// pipeline sits in the request body (`` for POST /v1/pipelines, `spec.` in a template, `target.pipeline.` in a
// schedule), so `…steps.<i>.<field>` messages land at their step's field.
import { useId } from 'react';
import { Field } from '../../ui/forms';
import { CredentialChecks } from '../templates/spec/CredentialChecks';
import { useInventoryNames } from '../templates/spec/lookups';
import { MoveButtons } from '../templates/spec/MoveButtons';
import type { LocalErrors } from '../templates/spec/runDraft';
import { RunSpecFields } from '../templates/spec/RunSpecFields';
import { errorsUnder, newStep, type PipelineDraft, type StepDraft } from './pipelineDraft';
import '../templates/spec/launch.css';

interface Props {
  draft: PipelineDraft;
  onChange(draft: PipelineDraft): void;
  prefix: string;
  error: unknown;
  localErrors?: LocalErrors;
}

export function PipelineFields({ draft, onChange, prefix, error, localErrors = {} }: Props) {
  const inventories = useInventoryNames();
  const group = useId();
  const f = (name: string) => `${prefix}${name}`;
  const set = (patch: Partial<PipelineDraft>) => onChange({ ...draft, ...patch });
  const setStep = (i: number, patch: Partial<StepDraft>) =>
    set({ steps: draft.steps.map((s, j) => (j === i ? { ...s, ...patch } : s)) });
  const move = (i: number, by: -1 | 1) => {
    const steps = [...draft.steps];
    [steps[i], steps[i + by]] = [steps[i + by]!, steps[i]!];
    set({ steps });
  };

  return (
    <div className="pipeline-fields">
      <section className="card" aria-labelledby={`${group}-shared`}>
        <h2 id={`${group}-shared`}>For every step</h2>
        <p className="hint">Steps take these unless they set their own (vars merge; the step's win).</p>
        <Field label="Pipeline name" name={f('name')} error={error}>
          {(p) => <input {...p} value={draft.name} onChange={(e) => set({ name: e.target.value })} />}
        </Field>
        <fieldset className="choice-row">
          <legend>Inventory</legend>
          {(
            [
              ['stored', 'A stored inventory'],
              ['inline', 'Inline content'],
              ['inherit', 'None (each step names its own)'],
            ] as const
          ).map(([mode, words]) => (
            <label key={mode}>
              <input
                type="radio"
                name={`${group}-inventory`}
                checked={draft.inventoryMode === mode}
                onChange={() => set({ inventoryMode: mode })}
              />{' '}
              {words}
            </label>
          ))}
        </fieldset>
        {draft.inventoryMode === 'stored' ? (
          <Field label="Stored inventory" name={f('inventory_id')} error={error}>
            {(p) => (
              <select {...p} value={draft.inventory_id} onChange={(e) => set({ inventory_id: e.target.value })}>
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
                value={draft.inventory}
                onChange={(e) => set({ inventory: e.target.value })}
              />
            )}
          </Field>
        ) : null}
        <CredentialChecks
          name={f('credential_ids')}
          error={error}
          value={draft.credential_ids}
          onChange={(credential_ids) => set({ credential_ids })}
        />
        <div className="spec-row">
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
                value={draft.vars}
                onChange={(e) => set({ vars: e.target.value })}
              />
            )}
          </Field>
          <Field label="Worker labels" name={f('labels')} error={error} hint="Separated by commas.">
            {(p) => <input {...p} value={draft.labels} onChange={(e) => set({ labels: e.target.value })} />}
          </Field>
        </div>
      </section>

      <section aria-labelledby={`${group}-steps`}>
        <h2 id={`${group}-steps`}>Steps, in order</h2>
        <ol className="editor-list" data-testid="pipeline-steps">
          {draft.steps.map((s, i) => (
            <li key={s.key} className="card editor-item" data-testid="pipeline-step">
              <div className="editor-item-head">
                <h3>
                  Step {i + 1}
                  {s.name ? `: ${s.name}` : ''}
                </h3>
                <MoveButtons
                  what={`step ${i + 1}`}
                  index={i}
                  count={draft.steps.length}
                  onMove={(by) => move(i, by)}
                  onRemove={() => set({ steps: draft.steps.filter((_, j) => j !== i) })}
                />
              </div>
              <RunSpecFields
                draft={s}
                onChange={(patch) => setStep(i, patch)}
                prefix={f(`steps.${i}.`)}
                error={error}
                localErrors={errorsUnder(localErrors, `steps.${i}.`)}
                step
              />
            </li>
          ))}
        </ol>
        {draft.steps.length === 0 ? <p className="muted">A pipeline needs at least one step.</p> : null}
        <button type="button" className="btn" onClick={() => set({ steps: [...draft.steps, newStep()] })}>
          Add step
        </button>
      </section>
    </div>
  );
}
