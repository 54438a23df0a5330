// One host's drift under one playbook and inventory: its resources with their diffs, the reconcile run proposed
// for them (if any), and for operators a Reconcile button that proposes one (always held for approval).
import type { DriftItem, ReconcileBody, ReconcileResult, Run } from '@baton/contracts';
import { Link } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { ConfirmButton } from '../../ui/Confirm';
import { FormError } from '../../ui/forms';
import { StatusBadge } from '../../ui/Status';
import { Time } from '../../ui/Time';
import { DiffView } from './DiffView';
import { shortCommit } from './format';

export interface DriftGroup {
  host: string;
  playbook: string;
  inventory_id: string | null;
  items: DriftItem[];
}

export function DriftGroupCard({
  group: g,
  inventoryName,
  projectName,
}: {
  group: DriftGroup;
  inventoryName: string;
  projectName: string | null;
}) {
  const commit = g.items[0]!.commit;
  const proposed = [...new Set(g.items.map((d) => d.reconcile_run_id).filter((id): id is string => id !== null))];
  return (
    <div
      className="card drift-group"
      data-drift-group={`${g.host} ${g.playbook} ${g.inventory_id ?? ''}`}
      aria-label={`${g.playbook} on ${inventoryName}`}
      role="group"
    >
      <div className="drift-group-head">
        <div>
          <span className="mono">{g.playbook}</span> <span className="muted">on</span> {inventoryName}
          {projectName ? (
            <span className="muted">
              {' '}
              · {projectName}
              {commit ? (
                <span className="mono" title={commit}>
                  @{shortCommit(commit)}
                </span>
              ) : null}
            </span>
          ) : null}
          <span className="muted">
            {' '}
            · {g.items.length} resource{g.items.length === 1 ? '' : 's'}
          </span>
        </div>
        <ReconcileButton group={g} inventoryName={inventoryName} proposed={proposed} />
      </div>
      {proposed.map((id) => (
        <ReconcileRunNote key={id} id={id} />
      ))}
      <ul className="drift-items">
        {g.items.map((d) => (
          <li key={d.id} className="drift-item" data-drift={d.id} data-task={d.task}>
            <div className="drift-item-head">
              <strong>{d.task || '(unnamed task)'}</strong>
              {d.item !== undefined ? (
                <span>
                  {' '}
                  item <code>{d.item}</code>
                </span>
              ) : null}
              {d.action ? <span className="mono muted"> {d.action}</span> : null}
              <span className="muted mono obs-small"> {d.task_path}</span>
              <span className="drift-found muted">
                found in{' '}
                <Link href={`/runs/${d.found_in_run_id}`} className="mono">
                  {d.found_in_run_id}
                </Link>{' '}
                <Time at={d.found_at} />
              </span>
            </div>
            <DiffView diff={d.diff} noLog={d.no_log} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function ReconcileButton({
  group: g,
  inventoryName,
  proposed,
}: {
  group: DriftGroup;
  inventoryName: string;
  /** reconcile runs the resources already name (shown by the card) */
  proposed: string[];
}) {
  const mayReconcile = useHasRole('operator');
  const reconcile = useApiMutation<ReconcileBody, ReconcileResult>('POST', '/v1/drift/reconcile', {
    invalidate: ['/v1/drift', '/v1/runs', '/v1/approvals'],
  });
  if (!mayReconcile) return null;
  const body: ReconcileBody = {
    host: g.host,
    playbook: g.playbook,
    ...(g.inventory_id ? { inventory_id: g.inventory_id } : {}),
  };
  return (
    <div className="drift-reconcile">
      <ConfirmButton
        danger={false}
        question={`Reconcile ${g.host}?`}
        confirmLabel="Propose the run"
        detail={
          <p>
            Proposes a run of <span className="mono">{g.playbook}</span> on {inventoryName}, at the commit of the dry
            run, limited to <span className="mono">{g.host}</span> and not in check mode, to put its {g.items.length}{' '}
            drifting resource{g.items.length === 1 ? '' : 's'} back in the desired state. The run is held until someone
            approves it.
          </p>
        }
        onConfirm={() => reconcile.mutate(body)}
        disabled={reconcile.isPending}
      >
        {reconcile.isPending ? 'Proposing…' : 'Reconcile'}
      </ConfirmButton>
      {/* Until the refreshed list names the new run on its resources (then the card shows it with its state). */}
      {reconcile.data && !proposed.includes(reconcile.data.run.id) ? (
        <p className="banner banner-info drift-proposed" role="status">
          Proposed run{' '}
          <Link href={`/runs/${reconcile.data.run.id}`} className="mono">
            {reconcile.data.run.id}
          </Link>
          : waiting for approval.
        </p>
      ) : null}
      <FormError error={reconcile.error} />
    </div>
  );
}

/** A reconcile run already proposed for these resources, with its state (held until approved). */
function ReconcileRunNote({ id }: { id: string }) {
  const run = useApi<Run>(`/v1/runs/${id}`, { refetchInterval: 10_000, retry: false });
  return (
    <p className="drift-reconcile-run" data-reconcile-run={id} role="status">
      Reconcile run{' '}
      <Link href={`/runs/${id}`} className="mono" data-testid="reconcile-run">
        {id}
      </Link>{' '}
      {run.data ? (
        <StatusBadge status={run.data.status} conclusion={run.data.conclusion} />
      ) : (
        <span className="muted">proposed</span>
      )}
      {run.data?.status === 'held' ? (
        <span className="muted">
          {' '}
          — waiting for approval on the <Link href="/approvals">Approvals</Link> page.
        </span>
      ) : null}
    </p>
  );
}
