import { decodeCursor, encodeCursor, notIssued, type Page } from '../common/paging.js';

/** A cursor holding a non-negative integer (an offset into a ranked list, or a seq to continue before). */
export function decodeNumberCursor(cursor: string | undefined): number | undefined {
  const key = decodeCursor(cursor);
  if (key === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(key)) throw notIssued();
  return Number(key);
}

/** One page of a list ranked in memory: `limit` items from `offset`, with a cursor to the next offset. */
export function offsetPage<T>(all: readonly T[], offset: number, limit: number): Page<T> {
  const items = all.slice(offset, offset + limit);
  return offset + limit < all.length ? { items, next: encodeCursor(offset + limit) } : { items };
}

/** One page of a list read newest first by seq with limit + 1 rows: the cursor continues before the last seq. */
export function seqPage<Row, T>(
  rows: readonly Row[],
  limit: number,
  seqOf: (r: Row) => number,
  view: (r: Row) => T,
): Page<T> {
  const items = rows.slice(0, limit).map(view);
  return rows.length > limit ? { items, next: encodeCursor(seqOf(rows[limit - 1]!)) } : { items };
}
