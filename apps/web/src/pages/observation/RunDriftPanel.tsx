// On a reconcile run's page: the drift it was proposed to fix and, once it has finished, what became of each
// resource. Nothing for other runs.
import type { FixedDriftItem, Run } from '@baton/contracts';
import { useEffect } from 'react';
import { Link } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Badge } from '../../ui/Status';
import { hostPath } from './filters';

export function RunDriftPanel({ run }: { run: Run }) {
  if (run.origin !== 'reconcile') return null;
  return <Panel run={run} />;
}

function Panel({ run }: { run: Run }) {
  const q = useApi<FixedDriftItem[]>(`/v1/runs/${run.id}/drift`);
  const { refetch } = q;
  // The run's end settles each resource (in the transaction that stores its last events): read them again then.
  useEffect(() => void refetch(), [run.status, refetch]);
  const items = q.data ?? [];
  return (
    <section aria-labelledby="run-drift-heading" className="run-drift" data-testid="run-drift">
      <h2 id="run-drift-heading">Drift this run reconciles</h2>
      {q.error ? <LoadError error={q.error} /> : null}
      {q.data && items.length === 0 ? <p className="muted">No drifting resource is linked to this run.</p> : null}
      {items.length ? (
        <div className="table-wrap">
          <table aria-label="Drifting resources this run should fix">
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Task</th>
                <th scope="col">Item</th>
                <th scope="col">Action</th>
                <th scope="col">Found in</th>
                <th scope="col">Result</th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id} data-drift={d.id}>
                  <td>
                    <Link href={hostPath(d.host)} className="mono">
                      {d.host}
                    </Link>
                  </td>
                  <td>{d.task}</td>
                  <td>{d.item !== undefined ? <code>{d.item}</code> : <span className="muted">—</span>}</td>
                  <td className="mono">{d.action ?? '—'}</td>
                  <td>
                    <Link href={`/runs/${d.found_in_run_id}`} className="mono">
                      {d.found_in_run_id}
                    </Link>
                  </td>
                  <td>
                    <Outcome item={d} runId={run.id} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function Outcome({ item: d, runId }: { item: FixedDriftItem; runId: string }) {
  if (d.resolved_by_run_id === null)
    return <Badge tone="muted" icon="ring" label="not yet resolved" data={{ fixed: 'pending' }} />;
  const by =
    d.resolved_by_run_id === runId ? null : (
      <>
        {' '}
        by{' '}
        <Link href={`/runs/${d.resolved_by_run_id}`} className="mono">
          {d.resolved_by_run_id}
        </Link>
      </>
    );
  return d.fixed ? (
    <span>
      <Badge tone="ok" icon="check" label="fixed" data={{ fixed: true }} />
      {by}
    </span>
  ) : (
    <span>
      <Badge tone="muted" icon="dash" label="cleared (found unchanged)" data={{ fixed: false }} />
      {by}
    </span>
  );
}
