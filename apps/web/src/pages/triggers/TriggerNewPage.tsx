// Creating a webhook trigger: a name, what a push starts (it must run a project's playbook: the pushed commit is
// run), the filters, and signature enforcement. The answer's hook URL and secret are shown once, here.
import type { TriggerWithSecret } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { emptyTarget, TargetFields, type TargetDraft, targetFrom, useTargetTemplate } from '../schedules/TargetFields';
import type { LocalErrors } from '../templates/spec/runDraft';
import { emptyFilters, type FilterDraft, filtersFrom } from './filters';
import { FilterFields } from './FilterFields';
import { HookSecret } from './HookSecret';
import '../templates/spec/launch.css';

export default function TriggerNewPage() {
  const canCreate = useHasRole('operator');
  const [created, setCreated] = useState<TriggerWithSecret | null>(null);
  const [, navigate] = useLocation();
  if (!canCreate)
    return (
      <NotAllowed title="New trigger">
        Triggers are created by operators and admins. <Link href="/triggers">Back to triggers</Link>
      </NotAllowed>
    );
  if (created)
    return (
      <>
        <PageHeader title={`Trigger ${created.name} created`} subtitle="Add the hook to your repository's webhooks." />
        <HookSecret trigger={created} onDone={() => navigate(`/triggers/${created.id}`)} />
        <Link href={`/triggers/${created.id}`}>Go to the trigger</Link>
      </>
    );
  return <TriggerForm onCreated={setCreated} />;
}

function TriggerForm({ onCreated }: { onCreated(t: TriggerWithSecret): void }) {
  const [name, setName] = useState('');
  const [target, setTarget] = useState<TargetDraft>(() => emptyTarget('run', true));
  const [filters, setFilters] = useState<FilterDraft>(emptyFilters);
  const [requireSignature, setRequireSignature] = useState(true);
  const [localErrors, setLocalErrors] = useState<LocalErrors>({});
  const template = useTargetTemplate(target);
  const create = useApiMutation<unknown, TriggerWithSecret>('POST', '/v1/triggers', {
    invalidate: ['/v1/triggers'],
    onSuccess: onCreated,
  });

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const built = targetFrom(target, template.data);
    setLocalErrors(built.errors);
    if (Object.keys(built.errors).length) return;
    create.mutate({ name, target: built.target, require_signature: requireSignature, filters: filtersFrom(filters) });
  }

  const error = create.error;
  return (
    <>
      <PageHeader
        title="New trigger"
        subtitle="A push to the target's repository launches the target, of exactly the pushed commit."
      />
      <form onSubmit={onSubmit} noValidate aria-label="New trigger">
        <FormError error={error} fields={['name', 'target', 'filters', 'require_signature']} />
        <Field label="Name" name="name" error={error}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <TargetFields draft={target} onChange={setTarget} error={error} localErrors={localErrors} what="A push" />
        <FilterFields draft={filters} onChange={setFilters} error={error} />
        <label className="check-row">
          <input type="checkbox" checked={requireSignature} onChange={(e) => setRequireSignature(e.target.checked)} />{' '}
          Require a valid signature (refuse unsigned deliveries)
        </label>
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create trigger'}
          </button>
          <Link href="/triggers" className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}
