// Pipeline runs: the run history narrowed to `kind=pipeline`, newest first.
import type { Run } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { LoadError } from '../../ui/forms';
import { EmptyState, LoadMore, Loading, PageHeader } from '../../ui/layout';
import { StatusBadge } from '../../ui/Status';
import { durationBetween, formatDuration, Time } from '../../ui/Time';
import '../templates/spec/launch.css';

export default function PipelinesPage() {
  const canCreate = useHasRole('operator');
  const runs = usePagedList<Run>('/v1/runs?kind=pipeline', { refetchInterval: 10_000 });
  const pipelines = runs.items;
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
      {runs.error ? <LoadError error={runs.error} /> : null}
      {runs.isLoading ? (
        <Loading what="Loading pipeline runs" />
      ) : pipelines.length === 0 && !runs.error ? (
        <EmptyState title="No pipeline runs yet">
          {canCreate
            ? 'Build one with “New pipeline”: add steps, order them, and submit. Pipeline templates launch them too.'
            : 'Pipelines submitted by operators, or launched from templates and schedules, show here.'}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Pipeline runs</caption>
            <thead>
              <tr>
                <th scope="col">Pipeline</th>
                <th scope="col">Status</th>
                <th scope="col">Origin</th>
                <th scope="col">Created</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {pipelines.map((r) => (
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
              ))}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore hasMore={runs.hasMore} loading={runs.loadingMore} onClick={runs.loadMore} />
    </>
  );
}
