// A split's shards or a pipeline's steps, each with its own state and a link to its page.
import type { Run } from '@baton/contracts';
import { Link } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Loading } from '../../ui/layout';
import { StatusBadge } from '../../ui/Status';
import { durationBetween, formatDuration, Time } from '../../ui/Time';

/** Whether a run is the parent of shards or steps, and of which. */
export function childKind(run: Run): 'shards' | 'steps' | null {
  if (run.kind === 'split' || (run.kind === 'step' && run.shard_count !== null)) return 'shards';
  return run.kind === 'pipeline' ? 'steps' : null;
}

/** A parent's shards or steps (nothing for any other run, or while the run is loading). */
export function useChildRuns(run: Run | undefined) {
  const kind = run ? childKind(run) : null;
  // Shards and steps change state without the parent's stream saying so: refresh while the parent is unfinished.
  return useApi<Run[]>(kind && run ? `/v1/runs/${run.id}/${kind}` : null, {
    refetchInterval: run?.status === 'finished' ? false : 3_000,
  });
}

export function ChildRuns({ run }: { run: Run }) {
  const shards = childKind(run) === 'shards';
  const q = useChildRuns(run);
  const label = shards ? 'Shards' : 'Steps';
  return (
    <section aria-labelledby="children-heading">
      <h2 id="children-heading">{label}</h2>
      {q.error ? <LoadError error={q.error} /> : null}
      {q.isLoading ? <Loading what={`Loading ${label.toLowerCase()}`} /> : null}
      {q.data ? (
        <div className="table-wrap">
          <table aria-label={label}>
            <thead>
              <tr>
                <th scope="col">{shards ? 'Shard' : 'Step'}</th>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Hosts</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {q.data.map((c) => (
                <tr key={c.id} data-child={c.id}>
                  <td>
                    {shards
                      ? `${(c.shard_index ?? 0) + 1} of ${c.shard_count ?? q.data.length}`
                      : `${(c.step_index ?? 0) + 1}. ${c.step_name ?? ''}`}
                  </td>
                  <td>
                    <Link href={`/runs/${c.id}`} className="mono">
                      {c.id}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={c.status} conclusion={c.conclusion} reason={c.reason} />
                  </td>
                  <td className="mono">{c.hosts?.join(', ') ?? <span className="muted">all</span>}</td>
                  <td>
                    <Time at={c.started_at} empty="not yet" />
                  </td>
                  <td>{c.started_at ? formatDuration(durationBetween(c.started_at, c.finished_at)) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
