// On the fleet page: "Ask about the fleet". The answer is grounded in the runs, hosts, drift and task trends the
// caller may see; each citation links to its page. Hidden when no provider is configured.
import type { AskAnswer, AskBody, DriftItem } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { useApi, useApiMutation } from '../../api/hooks';
import { Field } from '../../ui/forms';
import { hostPath } from '../observation/filters';
import { Advisory } from './Advisory';
import { AiProblem } from './AiProblem';
import { useAiConfigured } from './useAiStatus';
import './ai.css';

type Citation = AskAnswer['citations'][number];

export function FleetAskBox() {
  const configured = useAiConfigured();
  if (!configured) return null;
  return <AskBox />;
}

function AskBox() {
  const [question, setQuestion] = useState('');
  const ask = useApiMutation<AskBody, AskAnswer>('POST', '/v1/ai/ask');
  function submit(e: FormEvent) {
    e.preventDefault();
    ask.mutate({ question });
  }
  const a = ask.data;
  return (
    <section className="card ai-panel" aria-labelledby="ai-ask-heading" data-testid="ai-ask">
      <h2 id="ai-ask-heading">Ask about the fleet</h2>
      <form onSubmit={submit} noValidate className="ai-ask-form">
        <Field
          label="Question"
          name="question"
          error={ask.error}
          hint="Answered from the recent runs, host health, drift and task trends you may see."
        >
          {(p) => (
            <input
              {...p}
              value={question}
              maxLength={2000}
              placeholder="Which hosts keep failing, and why?"
              onChange={(e) => setQuestion(e.target.value)}
            />
          )}
        </Field>
        <button type="submit" className="btn btn-primary" disabled={ask.isPending}>
          {ask.isPending ? 'Asking…' : 'Ask'}
        </button>
      </form>
      <AiProblem error={ask.error} fields={['question']} />
      {a && !ask.isPending ? (
        <div className="ai-answer" data-testid="ai-answer">
          <Advisory />
          <p className="ai-summary">{a.answer}</p>
          {a.citations.length ? <Citations citations={a.citations} /> : null}
        </div>
      ) : null}
    </section>
  );
}

const KIND_WORDS: Record<Citation['kind'], string> = { run: 'Run', host: 'Host', drift: 'Drift', task: 'Task' };

function Citations({ citations }: { citations: Citation[] }) {
  // A drift citation names the item only; its host (for the drift page's filter) comes from the drift list.
  const drift = useApi<DriftItem[]>(citations.some((c) => c.kind === 'drift') ? `/v1/drift${qs({ limit: 50 })}` : null);
  const hostOf = (id: string) => drift.data?.find((d) => d.id === id)?.host;
  return (
    <>
      <h3>Sources</h3>
      <ul className="ai-citations" aria-label="Sources">
        {citations.map((c) => (
          <li key={`${c.kind}:${c.id}`} data-kind={c.kind}>
            {KIND_WORDS[c.kind]}{' '}
            <Link href={citationPath(c, hostOf)} className="mono">
              {c.id}
            </Link>
          </li>
        ))}
      </ul>
    </>
  );
}

function citationPath(c: Citation, hostOf: (id: string) => string | undefined): string {
  switch (c.kind) {
    case 'run':
      return `/runs/${encodeURIComponent(c.id)}`;
    case 'host':
      return hostPath(c.id);
    case 'task':
      return `/tasks/${encodeURIComponent(c.id)}`;
    case 'drift':
      return `/drift${qs({ host: hostOf(c.id) })}`;
  }
}
