import type { SelectQueryBuilder, StringReference } from 'kysely';

/** Keyset page request: rows strictly "before" `before` in the list's order, at most `limit` of them. */
export interface PageQuery {
  limit: number;
  before?: string | undefined;
}

/**
 * The one keyset page query: ordered by `key` (unique within the list), at most `page.limit` rows, only those
 * past `page.before` in that order (newest first: descending, so `<`).
 */
export function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  key: StringReference<DB, TB>,
  page: PageQuery,
  order: 'asc' | 'desc' = 'desc',
): SelectQueryBuilder<DB, TB, O> {
  const q = query.orderBy(key, order).limit(page.limit);
  // `as never`: the key's value type does not narrow through the generic reference; it is text in every list.
  return page.before ? q.where(key, order === 'desc' ? '<' : '>', page.before as never) : q;
}
