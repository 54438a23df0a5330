// A cursor-paged list as a table: its load error, loading, an empty state, the rows, and "Load more".
import type { ReactNode } from 'react';
import { LoadError } from './forms';
import { LoadMore, Loading } from './layout';

/** What `usePagedList` gives, as far as the table needs it. */
export interface PagedRows<T> {
  items: T[];
  isLoading: boolean;
  error: unknown;
  hasMore: boolean;
  loadingMore: boolean;
  loadMore(): void;
}

interface Props<T> {
  list: PagedRows<T>;
  /** said while the first page loads ("Loading credentials") */
  what: string;
  /** the table's name for screen readers (a visually hidden caption) */
  caption?: string;
  /** shown when the list is empty (and did not fail): what to do next, usually an <EmptyState> */
  empty: ReactNode;
  /** the header cells (<th scope="col">…) */
  head: ReactNode;
  /** one item's row(s), keyed */
  row(item: T): ReactNode;
  className?: string;
  testId?: string;
}

/**
 * A failed load shows its error; rows already loaded stay under it (a failed refresh keeps what was read), and an
 * empty list that failed shows no empty state (the error says why there is nothing).
 */
export function PagedTable<T>({ list, what, caption, empty, head, row, className, testId }: Props<T>) {
  return (
    <>
      {list.error ? <LoadError error={list.error} /> : null}
      {list.isLoading ? (
        <Loading what={what} />
      ) : list.items.length > 0 ? (
        <div className="table-wrap">
          <table className={className} data-testid={testId}>
            {caption ? <caption className="visually-hidden">{caption}</caption> : null}
            <thead>
              <tr>{head}</tr>
            </thead>
            <tbody>{list.items.map(row)}</tbody>
          </table>
        </div>
      ) : list.error ? null : (
        empty
      )}
      <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} />
    </>
  );
}

/** Column heads of numeric columns (right-aligned, like their cells). */
export function NumericHeads({ labels }: { labels: readonly string[] }) {
  return (
    <>
      {labels.map((label) => (
        <th key={label} scope="col" className="num">
          {label}
        </th>
      ))}
    </>
  );
}
