// One notifier: its settings (secrets by name only), a test message, the delivery log, a new signing secret for a
// webhook (shown once), delete, and who may use it.
import type { Delivery, Notifier, NotifierWithSecret } from '@baton/contracts';
import { useState } from 'react';
import { useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { AccessPanel, useCanManage } from '../../ui/AccessPanel';
import { FormError } from '../../ui/forms';
import { Details, EmptyState, PageHeader, SecretOnce } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { KIND_LABELS } from './events';

const ACTIVE = new Set(['pending', 'retrying']);

export default function NotifierPage() {
  const { id } = useParams<{ id: string }>();
  // Test, rotate and delete need `manage` on it (a `use` grant only lets one see it and its deliveries).
  const canChange = useCanManage(id);
  const q = useApi<Notifier>(`/v1/notifiers/${id}`);
  const log = useApi<Delivery[]>(`/v1/notifiers/${id}/deliveries?limit=50`, {
    refetchInterval: (query) => ((query.state.data ?? []).some((d) => ACTIVE.has(d.status)) ? 2000 : false),
  });
  const [rotated, setRotated] = useState<NotifierWithSecret | null>(null);
  const test = useApiMutation<void, { delivery: Delivery }>('POST', `/v1/notifiers/${id}/test`, {
    invalidate: [`/v1/notifiers/${id}/deliveries?limit=50`],
  });
  const rotate = useApiMutation<void, NotifierWithSecret>('POST', `/v1/notifiers/${id}/rotate-secret`, {
    onSuccess: setRotated,
  });
  const remove = useDeleteObject('notifiers', id);
  if (!q.data) return <NotLoaded error={q.error} what="Loading the notifier" />;
  const n = q.data;
  const config = Object.entries(n.config).map(([k, v]): [string, React.ReactNode] => [
    k,
    <span key={k} className="mono wrap-anywhere">
      {Array.isArray(v) ? v.join(', ') : String(v)}
    </span>,
  ]);
  return (
    <>
      <PageHeader
        title={n.name}
        subtitle={KIND_LABELS[n.kind] ?? n.kind}
        actions={
          canChange ? (
            <div className="actions-row">
              <button type="button" className="btn" onClick={() => test.mutate()} disabled={test.isPending}>
                Send test
              </button>
              {n.kind === 'webhook' ? (
                <button type="button" className="btn" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
                  Rotate secret
                </button>
              ) : null}
              <DeleteButton
                remove={remove}
                question={`Delete the notifier ${n.name}?`}
                detail="Its pending deliveries are dropped, never sent."
              />
            </div>
          ) : null
        }
      />
      <FormError error={test.error ?? rotate.error ?? remove.error} />
      {test.data ? (
        <p role="status">Test message queued ({test.data.delivery.id}); its attempt shows in the log below.</p>
      ) : null}
      {rotated ? (
        <SecretOnce label="New signing secret" value={rotated.secret} onDone={() => setRotated(null)} />
      ) : null}
      <Details
        items={[
          [
            'Events',
            <span key="e" className="mono">
              {n.events.join(', ')}
            </span>,
          ],
          ...config,
          ['Secrets set', n.secret_fields.join(', ') || '—'],
          ['Only runs of templates', n.match?.templates?.join(', ') ?? 'any run its owner may see'],
          ['Created', <Time key="c" at={n.created_at} />],
        ]}
      />
      <h2>Deliveries</h2>
      {log.data && log.data.length === 0 ? (
        <EmptyState title="Nothing delivered yet">Send a test message, or wait for a matching event.</EmptyState>
      ) : (
        <table className="table" aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Code</th>
              <th scope="col">Error</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {(log.data ?? []).map((d) => (
              <tr key={d.id} data-testid="delivery" data-status={d.status}>
                <td>
                  <Time at={d.created_at} />
                </td>
                <td className="mono">{d.event}</td>
                <td>{d.status}</td>
                <td>{d.attempts}</td>
                <td>{d.response_code ?? '—'}</td>
                <td className="wrap-anywhere">{d.error ?? '—'}</td>
                <td>
                  <Time at={d.next_attempt_at} empty="—" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <AccessPanel objectId={n.id} />
    </>
  );
}
