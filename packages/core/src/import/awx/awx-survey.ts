// AWX survey questions as Baton's. Choices may be a list or newline-separated text (the API keeps what it was
// given), a multiselect default is newline text too, and password defaults are never exported ("$encrypted$").
import { type AwxSurveyQuestion, SurveyQuestion, type SurveyQuestionType } from '@baton/contracts';

const TYPES: Record<string, SurveyQuestionType> = {
  text: 'text',
  textarea: 'textarea',
  password: 'password',
  integer: 'integer',
  float: 'float',
  multiplechoice: 'choice',
  multiselect: 'multichoice',
};

const lines = (v: unknown): string[] =>
  (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split('\n') : []).map((s) => s.trim()).filter(Boolean);

/** The questions Baton can ask, and a warning for each it cannot (or asks differently). */
export function mapSurvey(
  spec: ReadonlyArray<AwxSurveyQuestion>,
  where: string,
  warn: (m: string) => void,
): SurveyQuestion[] {
  const out: SurveyQuestion[] = [];
  for (const q of spec) {
    const type = TYPES[q.type];
    if (!type) {
      warn(`${where}: survey question ${q.variable} of type ${q.type} was left out`);
      continue;
    }
    const question: SurveyQuestion = {
      variable: q.variable,
      question: (q.question_name ?? '').trim() || q.variable,
      type,
      required: q.required ?? false,
    };
    if (q.question_description) question.description = q.question_description;
    if (type === 'choice' || type === 'multichoice') question.choices = [...new Set(lines(q.choices))];
    else if (typeof q.min === 'number' || typeof q.max === 'number') {
      // AWX bounds every text answer by default (0..1024); Baton only bounds what the question says.
      if (typeof q.min === 'number') question.min = q.min;
      if (typeof q.max === 'number') question.max = q.max;
    }
    const d = q.default;
    if (type === 'password') {
      if (d !== undefined && d !== null && d !== '')
        warn(`${where}: the default of password question ${q.variable} is not in the export; set it in Baton`);
    } else if (type === 'multichoice') {
      const picks = lines(d);
      if (picks.length) question.default = picks;
    } else if (type === 'integer' || type === 'float') {
      const n = typeof d === 'number' ? d : typeof d === 'string' && d.trim() !== '' ? Number(d) : undefined;
      if (n !== undefined && Number.isFinite(n)) question.default = n;
    } else if (typeof d === 'string' && d !== '') question.default = d;
    const kept = keepValid(question, `${where}: survey question ${q.variable}`, warn);
    if (kept && !out.some((x) => x.variable === kept.variable)) out.push(kept);
  }
  return out;
}

/** The question as Baton's schema takes it: without its default when only that is wrong, else left out. */
export function keepValid(q: SurveyQuestion, what: string, warn: (m: string) => void): SurveyQuestion | undefined {
  const first = SurveyQuestion.safeParse(q);
  if (first.success) return q;
  const { default: _default, ...bare } = q;
  void _default;
  const again = SurveyQuestion.safeParse(bare);
  const issue = first.error.issues[0];
  const why = `${issue?.path.join('.') || 'question'}: ${issue?.message ?? 'not valid'}`;
  if (again.success) {
    warn(`${what}: its default was dropped (${why})`);
    return bare;
  }
  warn(`${what} was left out (${why})`);
  return undefined;
}
