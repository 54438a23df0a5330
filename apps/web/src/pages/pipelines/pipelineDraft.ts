// A pipeline spec (POST /v1/pipelines, a pipeline template's spec, a schedule's pipeline target) as the step editor
// edits it, and back.
import type { SubmitPipelineBody } from '@baton/contracts';
import { emptyRunDraft, type LocalErrors, runDraftFrom, type RunDraft, runSpecFrom } from '../templates/spec/runDraft';
import { compact, parseVars, parseWords, varsText } from '../templates/spec/vars';

export interface StepDraft extends RunDraft {
  /** tells steps apart while they move (React list keys) */
  key: string;
}

export interface PipelineDraft {
  name: string;
  /** `inherit` here: no pipeline-wide inventory (each step names its own) */
  inventoryMode: RunDraft['inventoryMode'];
  inventory_id: string;
  inventory: string;
  vars: string;
  credential_ids: string[];
  labels: string;
  steps: StepDraft[];
}

const newKey = () => `s${Math.random().toString(36).slice(2)}`;

export function newStep(): StepDraft {
  return { ...emptyRunDraft('inherit'), key: newKey() };
}

export function emptyPipelineDraft(): PipelineDraft {
  return {
    name: '',
    inventoryMode: 'stored',
    inventory_id: '',
    inventory: '',
    vars: '',
    credential_ids: [],
    labels: '',
    steps: [newStep()],
  };
}

export function pipelineDraftFrom(spec: Partial<SubmitPipelineBody>): PipelineDraft {
  return {
    name: spec.name ?? '',
    inventoryMode: spec.inventory_id ? 'stored' : spec.inventory ? 'inline' : 'inherit',
    inventory_id: spec.inventory_id ?? '',
    inventory: spec.inventory ?? '',
    vars: varsText(spec.extra_vars),
    credential_ids: spec.credential_ids ?? [],
    labels: (spec.labels ?? []).join(', '),
    steps: (spec.steps ?? []).map((s) => ({ ...runDraftFrom(s, 'inherit'), key: newKey() })),
  };
}

/** The body to send, and problems found in the browser by path (`extra_vars`, `steps.1.extra_vars`). */
export function pipelineSpecFrom(d: PipelineDraft): { spec: SubmitPipelineBody; errors: LocalErrors } {
  const errors: LocalErrors = {};
  const vars = parseVars(d.vars);
  if (!vars.ok) errors.extra_vars = [vars.error];
  const steps = d.steps.map((s, i) => {
    const r = runSpecFrom(s, { step: true });
    for (const [k, v] of Object.entries(r.errors)) errors[`steps.${i}.${k}`] = v;
    return r.spec;
  });
  const labels = parseWords(d.labels);
  const spec = compact({
    name: d.name.trim() || undefined,
    steps,
    inventory_id: d.inventoryMode === 'stored' ? d.inventory_id || undefined : undefined,
    inventory: d.inventoryMode === 'inline' ? d.inventory || undefined : undefined,
    extra_vars: vars.ok ? vars.vars : undefined,
    credential_ids: d.credential_ids.length ? d.credential_ids : undefined,
    labels: labels.length ? labels : undefined,
  }) as SubmitPipelineBody;
  return { spec, errors };
}

/** The local errors under one prefix, without it (what a step's fields look up). */
export function errorsUnder(errors: LocalErrors, prefix: string): LocalErrors {
  return Object.fromEntries(
    Object.entries(errors)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]) => [k.slice(prefix.length), v]),
  );
}
