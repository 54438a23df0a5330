// On a finished run's page: "Explain" asks the AI why it ended as it did (POST /v1/runs/{id}/explain), showing the
// summary, likely causes and fixes, and each cited event as a link to its lines in the log viewer below (`#L<n>`,
// the viewer's own line address). Hidden when no provider is configured.
import type { Run, RunExplanation } from '@baton/contracts';
import { useMutation } from '@tanstack/react-query';
import { type MouseEvent, useState } from 'react';
import { type ApiError, request } from '../../api/client';
import { Time } from '../../ui/Time';
import { Advisory } from './Advisory';
import { AiProblem } from './AiProblem';
import { useAiConfigured } from './useAiStatus';
import './ai.css';

/** `hasLog`: the page shows this run's log (a split's or a pipeline's log is its children's). */
export function RunExplainPanel({ run, hasLog }: { run: Run; hasLog: boolean }) {
  const configured = useAiConfigured();
  if (!configured || run.status !== 'finished') return null;
  return <ExplainPanel run={run} hasLog={hasLog} />;
}

function ExplainPanel({ run, hasLog }: { run: Run; hasLog: boolean }) {
  // The last explanation stays on screen when a refresh fails (the failure shows above it).
  const [e, setExplanation] = useState<RunExplanation | null>(null);
  const explain = useMutation<RunExplanation, ApiError, boolean>({
    mutationFn: async (refresh) =>
      (
        await request<RunExplanation>('POST', `/v1/runs/${run.id}/explain${refresh ? '?refresh=true' : ''}`, {
          body: {},
        })
      ).body,
    onSuccess: (fresh) => setExplanation(fresh),
  });
  return (
    <section className="card ai-panel" aria-labelledby="ai-explain-heading" data-testid="ai-explain">
      <div className="ai-panel-head">
        <h2 id="ai-explain-heading">AI explanation</h2>
        {!e ? (
          <button type="button" className="btn" disabled={explain.isPending} onClick={() => explain.mutate(false)}>
            {explain.isPending ? 'Explaining…' : 'Explain this run'}
          </button>
        ) : null}
      </div>
      {explain.isPending ? (
        <p className="muted" role="status">
          Asking the AI provider…
        </p>
      ) : null}
      <AiProblem error={explain.error} />
      {e ? (
        <div className="ai-answer">
          <Advisory />
          <p className="ai-summary" data-testid="ai-summary">
            {e.summary}
          </p>
          <Points title="Likely causes" items={e.likely_causes} />
          <Points title="Suggested fixes" items={e.suggested_fixes} />
          <Citations explanation={e} hasLog={hasLog} />
          <p className="muted ai-meta" data-testid="ai-meta">
            {e.cached ? 'cached' : 'fresh'} · {e.model} · <Time at={e.generated_at} />{' '}
            <button
              type="button"
              className="btn btn-small"
              disabled={explain.isPending}
              onClick={() => explain.mutate(true)}
            >
              Refresh
            </button>
          </p>
        </div>
      ) : null}
    </section>
  );
}

function Points({ title, items }: { title: string; items: string[] }) {
  if (!items.length) return null;
  return (
    <>
      <h3>{title}</h3>
      <ol className="ai-points">
        {items.map((t, i) => (
          <li key={i}>{t}</li>
        ))}
      </ol>
    </>
  );
}

/** Each cited event: a link to its first log line; the range is [start_line, end_line). */
function Citations({ explanation, hasLog }: { explanation: RunExplanation; hasLog: boolean }) {
  if (!explanation.cited_lines.length) return null;
  return (
    <>
      <h3>Cited log lines</h3>
      <ul className="ai-citations" aria-label="Cited events">
        {explanation.cited_lines.map((c) => {
          const last = c.end_line !== null && c.start_line !== null ? Math.max(c.start_line, c.end_line - 1) : null;
          const lines =
            c.start_line === null
              ? ''
              : last === null || last === c.start_line
                ? `line ${c.start_line}`
                : `lines ${c.start_line}–${last}`;
          return (
            <li key={c.seq} data-seq={c.seq}>
              {hasLog && c.start_line !== null ? (
                <a href={`#L${c.start_line}`} onClick={jumpTo(c.start_line)}>
                  Event {c.seq}: {lines}
                </a>
              ) : (
                <span>
                  Event {c.seq}
                  {lines ? `: ${lines}` : ' (no log lines)'}
                </span>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/**
 * Goes to a log line the way the log viewer's own line links do: the address becomes `#L<n>` and the viewer, told
 * by a hashchange (sent even when the address already says so), scrolls the line into view and marks it.
 */
function jumpTo(line: number) {
  return (ev: MouseEvent) => {
    ev.preventDefault();
    history.replaceState(history.state, '', `#L${line}`);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    document.getElementById('log-heading')?.scrollIntoView({ block: 'start' });
  };
}
