// The approval queue: held runs the caller may decide on and has not yet (never their own), with the policies that
// hold them, how many approvals each has and needs, and when the hold expires.
import type { Run } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { RunActions } from '../run/RunActions';
import { usePolicies } from '../runs/lookups';
import { Submitter } from '../runs/RunRow';
import './approvals.css';

/** Others decide too, and holds expire: keep the queue fresh. */
const REFRESH_MS = 5_000;

export default function ApprovalsPage() {
  const list = usePagedList<Run>('/v1/runs?awaiting=me', { refetchInterval: REFRESH_MS });
  // Operators and admins may read policies (names for ids a run's approvals_needed lacks); viewers see ids.
  const policies = usePolicies(useHasRole('operator'));

  return (
    <>
      <PageHeader title="Approvals" subtitle="Runs held by an approval policy, waiting for your decision." />
      <PagedTable
        list={list}
        what="Loading the approval queue"
        caption="Runs awaiting your approval, newest first"
        className="approvals-table"
        empty={
          <EmptyState title="Nothing awaits your approval">
            When an approval policy holds a run and names you as an approver (as a user, by your role or through a
            team), the run waits here until enough approvers approve it or one rejects it. Your own runs never wait for
            you: someone else decides on them.
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Run</th>
            <th scope="col">Held by</th>
            <th scope="col">Submitted by</th>
            <th scope="col">Submitted</th>
            <th scope="col">Expires</th>
            <th scope="col">Decision</th>
          </>
        }
        row={(run) => (
          <tr key={run.id} data-run={run.id}>
            <td>
              <Link href={`/runs/${run.id}`} className="mono">
                {run.id}
              </Link>
              <div className="muted mono">{run.playbook}</div>
              {run.check ? <div className="muted">check mode</div> : null}
            </td>
            <td>
              <HeldBy run={run} policyName={policies.nameOf} />
            </td>
            <td>
              <Submitter id={run.submitted_by} />
            </td>
            <td>
              <Time at={run.created_at} />
            </td>
            <td>
              <Time at={run.hold_expires_at} empty="never" />
            </td>
            <td>
              <RunActions run={run} compact />
              <PriorDecisions run={run} />
            </td>
          </tr>
        )}
      />
    </>
  );
}

/** Each holding policy with its approvals so far out of those it needs. */
function HeldBy({ run, policyName }: { run: Run; policyName(id: string): string | undefined }) {
  const needed = run.approvals_needed ?? [];
  const ids = run.held_by ?? [];
  if (needed.length === 0 && ids.length === 0)
    return <span className="muted">held because of its origin ({run.origin})</span>;
  const rows =
    needed.length > 0
      ? needed.map((n) => ({
          id: n.policy_id,
          name: n.name || policyName(n.policy_id),
          got: n.approved,
          of: n.min_approvals,
        }))
      : ids.map((id) => ({ id, name: policyName(id), got: undefined, of: undefined }));
  return (
    <ul className="held-by">
      {rows.map((r) => (
        <li key={r.id} data-policy={r.id}>
          <span className={r.name ? undefined : 'mono'}>{r.name ?? r.id}</span>
          {r.of !== undefined ? (
            <span className="muted approvals-count">
              {' '}
              {r.got} of {r.of} approval{r.of === 1 ? '' : 's'}
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** Who approved so far (a reject would have finished the run). */
function PriorDecisions({ run }: { run: Run }) {
  const approvals = run.approvals.filter((a) => a.decision === 'approve');
  if (!approvals.length) return null;
  return <div className="muted prior-decisions">Approved by {approvals.map((a) => a.username).join(', ')}</div>;
}
