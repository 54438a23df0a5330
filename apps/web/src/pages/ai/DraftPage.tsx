// /ai/draft — a step script drafted by the AI from a description: shown with a copy button, the model's notes and
// what the syntax checks found. The server never runs it; neither does this page.
import type { DraftBody, DraftLanguage, ScriptDraft } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { useApiMutation } from '../../api/hooks';
import { Field, SubmitRow } from '../../ui/forms';
import { CopyButton, PageHeader } from '../../ui/layout';
import { Advisory } from './Advisory';
import { AiOperatorPage } from './AiUnavailable';
import { AiProblem } from './AiProblem';
import './ai.css';

const LANGUAGES: Array<[DraftLanguage, string]> = [
  ['bash', 'Bash'],
  ['python', 'Python'],
  ['powershell', 'PowerShell'],
  ['go', 'Go'],
];
const FIELDS = ['description', 'language', 'context'];

export default function DraftPage() {
  return (
    <AiOperatorPage title="Draft a script" what="Drafting scripts">
      <DraftForm />
    </AiOperatorPage>
  );
}

function DraftForm() {
  const [description, setDescription] = useState('');
  const [language, setLanguage] = useState<DraftLanguage>('bash');
  const [context, setContext] = useState('');
  const draft = useApiMutation<DraftBody, ScriptDraft>('POST', '/v1/ai/draft');
  function submit(e: FormEvent) {
    e.preventDefault();
    draft.mutate({ description, language, ...(context.trim() ? { context } : {}) });
  }
  const d = draft.data;
  return (
    <>
      <PageHeader
        title="Draft a script"
        subtitle="Describe what a step should do; the AI drafts it and Baton checks its syntax without running it."
      />
      <form className="card" onSubmit={submit} noValidate aria-label="Draft a script">
        <Field label="What should the script do?" name="description" error={draft.error}>
          {(p) => (
            <textarea
              {...p}
              className="ai-prose"
              rows={4}
              maxLength={4000}
              value={description}
              placeholder="Rotate the nginx logs older than 7 days and restart nginx if the config test passes"
              onChange={(e) => setDescription(e.target.value)}
            />
          )}
        </Field>
        <Field label="Language" name="language" error={draft.error}>
          {(p) => (
            <select {...p} value={language} onChange={(e) => setLanguage(e.target.value as DraftLanguage)}>
              {LANGUAGES.map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Context (optional)"
          name="context"
          error={draft.error}
          hint="Paths, versions, anything the script should know. No secrets: this text goes to the AI provider."
        >
          {(p) => (
            <textarea
              {...p}
              className="ai-prose"
              rows={3}
              maxLength={8000}
              value={context}
              onChange={(e) => setContext(e.target.value)}
            />
          )}
        </Field>
        <AiProblem error={draft.error} fields={FIELDS} />
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={draft.isPending}>
            {draft.isPending ? 'Drafting…' : 'Draft'}
          </button>
        </SubmitRow>
      </form>
      {d && !draft.isPending ? <DraftResult draft={d} /> : null}
    </>
  );
}

function DraftResult({ draft: d }: { draft: ScriptDraft }) {
  return (
    <section className="card ai-panel" aria-labelledby="ai-draft-heading" data-testid="ai-draft">
      <div className="ai-panel-head">
        <h2 id="ai-draft-heading">Draft ({d.language})</h2>
        <CopyButton text={d.script} label="Copy script" />
      </div>
      <Advisory>Drafted by a language model and never run: read it and test it before using it.</Advisory>
      {d.warnings.length ? (
        <div className="banner banner-warn" data-testid="ai-warnings">
          <strong>What the checks found</strong>
          <ul>
            {d.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </div>
      ) : (
        <p className="muted">The syntax checks found nothing.</p>
      )}
      <pre className="ai-script" data-testid="ai-script" tabIndex={0} aria-label="Drafted script">
        <code>{d.script}</code>
      </pre>
      {d.notes ? (
        <>
          <h3>Notes</h3>
          <p className="ai-notes">{d.notes}</p>
        </>
      ) : null}
    </section>
  );
}
