// Two parts of a Semaphore template that need reading rather than copying: its CLI `arguments` (only some have a
// Baton run-spec field) and its survey variables (Semaphore's four types, Baton's question rules).
import {
  AnsibleVariable,
  MAX_SURVEY_CHOICES,
  MAX_SURVEY_QUESTIONS,
  surveyAnswerProblem,
  type SemaphoreSurveyVar,
  type SurveyQuestion,
  type SurveyQuestionType,
} from '@baton/contracts';
import { cut, text } from './semaphore-context.js';

export interface ArgumentFields {
  forks?: number;
  limit?: string;
  verbosity?: number;
  check?: boolean;
}

/**
 * The run-spec fields `args` (ansible-playbook options) set, and the arguments with no field (each as written,
 * with its value when it took one). `--diff` is kept only beside `--check`: a Baton check run is `--check --diff`.
 */
export function readArguments(args: readonly string[]): { fields: ArgumentFields; dropped: string[] } {
  const fields: ArgumentFields = {};
  const dropped: string[] = [];
  let diff: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    // `--opt=value`, `--opt value`, `-x value`, `-xvalue`
    const valued = (long: string, short: string): string | undefined => {
      if (arg.startsWith(`${long}=`)) return arg.slice(long.length + 1);
      if ((arg === long || arg === short) && i + 1 < args.length) return args[++i];
      if (arg.startsWith(short) && arg.length > short.length && !arg.startsWith('--')) return arg.slice(short.length);
      return undefined;
    };
    if (arg === '--check' || arg === '-C') fields.check = true;
    else if (arg === '--diff' || arg === '-D') diff = arg;
    else if (arg === '--verbose' || /^-v+$/.test(arg))
      fields.verbosity = Math.min(4, (fields.verbosity ?? 0) + (arg === '--verbose' ? 1 : arg.length - 1));
    else if (arg === '--forks' || arg === '-f' || arg.startsWith('--forks=') || /^-f\d/.test(arg)) {
      const value = valued('--forks', '-f');
      const n = value !== undefined && /^\d{1,3}$/.test(value) ? Number(value) : NaN;
      if (n >= 1 && n <= 500) fields.forks = n;
      else dropped.push(value === undefined ? arg : `${arg} ${value}`);
    } else if (arg === '--limit' || arg === '-l' || arg.startsWith('--limit=') || /^-l./.test(arg)) {
      const value = valued('--limit', '-l')?.trim();
      if (value && value.length <= 4096) fields.limit = value;
      else dropped.push(value === undefined ? arg : `${arg} ${value}`);
    } else dropped.push(arg);
  }
  if (diff !== undefined && !fields.check) dropped.push(diff);
  return { fields, dropped };
}

// Maps, not object literals: a source value such as `constructor` must not find Object.prototype's.
const TYPES = new Map<string, SurveyQuestionType>([
  ['', 'text'],
  ['int', 'integer'],
  ['enum', 'choice'],
  ['secret', 'password'],
]);

/** A default as the question's type wants it, or undefined when it cannot be one. */
function convertDefault(type: SurveyQuestionType, raw: string): unknown {
  if (type === 'integer') return /^-?\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : undefined;
  return raw;
}

/** The Baton survey of Semaphore survey variables; each variable or default that cannot be kept is a warning. */
export function mapSurvey(
  vars: readonly SemaphoreSurveyVar[],
  where: string,
  warnings: string[],
): SurveyQuestion[] | undefined {
  const questions: SurveyQuestion[] = [];
  const seen = new Set<string>();
  for (const v of vars) {
    const variable = v.name ?? '';
    const drop = (why: string) =>
      warnings.push(`${where}: survey variable "${cut(variable, 100)}" is not imported: ${why}`);
    if (!AnsibleVariable.safeParse(variable).success) {
      drop('not a valid Ansible variable name');
      continue;
    }
    if (seen.has(variable)) {
      drop('it is asked twice');
      continue;
    }
    const type = TYPES.get(v.type ?? '');
    if (type === undefined) {
      drop(`its type ${v.type} is unknown`);
      continue;
    }
    if (questions.length >= MAX_SURVEY_QUESTIONS) {
      drop(`Baton surveys hold at most ${MAX_SURVEY_QUESTIONS} questions`);
      continue;
    }
    const q: SurveyQuestion = {
      variable,
      question: cut(text(v.title) ?? variable, 400),
      type,
      required: v.required ?? false,
    };
    const description = text(v.description);
    if (description) q.description = cut(description, 2000);
    if (type === 'choice') {
      const values = (v.values ?? []).map((x) => x.value ?? '').filter((x) => x !== '' && x.length <= 1000);
      const choices = [...new Set(values)];
      if (!choices.length) {
        drop('a choice without values');
        continue;
      }
      if (choices.length > MAX_SURVEY_CHOICES)
        warnings.push(`${where}: survey variable "${variable}" keeps its first ${MAX_SURVEY_CHOICES} choices`);
      q.choices = choices.slice(0, MAX_SURVEY_CHOICES);
    }
    const raw = v.default_value;
    if (raw !== null && raw !== undefined && raw !== '') {
      const value = convertDefault(type, raw);
      const problem = value === undefined ? 'not an integer' : surveyAnswerProblem(q, value);
      if (problem)
        warnings.push(`${where}: survey variable "${variable}" loses its default "${cut(raw, 100)}": ${problem}`);
      else q.default = value;
    }
    seen.add(variable);
    questions.push(q);
  }
  return questions.length ? questions : undefined;
}
