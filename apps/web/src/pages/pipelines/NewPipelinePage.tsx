// Building a pipeline: the steps in order, each its own run spec, submitted as one run (POST /v1/pipelines). The
// API checks every step before anything runs and answers at `steps.<i>.<field>`.
import type { Run } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { FormError, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import type { LocalErrors } from '../templates/spec/runDraft';
import { PipelineFields } from './PipelineFields';
import { emptyPipelineDraft, type PipelineDraft, pipelineSpecFrom } from './pipelineDraft';

export default function NewPipelinePage() {
  const canCreate = useHasRole('operator');
  if (!canCreate)
    return (
      <NotAllowed title="New pipeline">
        Submitting pipelines needs the operator or admin role. <Link href="/pipelines">Back to pipelines</Link>
      </NotAllowed>
    );
  return <NewPipelineForm />;
}

function NewPipelineForm() {
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState<PipelineDraft>(emptyPipelineDraft);
  const [localErrors, setLocalErrors] = useState<LocalErrors>({});
  const submit = useApiMutation<unknown, Run>('POST', '/v1/pipelines', {
    invalidate: ['/v1/runs'],
    onSuccess: (run) => navigate(`/runs/${run.id}`),
  });

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const built = pipelineSpecFrom(draft);
    setLocalErrors(built.errors);
    if (!Object.keys(built.errors).length) submit.mutate(built.spec);
  }

  return (
    <>
      <PageHeader
        title="New pipeline"
        subtitle="Steps run one after another; each starts when the one before has finished and its condition holds."
      />
      <form onSubmit={onSubmit} noValidate aria-label="New pipeline">
        <FormError
          error={submit.error}
          fields={['name', 'steps', 'inventory_id', 'inventory', 'extra_vars', 'credential_ids', 'labels']}
        />
        <PipelineFields draft={draft} onChange={setDraft} prefix="" error={submit.error} localErrors={localErrors} />
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={submit.isPending || draft.steps.length === 0}>
            {submit.isPending ? 'Submitting…' : 'Submit pipeline'}
          </button>
          <Link href="/pipelines" className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}
