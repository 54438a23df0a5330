// Survey questions as the editor edits them, and answers as the launch form holds them, with their conversions to
// the API's shapes. The API checks everything again; these conversions only keep typed text typed.
import type { SurveyQuestion, SurveyQuestionType } from '@baton/contracts';
import { compact, optionalNumber, parseLines } from '../spec/vars';

/** What a password default reads as in every answer; sent back, it keeps the stored default. */
export const SECRET_PLACEHOLDER = '$encrypted$';

export const QUESTION_TYPES: Array<{ type: SurveyQuestionType; label: string }> = [
  { type: 'text', label: 'Text (one line)' },
  { type: 'textarea', label: 'Text (several lines)' },
  { type: 'password', label: 'Password' },
  { type: 'integer', label: 'Integer' },
  { type: 'float', label: 'Number (float)' },
  { type: 'boolean', label: 'Yes / no' },
  { type: 'choice', label: 'Choice (one of)' },
  { type: 'multichoice', label: 'Multiple choice (any of)' },
];

export const hasLength = (t: SurveyQuestionType) => t === 'text' || t === 'textarea' || t === 'password';
export const hasRange = (t: SurveyQuestionType) => t === 'integer' || t === 'float';
export const hasChoices = (t: SurveyQuestionType) => t === 'choice' || t === 'multichoice';

export interface QuestionDraft {
  /** a stable key for React while questions move */
  key: string;
  variable: string;
  question: string;
  description: string;
  type: SurveyQuestionType;
  required: boolean;
  /** the default as typed (multichoice: one choice per line; boolean: '', 'true' or 'false') */
  default: string;
  /** a password question whose stored default is kept (the API shows it only as $encrypted$) */
  keepSecret: boolean;
  min: string;
  max: string;
  /** one choice per line */
  choices: string;
}

/** A key that tells questions apart while they move (React list keys). */
const newKey = () => `q${Math.random().toString(36).slice(2)}`;

export function emptyQuestion(): QuestionDraft {
  return {
    key: newKey(),
    variable: '',
    question: '',
    description: '',
    type: 'text',
    required: false,
    default: '',
    keepSecret: false,
    min: '',
    max: '',
    choices: '',
  };
}

export function questionDraftFrom(q: SurveyQuestion): QuestionDraft {
  const d = q.default;
  const secret = q.type === 'password' && d === SECRET_PLACEHOLDER;
  return {
    key: newKey(),
    variable: q.variable,
    question: q.question,
    description: q.description ?? '',
    type: q.type,
    required: q.required,
    default: secret || d === undefined || d === null ? '' : Array.isArray(d) ? d.join('\n') : String(d),
    keepSecret: secret,
    min: q.min === undefined ? '' : String(q.min),
    max: q.max === undefined ? '' : String(q.max),
    choices: (q.choices ?? []).join('\n'),
  };
}

function defaultOf(q: QuestionDraft): unknown {
  if (q.type === 'password' && q.keepSecret && q.default === '') return SECRET_PLACEHOLDER;
  if (q.default.trim() === '') return undefined;
  switch (q.type) {
    case 'integer':
    case 'float':
      return optionalNumber(q.default);
    case 'boolean':
      return q.default === 'true';
    case 'multichoice':
      return parseLines(q.default);
    case 'text':
    case 'textarea':
    case 'password':
    case 'choice':
      return q.default;
  }
}

export function questionFrom(q: QuestionDraft): SurveyQuestion {
  return compact({
    variable: q.variable.trim(),
    question: q.question,
    description: q.description.trim() || undefined,
    type: q.type,
    required: q.required,
    default: defaultOf(q),
    min: hasLength(q.type) || hasRange(q.type) ? optionalNumber(q.min) : undefined,
    max: hasLength(q.type) || hasRange(q.type) ? optionalNumber(q.max) : undefined,
    choices: hasChoices(q.type) ? parseLines(q.choices) : undefined,
  }) as SurveyQuestion;
}

/** One answer as the launch form holds it: text for typed answers, a list for multichoice, a flag for booleans. */
export type AnswerDraft = string | string[] | boolean;

/** The form's starting answers: the defaults (a password default stays unseen: empty means "use it"). */
export function initialAnswers(questions: SurveyQuestion[]): Record<string, AnswerDraft> {
  return Object.fromEntries(
    questions.map((q) => {
      const d = q.default;
      if (q.type === 'multichoice') return [q.variable, Array.isArray(d) ? (d as string[]) : []];
      if (q.type === 'boolean') return [q.variable, d === true];
      if (q.type === 'password' || d === undefined || d === null) return [q.variable, ''];
      return [q.variable, String(d)];
    }),
  );
}

/**
 * The answers to send: empty ones are left out (the default then applies, or the API says one is required).
 * Numbers go as numbers when they read as one, else as typed, so the API names the field.
 */
export function answersFrom(questions: SurveyQuestion[], values: Record<string, AnswerDraft>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const q of questions) {
    const v = values[q.variable];
    if (v === undefined) continue;
    if (q.type === 'boolean') out[q.variable] = v === true;
    else if (q.type === 'multichoice') {
      if ((v as string[]).length) out[q.variable] = v;
    } else if (typeof v === 'string' && v !== '') {
      out[q.variable] = hasRange(q.type) ? optionalNumber(v) : v;
    }
  }
  return out;
}
