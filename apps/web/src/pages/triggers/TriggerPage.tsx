// One webhook trigger: its hook URL, rename, signature enforcement, filters, a new secret (shown once), delete,
// who may use it, and the runs its deliveries started.
import type { Trigger, TriggerWithSecret, User } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { AccessPanel } from '../../ui/AccessPanel';
import { ConfirmButton } from '../../ui/Confirm';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { CopyButton, Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { ObjectRuns } from '../runs/ObjectRuns';
import { TargetSummary } from '../templates/spec/SpecSummary';
import { filterDraftFrom, filtersFrom, filterWords } from './filters';
import { FilterFields } from './FilterFields';
import { HookSecret } from './HookSecret';
import '../templates/spec/launch.css';

export default function TriggerPage() {
  const { id } = useParams<{ id: string }>();
  const canChange = useHasRole('operator');
  const q = useApi<Trigger>(`/v1/triggers/${id}`);
  const owner = useApi<User>(q.data ? `/v1/users/${q.data.created_by}` : null, { retry: false });
  // The new secret lives only here, in this page's memory: leaving the page drops it.
  const [rotated, setRotated] = useState<TriggerWithSecret | null>(null);
  const update = useApiMutation<Record<string, unknown>, Trigger>('PUT', `/v1/triggers/${id}`, {
    invalidate: ['/v1/triggers'],
  });
  const rotate = useApiMutation<void, TriggerWithSecret>('POST', `/v1/triggers/${id}/rotate-secret`, {
    invalidate: ['/v1/triggers'],
    onSuccess: setRotated,
  });
  const remove = useDeleteObject('triggers', id);
  if (!q.data) return <NotLoaded error={q.error} what="Loading the trigger" />;
  const t = q.data;
  return (
    <>
      <PageHeader
        title={t.name}
        subtitle="A webhook trigger: a push to the target's repository launches it."
        actions={
          canChange ? (
            <div className="actions-row">
              <ConfirmButton
                question={`Rotate the signing secret of ${t.name}?`}
                detail="The old secret is refused from now on: update the webhook in your forge with the new one. The hook URL stays the same."
                confirmLabel="Rotate secret"
                danger={false}
                onConfirm={() => rotate.mutate()}
                disabled={rotate.isPending}
              >
                Rotate secret
              </ConfirmButton>
              <DeleteButton
                remove={remove}
                question={`Delete the trigger ${t.name}?`}
                detail="Its hook URL answers 404 from then on; runs it started stay."
              />
            </div>
          ) : null
        }
      />
      <FormError error={rotate.error ?? remove.error} />
      {rotated ? <HookSecret trigger={rotated} onDone={() => setRotated(null)} /> : null}
      <Details
        items={[
          [
            'Hook URL',
            t.hook_url ? (
              <span key="h">
                <code>{t.hook_url}</code> <CopyButton text={t.hook_url} label="Copy URL" />
              </span>
            ) : (
              <span className="muted">shown to those who manage the trigger</span>
            ),
          ],
          ['Signature', t.require_signature ? 'required (unsigned deliveries are refused)' : 'not required'],
          ['Fires on', filterWords(t.filters)],
          ['Last delivery', <Time key="d" at={t.last_delivery_at} empty="never" />],
          [
            'Last run',
            t.last_run_id ? (
              <Link key="r" href={`/runs/${t.last_run_id}`}>
                {t.last_run_id}
              </Link>
            ) : null,
          ],
          ['Owner (runs are launched as)', owner.data?.username ?? t.created_by],
          ['Created', <Time key="c" at={t.created_at} />],
        ]}
      />
      {canChange ? <TriggerSettings key={t.updated_at} trigger={t} update={update} /> : null}
      <h2>What it starts</h2>
      <TargetSummary target={t.target} />
      <AccessPanel objectId={t.id} />
      <h2>Runs</h2>
      <ObjectRuns
        filter={{ trigger: t.id }}
        caption="Runs of this trigger"
        empty={
          <EmptyState title="No deliveries have started a run yet">
            Add the hook URL to the repository's webhooks; each accepted push shows here.
          </EmptyState>
        }
        columns={[{ head: 'Commit', className: 'mono', cell: (r) => r.commit?.slice(0, 12) ?? '—' }]}
      />
    </>
  );
}

function TriggerSettings({
  trigger,
  update,
}: {
  trigger: Trigger;
  update: ReturnType<typeof useApiMutation<Record<string, unknown>, Trigger>>;
}) {
  const [name, setName] = useState(trigger.name);
  const [requireSignature, setRequireSignature] = useState(trigger.require_signature);
  const [filters, setFilters] = useState(() => filterDraftFrom(trigger.filters));
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    update.mutate({ name, require_signature: requireSignature, filters: filtersFrom(filters) });
  }
  return (
    <section className="card form-section" aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      <form onSubmit={onSubmit} noValidate aria-label="Trigger settings">
        <FormError error={update.error} fields={['name', 'require_signature', 'filters']} />
        <Field label="Name" name="name" error={update.error}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <label className="check-row">
          <input type="checkbox" checked={requireSignature} onChange={(e) => setRequireSignature(e.target.checked)} />{' '}
          Enforce signatures (refuse deliveries without a valid signature)
        </label>
        <FilterFields draft={filters} onChange={setFilters} error={update.error} />
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={update.isPending}>
            {update.isPending ? 'Saving…' : 'Save settings'}
          </button>
          {update.isSuccess ? <span role="status">Saved.</span> : null}
        </SubmitRow>
      </form>
    </section>
  );
}
