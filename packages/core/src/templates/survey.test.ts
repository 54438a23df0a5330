import { describe, expect, it } from '@jest/globals';
import { Survey, type SurveyQuestion } from '@baton/contracts';
import { answerSurvey, passwordVariablesOf } from './survey.js';

const SURVEY: SurveyQuestion[] = Survey.parse([
  { variable: 'name', question: 'Name?', type: 'text', required: true, min: 2, max: 8 },
  { variable: 'notes', question: 'Notes?', type: 'textarea', required: false, max: 20, default: 'none' },
  { variable: 'pw', question: 'Password?', type: 'password', required: true, min: 6 },
  { variable: 'count', question: 'How many?', type: 'integer', required: false, min: 1, max: 10, default: 3 },
  { variable: 'ratio', question: 'Ratio?', type: 'float', required: false, min: 0, max: 1 },
  { variable: 'dry', question: 'Dry run?', type: 'boolean', required: true },
  { variable: 'env', question: 'Where?', type: 'choice', required: true, choices: ['dev', 'prod'] },
  { variable: 'tags', question: 'Which?', type: 'multichoice', required: false, choices: ['a', 'b', 'c'] },
]);

const GOOD = {
  name: 'web',
  notes: 'line one\nline two',
  pw: 's3cret-pw',
  count: 7,
  ratio: 0.25,
  dry: false,
  env: 'prod',
  tags: ['a', 'c'],
};

describe('answerSurvey', () => {
  it('takes good answers of every type, password answers apart', () => {
    expect(answerSurvey(SURVEY, {}, GOOD)).toEqual({
      ok: true,
      value: {
        answers: {
          name: 'web',
          notes: 'line one\nline two',
          count: 7,
          ratio: 0.25,
          dry: false,
          env: 'prod',
          tags: ['a', 'c'],
        },
        secrets: { pw: 's3cret-pw' },
      },
    });
  });

  it('fills unanswered questions with their defaults and leaves optional ones without a default out', () => {
    const r = answerSurvey(SURVEY, {}, { name: 'ab', pw: 'longenough', dry: true, env: 'dev' });
    expect(r).toEqual({
      ok: true,
      value: { answers: { name: 'ab', notes: 'none', count: 3, dry: true, env: 'dev' }, secrets: { pw: 'longenough' } },
    });
  });

  it('uses the stored password default for a password question whose default is sealed, and for "$encrypted$"', () => {
    const survey = Survey.parse([
      { variable: 'token', question: 'Token?', type: 'password', required: true, default: '$encrypted$' },
    ]);
    expect(answerSurvey(survey, { token: 'stored-default' }, {})).toEqual({
      ok: true,
      value: { answers: {}, secrets: { token: 'stored-default' } },
    });
    expect(answerSurvey(survey, { token: 'stored-default' }, { token: '$encrypted$' })).toEqual({
      ok: true,
      value: { answers: {}, secrets: { token: 'stored-default' } },
    });
    expect(answerSurvey(survey, { token: 'stored-default' }, { token: 'given-one' })).toMatchObject({
      value: { secrets: { token: 'given-one' } },
    });
  });

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['a text answer of the wrong type', { name: 5 }, 'name', /must be a string/],
    ['a text answer too short', { name: 'a' }, 'name', /at least 2/],
    ['a text answer too long', { name: 'abcdefghi' }, 'name', /at most 8/],
    ['a text answer on two lines', { name: 'a\nb' }, 'name', /one line/],
    ['a textarea answer too long', { notes: 'x'.repeat(21) }, 'notes', /at most 20/],
    ['a password answer too short', { pw: 'short' }, 'pw', /at least 6/],
    ['a password answer that is not a string', { pw: 123456 }, 'pw', /must be a string/],
    ['an integer answer with a fraction', { count: 2.5 }, 'count', /integer/],
    ['an integer answer as a string', { count: '3' }, 'count', /integer/],
    ['an integer answer under min', { count: 0 }, 'count', /at least 1/],
    ['an integer answer over max', { count: 11 }, 'count', /at most 10/],
    ['a float answer that is not a number', { ratio: 'half' }, 'ratio', /number/],
    ['a float answer over max', { ratio: 1.5 }, 'ratio', /at most 1/],
    ['a float answer under min', { ratio: -0.1 }, 'ratio', /at least 0/],
    ['a boolean answer as a string', { dry: 'yes' }, 'dry', /true or false/],
    ['a choice not among the choices', { env: 'staging' }, 'env', /one of: dev, prod/],
    ['a choice that is not a string', { env: ['dev'] }, 'env', /one of the choices/],
    ['a multichoice answer that is not a list', { tags: 'a' }, 'tags', /list of choices/],
    ['a multichoice answer with an unknown choice', { tags: ['a', 'z'] }, 'tags', /z is not among the choices/],
    ['a multichoice answer repeating a choice', { tags: ['a', 'a'] }, 'tags', /repeat/],
    ['a missing required answer', { name: undefined }, 'name', /required/],
    ['a required answer given as null', { dry: null }, 'dry', /required/],
    ['an empty required text answer', { name: '' }, 'name', /required/],
    ['an answer to no question', { nope: 1 }, 'nope', /no question/],
  ])('refuses %s at body.survey_answers.<variable>', (_what, change, variable, message) => {
    const given: Record<string, unknown> = { ...GOOD, ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete given[k];
    const r = answerSurvey(SURVEY, {}, given);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([{ path: `body.survey_answers.${variable}`, message: expect.stringMatching(message) }]);
  });

  it('answers one error per bad answer, all at once', () => {
    const r = answerSurvey(SURVEY, {}, { name: 1, pw: 'x', count: 99, dry: 'no', env: 'qa', tags: ['q'], zz: 1 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.path).sort()).toEqual(
      ['count', 'dry', 'env', 'name', 'pw', 'tags', 'zz'].map((v) => `body.survey_answers.${v}`),
    );
  });

  it('never throws on hostile input', () => {
    for (const v of [NaN, Infinity, {}, [], [1], Symbol.iterator.toString(), 1e308, -0])
      for (const q of SURVEY) expect(() => answerSurvey(SURVEY, {}, { [q.variable]: v })).not.toThrow();
  });

  it('names the password variables', () => {
    expect(passwordVariablesOf(SURVEY)).toEqual(['pw']);
    expect(passwordVariablesOf(null)).toEqual([]);
  });
});

describe('Survey definitions', () => {
  const q = (over: Record<string, unknown>) => ({
    variable: 'v',
    question: 'Q?',
    type: 'text',
    required: false,
    ...over,
  });
  const paths = (survey: unknown) => {
    const r = Survey.safeParse(survey);
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };

  it('accepts every question type', () => {
    expect(paths(SURVEY)).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a variable with a dash', { variable: 'my-var' }, '0.variable'],
    ['a variable starting with a digit', { variable: '1st' }, '0.variable'],
    ['a Python keyword as variable', { variable: 'class' }, '0.variable'],
    ['a non-ASCII variable', { variable: 'naïve' }, '0.variable'],
    ['an unknown type', { type: 'date' }, '0.type'],
    ['no required', { required: undefined }, '0.required'],
    ['an empty question', { question: ' ' }, '0.question'],
    ['min above max', { min: 5, max: 2 }, '0.max'],
    ['a negative length', { min: -1 }, '0.min'],
    ['a fractional length', { max: 2.5 }, '0.max'],
    ['min on a boolean', { type: 'boolean', min: 1 }, '0.min'],
    ['max on a choice', { type: 'choice', choices: ['a'], max: 1 }, '0.max'],
    ['a fractional bound on an integer', { type: 'integer', min: 0.5 }, '0.min'],
    ['choices on a text question', { choices: ['a'] }, '0.choices'],
    ['a choice question without choices', { type: 'choice' }, '0.choices'],
    ['a multichoice question with empty choices', { type: 'multichoice', choices: [] }, '0.choices'],
    ['repeated choices', { type: 'choice', choices: ['a', 'a'] }, '0.choices'],
    ['a default of the wrong type', { type: 'integer', default: 'three' }, '0.default'],
    ['a default out of range', { type: 'integer', max: 2, default: 3 }, '0.default'],
    ['a default that is not a choice', { type: 'choice', choices: ['a'], default: 'b' }, '0.default'],
    ['a text default too long', { max: 2, default: 'abc' }, '0.default'],
    ['an unknown field', { secret: true }, '0'],
  ])('refuses %s at <i>.<field>', (_what, over, path) => {
    const question = q(over);
    for (const [k, v] of Object.entries(over)) if (v === undefined) delete question[k as keyof typeof question];
    expect(paths([question])).toEqual([path]);
  });

  it('refuses a variable asked twice (at the second) and more than 100 questions', () => {
    expect(paths([q({ variable: 'a' }), q({ variable: 'b' }), q({ variable: 'a' })])).toEqual(['2.variable']);
    const many = Array.from({ length: 101 }, (_, i) => q({ variable: `v${i}` }));
    expect(paths(many)).toEqual(['']);
    expect(paths(many.slice(0, 100))).toEqual([]);
  });
});
