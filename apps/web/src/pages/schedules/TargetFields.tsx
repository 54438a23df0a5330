// What a schedule or trigger starts: a run (a split with shards ≥ 2), a pipeline, or a template with its survey
// answers and overrides. The API's messages come back under `target.…` and show at their fields.
import type { LaunchTarget, SubmitPipelineBody, SubmitRunBody, Template } from '@baton/contracts';
import { useId } from 'react';
import { useApi } from '../../api/hooks';
import { Field } from '../../ui/forms';
import { PipelineFields } from '../pipelines/PipelineFields';
import {
  emptyPipelineDraft,
  type PipelineDraft,
  pipelineDraftFrom,
  pipelineSpecFrom,
} from '../pipelines/pipelineDraft';
import { useTemplateList } from '../templates/spec/lookups';
import { emptyRunDraft, type LocalErrors, type RunDraft, runDraftFrom, runSpecFrom } from '../templates/spec/runDraft';
import { RunSpecFields } from '../templates/spec/RunSpecFields';
import { emptyOverrides, OverrideFields, type OverrideDraft, overridesFrom } from '../templates/survey/OverrideFields';
import { SurveyInputs } from '../templates/survey/SurveyInputs';
import { type AnswerDraft, answersFrom, initialAnswers, SECRET_PLACEHOLDER } from '../templates/survey/surveyDraft';

export type TargetKind = 'run' | 'pipeline' | 'template';

export interface TargetDraft {
  kind: TargetKind;
  run: RunDraft;
  pipeline: PipelineDraft;
  template_id: string;
  /** null until a template is picked (then its defaults fill them) */
  answers: Record<string, AnswerDraft> | null;
  overrides: OverrideDraft;
}

export function emptyTarget(kind: TargetKind = 'run', projectSource = false): TargetDraft {
  const run = emptyRunDraft();
  return {
    kind,
    run: projectSource ? { ...run, source: 'project' } : run,
    pipeline: emptyPipelineDraft(),
    template_id: '',
    answers: null,
    overrides: emptyOverrides(),
  };
}

/** A stored target as a draft. Sealed password answers ($encrypted$) come back empty: they must be typed again. */
export function targetDraftFrom(t: LaunchTarget): TargetDraft {
  const base = emptyTarget();
  if (t.template_id) {
    const answers = Object.fromEntries(
      Object.entries(t.survey_answers ?? {}).map(([k, v]): [string, AnswerDraft] => [
        k,
        v === SECRET_PLACEHOLDER ? '' : Array.isArray(v) ? (v as string[]) : typeof v === 'boolean' ? v : String(v),
      ]),
    );
    const o = t.overrides ?? {};
    return {
      ...base,
      kind: 'template',
      template_id: t.template_id,
      answers,
      overrides: {
        ...base.overrides,
        limit: o.limit ?? '',
        inventory_id: o.inventory_id ?? '',
        credential_ids: o.credential_ids ?? null,
        check: o.check === undefined ? '' : String(o.check),
        verbosity: o.verbosity === undefined ? '' : String(o.verbosity),
        labels: (o.labels ?? []).join(', '),
        shards: o.shards === undefined ? '' : String(o.shards),
        ref: o.ref ?? '',
      },
    };
  }
  if (t.pipeline) return { ...base, kind: 'pipeline', pipeline: pipelineDraftFrom(t.pipeline) };
  return { ...base, kind: 'run', run: runDraftFrom(t.run ?? {}) };
}

/** The target to send, and problems found in the browser by their path under `target.`. */
export function targetFrom(
  d: TargetDraft,
  template: Template | undefined,
): { target: LaunchTarget; errors: LocalErrors } {
  if (d.kind === 'run') {
    const r = runSpecFrom(d.run);
    return { target: { run: r.spec as SubmitRunBody }, errors: r.errors };
  }
  if (d.kind === 'pipeline') {
    const r = pipelineSpecFrom(d.pipeline);
    return { target: { pipeline: r.spec as SubmitPipelineBody }, errors: r.errors };
  }
  const o = overridesFrom(d.overrides);
  const answers = answersFrom(template?.survey ?? [], d.answers ?? {});
  return {
    target: {
      template_id: d.template_id,
      ...(Object.keys(answers).length ? { survey_answers: answers } : {}),
      ...(Object.keys(o.overrides).length ? { overrides: o.overrides } : {}),
    } as LaunchTarget,
    errors: o.varsError ? { 'overrides.extra_vars': [o.varsError] } : {},
  };
}

/** The template a draft names, when it names one. */
export function useTargetTemplate(d: TargetDraft) {
  return useApi<Template>(d.kind === 'template' && d.template_id ? `/v1/templates/${d.template_id}` : null);
}

interface Props {
  draft: TargetDraft;
  onChange(d: TargetDraft): void;
  error: unknown;
  localErrors: LocalErrors;
  /** kinds offered (a trigger's target must run a project playbook, so every kind still applies) */
  what: string;
}

export function TargetFields({ draft, onChange, error, localErrors, what }: Props) {
  const group = useId();
  const templates = useTemplateList(draft.kind === 'template');
  const template = useTargetTemplate(draft);
  const set = (patch: Partial<TargetDraft>) => onChange({ ...draft, ...patch });
  const answers = draft.answers ?? (template.data ? initialAnswers(template.data.survey ?? []) : {});
  return (
    <section className="card form-section" aria-labelledby={`${group}-h`}>
      <h2 id={`${group}-h`}>What it starts</h2>
      <fieldset className="choice-row">
        <legend>{what} starts</legend>
        {(
          [
            ['run', 'A run'],
            ['pipeline', 'A pipeline'],
            ['template', 'A template'],
          ] as const
        ).map(([kind, words]) => (
          <label key={kind}>
            <input type="radio" name={`${group}-kind`} checked={draft.kind === kind} onChange={() => set({ kind })} />{' '}
            {words}
          </label>
        ))}
      </fieldset>
      {draft.kind === 'run' ? (
        <RunSpecFields
          draft={draft.run}
          onChange={(patch) => set({ run: { ...draft.run, ...patch } })}
          prefix="target.run."
          error={error}
          localErrors={localErrors}
        />
      ) : draft.kind === 'pipeline' ? (
        <PipelineFields
          draft={draft.pipeline}
          onChange={(pipeline) => set({ pipeline })}
          prefix="target.pipeline."
          error={error}
          localErrors={localErrors}
        />
      ) : (
        <>
          <Field label="Template" name="target.template_id" error={error}>
            {(p) => (
              <select
                {...p}
                value={draft.template_id}
                onChange={(e) => set({ template_id: e.target.value, answers: null, overrides: emptyOverrides() })}
              >
                <option value="">— pick a template —</option>
                {templates.items.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {template.data?.survey?.length ? (
            <>
              <h3>Survey answers</h3>
              <SurveyInputs
                questions={template.data.survey}
                values={answers}
                onChange={(variable, value) => set({ answers: { ...answers, [variable]: value } })}
                prefix="target.survey_answers."
                error={error}
              />
            </>
          ) : null}
          {template.data?.allow_overrides.length ? (
            <>
              <h3>Overrides</h3>
              <OverrideFields
                allowed={template.data.allow_overrides}
                draft={draft.overrides}
                onChange={(patch) => set({ overrides: { ...draft.overrides, ...patch } })}
                prefix="target.overrides."
                error={error}
                varsError={localErrors['overrides.extra_vars']?.[0]}
              />
            </>
          ) : null}
        </>
      )}
    </section>
  );
}
