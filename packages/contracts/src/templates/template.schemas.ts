// Templates (issue 11, "Templates"): launch presets of a run spec or a pipeline spec, with an optional survey
// answered at launch and the list of fields a launcher may override.
import { z } from 'zod';
import { idOf, ObjectName, Timestamp } from '../common/common.schemas.js';
import { OverridableField } from '../launching/launch-target.schemas.js';
import { SubmitPipelineBody } from '../pipelines/pipeline.schemas.js';
import { SubmitRunBody } from '../runs/run.schemas.js';

export const MAX_SURVEY_QUESTIONS = 100;
export const MAX_SURVEY_CHOICES = 100;
/** Longest text answer when a question sets no `max`: generous, but bounded. */
export const MAX_SURVEY_TEXT_CHARS = 64 * 1024;

export const SURVEY_QUESTION_TYPES = [
  'text',
  'textarea',
  'password',
  'integer',
  'float',
  'boolean',
  'choice',
  'multichoice',
] as const;
export const SurveyQuestionType = z.enum(SURVEY_QUESTION_TYPES);
export type SurveyQuestionType = z.infer<typeof SurveyQuestionType>;

/** Types whose min/max bound the answer's length; numbers' min/max bound their value. */
export const LENGTH_BOUNDED_TYPES: ReadonlySet<SurveyQuestionType> = new Set(['text', 'textarea', 'password']);
export const VALUE_BOUNDED_TYPES: ReadonlySet<SurveyQuestionType> = new Set(['integer', 'float']);
export const CHOICE_TYPES: ReadonlySet<SurveyQuestionType> = new Set(['choice', 'multichoice']);

/** Python's keywords: ansible refuses them as variable names. */
export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

/** What a password default shows instead of its value; sent back in an update, it keeps the stored default. */
export const SECRET_PLACEHOLDER = '$encrypted$';

/** An Ansible variable name: a Python identifier in ASCII that is not a keyword. */
export const AnsibleVariable = z
  .string()
  .max(255)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a valid Ansible variable name: a letter or _, then letters, digits or _')
  .refine((v) => !PYTHON_KEYWORDS.has(v), 'must not be a Python keyword');

const SurveyQuestionBase = z.strictObject({
  variable: AnsibleVariable,
  question: z.string().trim().min(1).max(400),
  description: z.string().max(2000).optional(),
  type: SurveyQuestionType,
  required: z.boolean().meta({ description: 'an answer (or a default) must be given at launch' }),
  default: z.unknown().optional().meta({
    description:
      'the answer when none is given; of the question’s type. A password default is never shown: responses carry "$encrypted$", and an update that sends "$encrypted$" keeps the stored default',
  }),
  min: z
    .number()
    .finite()
    .optional()
    .meta({ description: 'text, textarea, password: shortest length; integer, float: least value' }),
  max: z
    .number()
    .finite()
    .optional()
    .meta({ description: 'text, textarea, password: longest length; integer, float: greatest value' }),
  choices: z
    .array(z.string().min(1).max(1000))
    .min(1)
    .max(MAX_SURVEY_CHOICES)
    .optional()
    .meta({ description: 'choice and multichoice only: the allowed answers' }),
});
type SurveyQuestionShape = z.infer<typeof SurveyQuestionBase>;

/** Whether the definition of one question holds together; each problem at its own field. */
function questionIssues(q: SurveyQuestionShape, ctx: z.RefinementCtx): void {
  const issue = (field: string, message: string) => ctx.addIssue({ code: 'custom', message, path: [field] });
  const lengths = LENGTH_BOUNDED_TYPES.has(q.type);
  const values = VALUE_BOUNDED_TYPES.has(q.type);
  for (const bound of ['min', 'max'] as const) {
    const v = q[bound];
    if (v === undefined) continue;
    if (!lengths && !values) issue(bound, `a ${q.type} question has no ${bound}`);
    else if (lengths && (!Number.isInteger(v) || v < 0 || v > MAX_SURVEY_TEXT_CHARS))
      issue(bound, `a length from 0 to ${MAX_SURVEY_TEXT_CHARS}`);
    else if (q.type === 'integer' && !Number.isSafeInteger(v))
      issue(bound, 'an integer question needs an integer bound');
  }
  if (q.min !== undefined && q.max !== undefined && q.min > q.max) issue('max', 'must not be less than min');
  if (CHOICE_TYPES.has(q.type)) {
    if (q.choices === undefined) issue('choices', `a ${q.type} question needs choices`);
    else if (new Set(q.choices).size !== q.choices.length) issue('choices', 'must not repeat a choice');
  } else if (q.choices !== undefined) issue('choices', `only choice and multichoice questions have choices`);
  if (q.default !== undefined && !(q.type === 'password' && q.default === SECRET_PLACEHOLDER)) {
    const problem = surveyAnswerProblem(q, q.default);
    if (problem) issue('default', problem);
  }
}

export const SurveyQuestion = SurveyQuestionBase.superRefine(questionIssues).meta({ id: 'SurveyQuestion' });
export type SurveyQuestion = z.infer<typeof SurveyQuestion>;

export const Survey = z
  .array(SurveyQuestion)
  .max(MAX_SURVEY_QUESTIONS)
  .superRefine((questions, ctx) => {
    const seen = new Set<string>();
    questions.forEach((q, i) => {
      if (seen.has(q.variable))
        ctx.addIssue({ code: 'custom', message: `variable ${q.variable} is asked twice`, path: [i, 'variable'] });
      seen.add(q.variable);
    });
  })
  .meta({ id: 'Survey', description: `at most ${MAX_SURVEY_QUESTIONS} questions, each variable once` });
export type Survey = z.infer<typeof Survey>;

/**
 * Why `value` is not an acceptable answer to `q` (type, length, range, choice membership), or undefined when it
 * is. Shared by the survey definition (defaults) and launch (answers). Never throws.
 */
export function surveyAnswerProblem(
  q: Pick<SurveyQuestionShape, 'type' | 'min' | 'max' | 'choices'>,
  value: unknown,
): string | undefined {
  const range = (n: number, what: string) => {
    if (q.min !== undefined && n < q.min) return `${what} must be at least ${q.min}`;
    if (q.max !== undefined && n > q.max) return `${what} must be at most ${q.max}`;
    return undefined;
  };
  switch (q.type) {
    case 'text':
    case 'textarea':
    case 'password': {
      if (typeof value !== 'string') return `must be a string (a ${q.type} answer)`;
      if (q.type === 'text' && /[\r\n]/.test(value)) return 'must be one line (use a textarea question for more)';
      if (q.max === undefined && value.length > MAX_SURVEY_TEXT_CHARS)
        return `must be at most ${MAX_SURVEY_TEXT_CHARS} characters`;
      return range(value.length, 'its length');
    }
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return 'must be an integer';
      return range(value, 'the value');
    case 'float':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      return range(value, 'the value');
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'choice':
      if (typeof value !== 'string') return 'must be one of the choices (a string)';
      return (q.choices ?? []).includes(value) ? undefined : `must be one of: ${(q.choices ?? []).join(', ')}`;
    case 'multichoice': {
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
        return 'must be a list of choices (strings)';
      const bad = (value as string[]).filter((v) => !(q.choices ?? []).includes(v));
      if (bad.length) return `${bad.join(', ')} ${bad.length === 1 ? 'is' : 'are'} not among the choices`;
      if (new Set(value).size !== value.length) return 'must not repeat a choice';
      return undefined;
    }
    default:
      return 'is of an unknown question type';
  }
}

/** The spec schema of each template kind: create validates against it, an update against the template's kind. */
export const TEMPLATE_SPECS = { run: SubmitRunBody, pipeline: SubmitPipelineBody } as const;
export const TemplateKind = z.enum(['run', 'pipeline']);
export type TemplateKind = z.infer<typeof TemplateKind>;

const Description = z.string().trim().max(1000);
const AllowOverrides = z
  .array(OverridableField)
  .max(16)
  .refine((a) => new Set(a).size === a.length, 'must not repeat a field')
  .meta({ description: 'the fields a launcher may override' });

const common = {
  name: ObjectName,
  description: Description.optional(),
  survey: Survey.optional(),
  allow_overrides: AllowOverrides.optional(),
};

export const TemplateCreateBody = z
  .discriminatedUnion('kind', [
    z.strictObject({
      ...common,
      kind: z.literal('run'),
      spec: SubmitRunBody.meta({ description: 'a run spec (POST /v1/runs body); shards ≥ 2 makes it a split' }),
    }),
    z.strictObject({
      ...common,
      kind: z.literal('pipeline'),
      spec: SubmitPipelineBody.meta({ description: 'a pipeline spec (POST /v1/pipelines body)' }),
    }),
  ])
  .meta({ id: 'TemplateCreate' });
export type TemplateCreateBody = z.output<typeof TemplateCreateBody>;

/**
 * Update: each field given replaces the stored one (`description` and `survey` null remove them). `spec` is checked
 * against `kind` (the new one when given, else the stored one); a new kind needs a new spec.
 */
export const TemplateUpdateBody = z
  .strictObject({
    name: ObjectName.optional(),
    description: Description.nullable().optional(),
    kind: TemplateKind.optional(),
    spec: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'a run spec or a pipeline spec, as the template’s kind says' }),
    survey: Survey.nullable().optional(),
    allow_overrides: AllowOverrides.optional(),
  })
  .superRefine((b, ctx) => {
    if (!Object.values(b).some((v) => v !== undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'give at least one of name, description, kind, spec, survey, allow_overrides',
        path: [],
      });
    if (b.kind !== undefined && b.spec === undefined)
      ctx.addIssue({ code: 'custom', message: 'a new kind needs a spec of that kind', path: ['spec'] });
  })
  .meta({ id: 'TemplateUpdate' });
export type TemplateUpdateBody = z.output<typeof TemplateUpdateBody>;

export const Template = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    kind: TemplateKind,
    spec: z.record(z.string(), z.unknown()).meta({ description: 'the run spec or pipeline spec' }),
    survey: z
      .array(SurveyQuestion)
      .nullable()
      .meta({ description: 'the questions; a password question’s default shows as "$encrypted$"' }),
    allow_overrides: z.array(OverridableField),
    created_by: z.string().meta({ description: 'the owner: launches use the objects of the spec on their authority' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Template' });
export type Template = z.infer<typeof Template>;

export const TemplateIdParams = z.strictObject({ id: idOf('tpl') });
