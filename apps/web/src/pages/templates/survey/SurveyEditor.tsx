// The survey editor: questions in order, each with its variable, wording, type, required flag, default, bounds and
// choices. Problems come back from the API at `survey.<i>.<field>` and show at that question's field.
import type { SurveyQuestionType } from '@baton/contracts';
import { Field } from '../../../ui/forms';
import { MoveButtons } from '../spec/MoveButtons';
import { emptyQuestion, hasChoices, hasLength, hasRange, QUESTION_TYPES, type QuestionDraft } from './surveyDraft';

interface Props {
  questions: QuestionDraft[];
  onChange(questions: QuestionDraft[]): void;
  error: unknown;
}

export function SurveyEditor({ questions, onChange, error }: Props) {
  const update = (i: number, patch: Partial<QuestionDraft>) =>
    onChange(questions.map((q, j) => (j === i ? { ...q, ...patch } : q)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...questions];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    onChange(next);
  };
  return (
    <section className="survey-editor" aria-label="Survey questions">
      {questions.length === 0 ? (
        <p className="muted">
          No questions: the template launches as it is. Add a question to ask the launcher for a value (it becomes an
          extra var).
        </p>
      ) : null}
      <ol className="editor-list">
        {questions.map((q, i) => (
          <li key={q.key} className="card editor-item">
            <div className="editor-item-head">
              <h3>
                Question {i + 1}
                {q.variable ? <code> {q.variable}</code> : null}
              </h3>
              <MoveButtons
                what={`question ${i + 1}`}
                index={i}
                count={questions.length}
                onMove={(by) => move(i, by)}
                onRemove={() => onChange(questions.filter((_, j) => j !== i))}
              />
            </div>
            <QuestionFields q={q} index={i} onChange={(patch) => update(i, patch)} error={error} />
          </li>
        ))}
      </ol>
      <button type="button" className="btn" onClick={() => onChange([...questions, emptyQuestion()])}>
        Add question
      </button>
    </section>
  );
}

function QuestionFields({
  q,
  index,
  onChange,
  error,
}: {
  q: QuestionDraft;
  index: number;
  onChange(patch: Partial<QuestionDraft>): void;
  error: unknown;
}) {
  const f = (name: string) => `survey.${index}.${name}`;
  const bounds = hasLength(q.type) ? 'length' : hasRange(q.type) ? 'value' : null;
  return (
    <>
      <div className="spec-row">
        <Field label="Variable" name={f('variable')} error={error} hint="The extra var the answer sets.">
          {(p) => (
            <input
              {...p}
              className="mono"
              value={q.variable}
              onChange={(e) => onChange({ variable: e.target.value })}
            />
          )}
        </Field>
        <Field label="Question" name={f('question')} error={error}>
          {(p) => <input {...p} value={q.question} onChange={(e) => onChange({ question: e.target.value })} />}
        </Field>
        <Field label="Answer type" name={f('type')} error={error}>
          {(p) => (
            <select
              {...p}
              value={q.type}
              onChange={(e) => onChange({ type: e.target.value as SurveyQuestionType, default: '', keepSecret: false })}
            >
              {QUESTION_TYPES.map((t) => (
                <option key={t.type} value={t.type}>
                  {t.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Field label="Description" name={f('description')} error={error}>
        {(p) => <input {...p} value={q.description} onChange={(e) => onChange({ description: e.target.value })} />}
      </Field>
      <label className="check-row">
        <input type="checkbox" checked={q.required} onChange={(e) => onChange({ required: e.target.checked })} />{' '}
        Required (an answer or a default must be given)
      </label>
      {hasChoices(q.type) ? (
        <Field label="Choices (one per line)" name={f('choices')} error={error}>
          {(p) => (
            <textarea {...p} rows={3} value={q.choices} onChange={(e) => onChange({ choices: e.target.value })} />
          )}
        </Field>
      ) : null}
      <div className="spec-row">
        {bounds ? (
          <>
            <Field label={`Least ${bounds}`} name={f('min')} error={error}>
              {(p) => <input {...p} type="number" value={q.min} onChange={(e) => onChange({ min: e.target.value })} />}
            </Field>
            <Field label={`Greatest ${bounds}`} name={f('max')} error={error}>
              {(p) => <input {...p} type="number" value={q.max} onChange={(e) => onChange({ max: e.target.value })} />}
            </Field>
          </>
        ) : null}
        <DefaultField q={q} name={f('default')} onChange={onChange} error={error} />
      </div>
    </>
  );
}

function DefaultField({
  q,
  name,
  onChange,
  error,
}: {
  q: QuestionDraft;
  name: string;
  onChange(patch: Partial<QuestionDraft>): void;
  error: unknown;
}) {
  if (q.type === 'password')
    return (
      <Field
        label="Default"
        name={name}
        error={error}
        hint={
          q.keepSecret ? (
            <>
              A default is set (never shown).{' '}
              <button
                type="button"
                className="link-button"
                onClick={() => onChange({ keepSecret: false, default: '' })}
              >
                Remove it
              </button>
            </>
          ) : (
            'Stored sealed; nobody can read it back.'
          )
        }
      >
        {(p) => (
          <input
            {...p}
            type="password"
            autoComplete="new-password"
            placeholder={q.keepSecret ? '•••••••• (type to replace)' : undefined}
            value={q.default}
            onChange={(e) => onChange({ default: e.target.value })}
          />
        )}
      </Field>
    );
  if (q.type === 'boolean')
    return (
      <Field label="Default" name={name} error={error}>
        {(p) => (
          <select {...p} value={q.default} onChange={(e) => onChange({ default: e.target.value })}>
            <option value="">none</option>
            <option value="true">yes</option>
            <option value="false">no</option>
          </select>
        )}
      </Field>
    );
  if (q.type === 'multichoice' || q.type === 'textarea')
    return (
      <Field label={q.type === 'multichoice' ? 'Default (one choice per line)' : 'Default'} name={name} error={error}>
        {(p) => <textarea {...p} rows={2} value={q.default} onChange={(e) => onChange({ default: e.target.value })} />}
      </Field>
    );
  return (
    <Field label="Default" name={name} error={error}>
      {(p) => (
        <input
          {...p}
          type={hasRange(q.type) ? 'number' : 'text'}
          step={q.type === 'float' ? 'any' : undefined}
          value={q.default}
          onChange={(e) => onChange({ default: e.target.value })}
        />
      )}
    </Field>
  );
}
