// /ai/propose — a run described in plain language: the AI proposes a project playbook on an inventory, the server
// submits it like any run, held for someone else to approve. Shows the rationale and the held run, or the reasons
// the proposal could not be submitted (then no run exists).
import type { ProposedRun, ProposeRunBody } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { Field, SubmitRow } from '../../ui/forms';
import { Details, PageHeader } from '../../ui/layout';
import { StatusBadge } from '../../ui/Status';
import { Advisory } from './Advisory';
import { AiOperatorPage } from './AiUnavailable';
import { AiProblem } from './AiProblem';
import './ai.css';

export default function ProposePage() {
  return (
    <AiOperatorPage title="Propose a run" what="Proposing runs">
      <ProposeForm />
    </AiOperatorPage>
  );
}

function ProposeForm() {
  const [text, setText] = useState('');
  const propose = useApiMutation<ProposeRunBody, ProposedRun>('POST', '/v1/ai/propose-run', {
    invalidate: ['/v1/runs'],
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    propose.mutate({ request: text });
  }
  const p = propose.data;
  return (
    <>
      <PageHeader
        title="Propose a run"
        subtitle="Say what should run; the AI picks a playbook and inventory you may use. The run is held until someone else approves it."
      />
      <form className="card" onSubmit={submit} noValidate aria-label="Propose a run">
        <Field label="What should run?" name="request" error={propose.error}>
          {(f) => (
            <textarea
              {...f}
              className="ai-prose"
              rows={4}
              maxLength={4000}
              value={text}
              placeholder="Dry-run the nginx playbook on the web servers in staging"
              onChange={(e) => setText(e.target.value)}
            />
          )}
        </Field>
        <AiProblem error={propose.error} fields={['request']} />
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={propose.isPending}>
            {propose.isPending ? 'Proposing…' : 'Propose'}
          </button>
        </SubmitRow>
      </form>
      {p && !propose.isPending ? <Proposed proposed={p} /> : null}
    </>
  );
}

function Proposed({ proposed: p }: { proposed: ProposedRun }) {
  const { run, proposal } = p;
  return (
    <section className="card ai-panel" aria-labelledby="ai-proposed-heading" data-testid="ai-proposed">
      <h2 id="ai-proposed-heading">
        Run <Link href={`/runs/${run.id}`}>{run.id}</Link> is held for approval
      </h2>
      <p>
        <StatusBadge status={run.status} conclusion={run.conclusion} reason={run.reason} /> Someone else must approve it
        before it runs; you cannot approve your own proposal.
      </p>
      <Advisory>The rationale is the model’s: check the run before approving it.</Advisory>
      <h3>Rationale</h3>
      <p data-testid="ai-rationale">{proposal.rationale}</p>
      <Details
        items={[
          ['Playbook', <span className="mono">{proposal.playbook}</span>],
          ['Ref', proposal.ref ? <span className="mono">{proposal.ref}</span> : null],
          ['Limit', proposal.limit ? <span className="mono">{proposal.limit}</span> : null],
          ['Check mode', proposal.check ? 'yes (--check --diff)' : 'no'],
          [
            'Extra vars',
            proposal.extra_vars && Object.keys(proposal.extra_vars).length ? (
              <code>{JSON.stringify(proposal.extra_vars)}</code>
            ) : null,
          ],
          ['Model', p.model],
        ]}
      />
    </section>
  );
}
