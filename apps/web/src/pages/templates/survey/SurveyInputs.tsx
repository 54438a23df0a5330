// A survey as a form: each question type its own control, each with the API's messages for
// `survey_answers.<variable>` next to it. Native validation is off on the forms that use it, so the server's words
// (the same rules for every client) are the ones shown.
import type { SurveyQuestion } from '@baton/contracts';
import { Field } from '../../../ui/forms';
import { FieldGroup } from '../spec/FieldGroup';
import { type AnswerDraft, SECRET_PLACEHOLDER } from './surveyDraft';

interface Props {
  questions: SurveyQuestion[];
  values: Record<string, AnswerDraft>;
  onChange(variable: string, value: AnswerDraft): void;
  /** the answers' place in the request body, e.g. `survey_answers.` or `target.survey_answers.` */
  prefix: string;
  error: unknown;
}

export function SurveyInputs({ questions, values, onChange, prefix, error }: Props) {
  return (
    <div className="survey-inputs">
      {questions.map((q) => (
        <Question
          key={q.variable}
          q={q}
          value={values[q.variable]}
          onChange={(v) => onChange(q.variable, v)}
          name={`${prefix}${q.variable}`}
          error={error}
        />
      ))}
    </div>
  );
}

function boundsHint(q: SurveyQuestion): string | undefined {
  const what = q.type === 'integer' || q.type === 'float' ? '' : ' characters';
  if (q.min !== undefined && q.max !== undefined) return `${q.min}–${q.max}${what}`;
  if (q.min !== undefined) return `at least ${q.min}${what}`;
  if (q.max !== undefined) return `at most ${q.max}${what}`;
  return undefined;
}

function Question({
  q,
  value,
  onChange,
  name,
  error,
}: {
  q: SurveyQuestion;
  value: AnswerDraft | undefined;
  onChange(v: AnswerDraft): void;
  name: string;
  error: unknown;
}) {
  const label = `${q.question}${q.required ? ' (required)' : ''}`;
  const secretDefault = q.type === 'password' && q.default === SECRET_PLACEHOLDER;
  const hint =
    [q.description, boundsHint(q), secretDefault ? 'A default is set: leave empty to use it.' : undefined]
      .filter(Boolean)
      .join(' · ') || undefined;
  const text = typeof value === 'string' ? value : '';

  if (q.type === 'multichoice') {
    const picked = Array.isArray(value) ? value : [];
    return (
      <FieldGroup legend={label} name={name} error={error} hint={hint}>
        <div className="check-list">
          {(q.choices ?? []).map((c) => (
            <label key={c}>
              <input
                type="checkbox"
                name={q.variable}
                value={c}
                checked={picked.includes(c)}
                onChange={(e) => onChange(e.target.checked ? [...picked, c] : picked.filter((p) => p !== c))}
              />{' '}
              {c}
            </label>
          ))}
        </div>
      </FieldGroup>
    );
  }
  if (q.type === 'boolean')
    return (
      <FieldGroup legend={label} name={name} error={error} hint={q.description}>
        <label className="check-row">
          <input
            type="checkbox"
            name={q.variable}
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
          />{' '}
          Yes
        </label>
      </FieldGroup>
    );

  return (
    <Field label={label} name={name} error={error} hint={hint}>
      {(p) => {
        const common = { ...p, name: q.variable, value: text, required: q.required };
        switch (q.type) {
          case 'textarea':
            return <textarea {...common} rows={4} onChange={(e) => onChange(e.target.value)} />;
          case 'password':
            return (
              <input
                {...common}
                type="password"
                autoComplete="new-password"
                required={q.required && !secretDefault}
                placeholder={secretDefault ? '•••••••• (default set)' : undefined}
                onChange={(e) => onChange(e.target.value)}
              />
            );
          case 'integer':
          case 'float':
            return (
              <input
                {...common}
                type="number"
                inputMode={q.type === 'integer' ? 'numeric' : 'decimal'}
                step={q.type === 'integer' ? 1 : 'any'}
                min={q.min}
                max={q.max}
                onChange={(e) => onChange(e.target.value)}
              />
            );
          case 'choice':
            return (
              <select {...common} onChange={(e) => onChange(e.target.value)}>
                <option value="">— choose —</option>
                {(q.choices ?? []).map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            );
          case 'text':
          case 'boolean':
          case 'multichoice':
            return (
              <input
                {...common}
                type="text"
                minLength={q.min}
                maxLength={q.max}
                onChange={(e) => onChange(e.target.value)}
              />
            );
        }
      }}
    </Field>
  );
}
