// On the page of a run the AI proposed (origin `ai`): the request it was proposed for and the model's rationale,
// so approvers see why before deciding. Shown whether or not a provider is configured now: the record stays.
import type { Run, RunProposalRecord } from '@baton/contracts';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Time } from '../../ui/Time';
import { Advisory } from './Advisory';
import './ai.css';

export function RunProposalPanel({ run }: { run: Run }) {
  if (run.origin !== 'ai') return null;
  return <ProposalPanel runId={run.id} />;
}

function ProposalPanel({ runId }: { runId: string }) {
  const q = useApi<RunProposalRecord>(`/v1/runs/${runId}/proposal`, { staleTime: 300_000 });
  const p = q.data;
  return (
    <section className="card ai-panel" aria-labelledby="ai-proposal-heading" data-testid="ai-proposal">
      <h2 id="ai-proposal-heading">Proposed by AI</h2>
      {q.error ? <LoadError error={q.error} /> : null}
      {p ? (
        <>
          <Advisory>
            This run was proposed by a language model from the request below; check what it does before approving it.
          </Advisory>
          <h3>Request</h3>
          <blockquote className="ai-quote" data-testid="ai-request">
            {p.request}
          </blockquote>
          <h3>Rationale</h3>
          <p data-testid="ai-rationale">{p.proposal.rationale}</p>
          <p className="muted">
            {p.model} · <Time at={p.created_at} />
          </p>
        </>
      ) : null}
    </section>
  );
}
