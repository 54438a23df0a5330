// The runs of one object (a template, schedule, trigger or project) on its page: id, state, what the object adds,
// and when each was created, newest first.
import type { Run } from '@baton/contracts';
import type { ReactNode } from 'react';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { usePagedList } from '../../api/hooks';
import { PagedTable } from '../../ui/PagedTable';
import { StatusBadge } from '../../ui/Status';
import { Time } from '../../ui/Time';

/** A column between the run's state and its creation time. */
export interface RunColumn {
  head: string;
  cell(run: Run): ReactNode;
  className?: string;
}

export function ObjectRuns({
  filter,
  caption,
  empty,
  columns = [],
  latest,
}: {
  /** the /v1/runs filter naming the object (`{ template: id }`) */
  filter: Record<string, string>;
  caption: string;
  empty: ReactNode;
  columns?: RunColumn[];
  /** only the latest few, without "Load more" (the page links to the whole history instead) */
  latest?: number;
}) {
  const list = usePagedList<Run>(`/v1/runs${qs({ ...filter, limit: latest })}`);
  return (
    <PagedTable
      list={latest ? { ...list, hasMore: false } : list}
      what="Loading runs"
      caption={caption}
      empty={empty}
      head={
        <>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          {columns.map((c) => (
            <th scope="col" key={c.head}>
              {c.head}
            </th>
          ))}
          <th scope="col">Created</th>
        </>
      }
      row={(r) => (
        <tr key={r.id}>
          <td>
            <Link href={`/runs/${r.id}`} className="mono">
              {r.id}
            </Link>
          </td>
          <td>
            <StatusBadge status={r.status} conclusion={r.conclusion} reason={r.reason} />
          </td>
          {columns.map((c) => (
            <td key={c.head} className={c.className}>
              {c.cell(r)}
            </td>
          ))}
          <td>
            <Time at={r.created_at} />
          </td>
        </tr>
      )}
    />
  );
}
