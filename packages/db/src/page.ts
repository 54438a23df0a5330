/** Keyset page request: rows strictly "before" `before` in the list's order, at most `limit` of them. */
export interface PageQuery {
  limit: number;
  before?: string | undefined;
}
