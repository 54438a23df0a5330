import { ValidationError } from './errors.js';

/** Opaque cursors: base64url of the last key on the previous page. */
export function encodeCursor(key: string | number): string {
  return Buffer.from(String(key), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!key || !/^[\w-]+$/.test(key)) throw new ValidationError('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor this server issued' }]);
  return key;
}

export interface Page<T> {
  items: T[];
  /** cursor for the next page, when there is one */
  next?: string | undefined;
}

/** Repositories are asked for limit + 1 rows; the extra one only tells whether there is a next page. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => string | number): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: encodeCursor(keyOf(items[items.length - 1]!)) };
}
