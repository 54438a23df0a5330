// Pipeline runs: the run history narrowed to `kind=pipeline`, newest first.
import type { Run } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { StatusBadge } from '../../ui/Status';
import { durationBetween, formatDuration, Time } from '../../ui/Time';
import '../templates/spec/launch.css';

export default function PipelinesPage() {
  const canCreate = useHasRole('operator');
  const runs = usePagedList<Run>('/v1/runs?kind=pipeline', { refetchInterval: 10_000 });
  return (
    <>
      <PageHeader
        title="Pipelines"
        subtitle="Ordered playbook steps run as one: each step starts when the one before has finished and its condition holds."
        actions={
          canCreate ? (
            <Link href="/pipelines/new" className="btn btn-primary">
              New pipeline
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={runs}
        what="Loading pipeline runs"
        caption="Pipeline runs"
        empty={
          <EmptyState title="No pipeline runs yet">
            {canCreate
              ? 'Build one with “New pipeline”: add steps, order them, and submit. Pipeline templates launch them too.'
              : 'Pipelines submitted by operators, or launched from templates and schedules, show here.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Pipeline</th>
            <th scope="col">Status</th>
            <th scope="col">Origin</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
          </>
        }
        row={(r) => (
          <tr key={r.id}>
            <td>
              {/* A pipeline's name is in `playbook` ("(pipeline)" when it was given none). */}
              <Link href={`/runs/${r.id}`}>{r.playbook !== '(pipeline)' ? r.playbook : 'Unnamed pipeline'}</Link>
              <div className="muted mono">{r.id}</div>
            </td>
            <td>
              <StatusBadge status={r.status} conclusion={r.conclusion} reason={r.reason} />
            </td>
            <td>{r.origin}</td>
            <td>
              <Time at={r.created_at} />
            </td>
            <td>{formatDuration(durationBetween(r.started_at, r.finished_at))}</td>
          </tr>
        )}
      />
    </>
  );
}
