// The run's events, paged by after_seq: seq, time, kind, host, task; filterable by kind and host.
import type { RunEvent } from '@baton/contracts';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, qs } from '../../api/client';
import type { ApiError } from '../../api/client';
import { LoadError } from '../../ui/forms';
import { EmptyState, LoadMore } from '../../ui/layout';
import { Time } from '../../ui/Time';

const PAGE = 100;
const KINDS = [
  'status',
  'playbook_on_start',
  'playbook_on_play_start',
  'playbook_on_task_start',
  'runner_on_ok',
  'runner_on_failed',
  'runner_on_unreachable',
  'runner_on_skipped',
  'playbook_on_stats',
  'log',
];

function summary(e: RunEvent): string {
  const d = e.data;
  if (e.kind === 'status')
    return [d.status, d.conclusion, d.reason].filter((x) => typeof x === 'string' && x).join(' · ');
  if (e.kind === 'log') return `lines ${String(d.start_line)}–${Number(d.end_line) - 1}`;
  return '';
}

export function EventsTable({ runId }: { runId: string }) {
  const id = useId();
  const [kind, setKind] = useState('');
  const [host, setHost] = useState('');
  const path = `/v1/runs/${runId}/events${qs({ kind, host: host.trim(), limit: PAGE })}`;
  const q = useInfiniteQuery<RunEvent[], ApiError>({
    queryKey: [path, 'paged'],
    queryFn: ({ pageParam, signal }) => api.get<RunEvent[]>(`${path}&after_seq=${pageParam as number}`, signal),
    initialPageParam: 0,
    getNextPageParam: (last) => (last.length === PAGE ? last[last.length - 1]!.seq : undefined),
  });
  const events = q.data?.pages.flat() ?? [];
  return (
    <section aria-labelledby="events-heading">
      <h2 id="events-heading">Events</h2>
      <div className="filters">
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value)}>
          <option value="">All kinds</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <label htmlFor={`${id}-host`}>Host</label>
        <input id={`${id}-host`} value={host} onChange={(e) => setHost(e.target.value)} placeholder="any host" />
      </div>
      {q.error ? <LoadError error={q.error} /> : null}
      {!q.isLoading && events.length === 0 ? (
        <EmptyState title="No events">
          {kind || host
            ? 'Nothing matches these filters: clear them to see every event.'
            : 'Events appear as the run goes.'}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table aria-label="Events">
            <thead>
              <tr>
                <th scope="col" className="num">
                  Seq
                </th>
                <th scope="col">Time</th>
                <th scope="col">Kind</th>
                <th scope="col">Host</th>
                <th scope="col">Task</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <tr key={e.seq}>
                  <td className="num">{e.seq}</td>
                  <td>
                    <Time at={e.ts} />
                  </td>
                  <td className="mono">{e.kind}</td>
                  <td className="mono">{typeof e.data.host === 'string' ? e.data.host : ''}</td>
                  <td>{typeof e.data.task === 'string' ? e.data.task : ''}</td>
                  <td className="muted">{summary(e)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore hasMore={q.hasNextPage} loading={q.isFetchingNextPage} onClick={() => void q.fetchNextPage()} />
    </section>
  );
}
