// Surveys (issue 11, "Templates"): answering a template's questions at launch. Every answer is checked (type,
// length, range, choice membership, required, unknown variable), one error per bad answer; defaults fill the
// questions left unanswered. Password answers and defaults are kept apart from the others: they are sealed onto
// the run and never recorded in clear.
import { SECRET_PLACEHOLDER, type SurveyQuestion, surveyAnswerProblem } from '@baton/contracts';
import type { FieldError } from '../common/errors.js';

/** The answers of a launch, split by where they go. */
export interface AnsweredSurvey {
  /** non-password answers and defaults: extra vars, and recorded on the run */
  answers: Record<string, unknown>;
  /** password answers and defaults: extra vars too, but sealed on the run and masked in its output */
  secrets: Record<string, string>;
}

export type SurveyResult = { ok: true; value: AnsweredSurvey } | { ok: false; errors: FieldError[] };

/** An answer that counts as none: absent, null, or (for a text-like question) the empty string. */
function unanswered(q: SurveyQuestion, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (value === '' && q.type !== 'choice') return true;
  return q.type === 'multichoice' && Array.isArray(value) && value.length === 0;
}

/**
 * Checks `given` against `survey`. `secretDefaults` holds the password questions' defaults (stored sealed; their
 * questions carry the placeholder). A password answer of "$encrypted$" means "the stored default", as AWX has it.
 * Errors are at `<field>.<variable>` (field: `body.survey_answers` for a launch). Never throws.
 */
export function answerSurvey(
  survey: readonly SurveyQuestion[],
  secretDefaults: Readonly<Record<string, string>>,
  given: Readonly<Record<string, unknown>>,
  field = 'body.survey_answers',
): SurveyResult {
  const errors: FieldError[] = [];
  const answers: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  const asked = new Map(survey.map((q) => [q.variable, q]));
  for (const variable of Object.keys(given)) {
    if (!asked.has(variable))
      errors.push({ path: `${field}.${variable}`, message: `no question of this template asks for ${variable}` });
  }
  for (const q of survey) {
    const path = `${field}.${q.variable}`;
    let value = Object.hasOwn(given, q.variable) ? given[q.variable] : undefined;
    if (q.type === 'password' && value === SECRET_PLACEHOLDER) value = undefined;
    if (unanswered(q, value)) {
      const fallback =
        q.type === 'password' && q.default === SECRET_PLACEHOLDER ? secretDefaults[q.variable] : q.default;
      if (fallback !== undefined) value = fallback;
      else {
        if (q.required) errors.push({ path, message: `${q.variable} is required: "${q.question}"` });
        continue;
      }
    }
    const problem = surveyAnswerProblem(q, value);
    if (problem) {
      errors.push({ path, message: problem });
      continue;
    }
    if (q.type === 'password') secrets[q.variable] = value as string;
    else answers[q.variable] = value;
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: { answers, secrets } };
}

/** The password questions' variables. */
export function passwordVariablesOf(survey: readonly SurveyQuestion[] | null): string[] {
  return (survey ?? []).filter((q) => q.type === 'password').map((q) => q.variable);
}
