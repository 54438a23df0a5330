import { z } from 'zod';
import { idOf } from '../common/common.schemas.js';
import { SubmitPipelineBody } from '../pipelines/pipeline.schemas.js';
import { RUN_SPEC_FIELDS, SubmitRunBody } from '../runs/run.schemas.js';

/** Answers to a template's survey, by variable name; checked against the questions at launch. */
export const SurveyAnswers = z.record(z.string().max(255), z.unknown()).meta({ id: 'SurveyAnswers' });
export type SurveyAnswers = z.infer<typeof SurveyAnswers>;

/** The fields a template may let its launcher change (its `allow_overrides`). */
export const OVERRIDABLE_FIELDS = [
  'limit',
  'extra_vars',
  'inventory_id',
  'credential_ids',
  'check',
  'verbosity',
  'labels',
  'shards',
  'ref',
] as const;
export const OverridableField = z.enum(OVERRIDABLE_FIELDS);
export type OverridableField = z.infer<typeof OverridableField>;

/** Overrides at launch: only fields the template allows (400 naming any other). */
export const TemplateOverrides = z
  .strictObject({
    limit: RUN_SPEC_FIELDS.limit,
    extra_vars: RUN_SPEC_FIELDS.extra_vars,
    inventory_id: RUN_SPEC_FIELDS.inventory_id,
    credential_ids: RUN_SPEC_FIELDS.credential_ids,
    check: RUN_SPEC_FIELDS.check,
    verbosity: RUN_SPEC_FIELDS.verbosity,
    labels: RUN_SPEC_FIELDS.labels,
    shards: RUN_SPEC_FIELDS.shards,
    ref: RUN_SPEC_FIELDS.ref,
  })
  .meta({ id: 'TemplateOverrides' });
export type TemplateOverrides = z.infer<typeof TemplateOverrides>;

export const LaunchTemplateBody = z
  .strictObject({ survey_answers: SurveyAnswers.optional(), overrides: TemplateOverrides.optional() })
  .meta({ id: 'LaunchTemplateBody' });
export type LaunchTemplateBody = z.infer<typeof LaunchTemplateBody>;

/**
 * What a schedule or a trigger starts: exactly one of a run (a split with shards ≥ 2), a pipeline, or a template
 * (with its survey answers and overrides). One object with optional fields rather than a union, so a bad target
 * gets errors at its own fields.
 */
export const LaunchTarget = z
  .strictObject({
    run: SubmitRunBody.optional(),
    pipeline: SubmitPipelineBody.optional(),
    template_id: idOf('tpl').optional(),
    survey_answers: SurveyAnswers.optional(),
    overrides: TemplateOverrides.optional(),
  })
  .superRefine((t, ctx) => {
    const given = [t.run, t.pipeline, t.template_id].filter((x) => x !== undefined).length;
    if (given !== 1)
      ctx.addIssue({ code: 'custom', message: 'give exactly one of run, pipeline and template_id', path: [] });
    if (t.template_id === undefined) {
      for (const k of ['survey_answers', 'overrides'] as const)
        if (t[k] !== undefined) ctx.addIssue({ code: 'custom', message: 'only with template_id', path: [k] });
    }
  })
  .meta({ id: 'LaunchTarget' });
export type LaunchTarget = z.infer<typeof LaunchTarget>;
