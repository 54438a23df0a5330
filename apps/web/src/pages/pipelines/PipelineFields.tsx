// The pipeline editor: what every step inherits (inventory, vars, credentials, labels), then the ordered steps,
// each a run spec with a name and the condition it runs under. Add, remove, move up and down; `prefix` is where the
// pipeline sits in the request body (`` for POST /v1/pipelines, `spec.` in a template, `target.pipeline.` in a
// schedule), so `…steps.<i>.<field>` messages land at their step's field.
import { useId } from 'react';
import { CredentialChecks } from '../templates/spec/CredentialChecks';
import { MoveButtons } from '../templates/spec/MoveButtons';
import type { LocalErrors } from '../templates/spec/runDraft';
import { INVENTORY_MODES, RunSpecFields } from '../templates/spec/RunSpecFields';
import { InventoryFields, LabelsInput, TextInput, VarsInput } from '../templates/spec/SpecInputs';
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
        <TextInput
          label="Pipeline name"
          name={f('name')}
          error={error}
          value={draft.name}
          onChange={(name) => set({ name })}
        />
        <InventoryFields
          draft={draft}
          onChange={set}
          modes={[...INVENTORY_MODES, ['inherit', 'None (each step names its own)']]}
          prefix={prefix}
          error={error}
        />
        <CredentialChecks
          name={f('credential_ids')}
          error={error}
          value={draft.credential_ids}
          onChange={(credential_ids) => set({ credential_ids })}
        />
        <div className="spec-row">
          <VarsInput
            name={f('extra_vars')}
            error={error}
            localErrors={localErrors.extra_vars}
            value={draft.vars}
            onChange={(vars) => set({ vars })}
          />
          <LabelsInput name={f('labels')} error={error} value={draft.labels} onChange={(labels) => set({ labels })} />
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
