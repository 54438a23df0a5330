import { decodeUtf8Strictly } from '@baton/contracts';
import { ValidationError } from './errors.js';

/** Opaque cursors: base64url of the last key on the previous page. */
export function encodeCursor(key: string | number): string {
  return Buffer.from(String(key), 'utf8').toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The 400 for a cursor this server could not have issued (also for one that decodes to a key out of range). */
export const notIssued = () =>
  new ValidationError('invalid cursor', [{ path: 'query.cursor', message: 'not a cursor this server issued' }]);

/**
 * The text inside a cursor, or undefined when it is not one this server could have issued: `Buffer.from` would skip
 * foreign characters, ignore stray bits and replace bytes that are not UTF-8, turning garbage into some key.
 * So only base64url exactly as `encodeCursor` writes it, of non-empty UTF-8 without NUL, decodes.
 */
function cursorText(cursor: string): string | undefined {
  if (!BASE64URL.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length === 0 || bytes.toString('base64url') !== cursor) return undefined;
  const text = decodeUtf8Strictly(bytes);
  return text?.includes('\u0000') ? undefined : text;
}

/** The id-like key of a cursor (letters, digits, `_`, `-`); a 400 at query.cursor when it does not decode to one. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const key = cursorText(cursor);
  if (key === undefined || !/^[\w-]+$/.test(key)) throw notIssued();
  return key;
}

/** Like {@link decodeCursor} for keys that are free text (host names hold `:` and `.`): any text that decodes. */
export function decodeTextCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const key = cursorText(cursor);
  if (key === undefined) throw notIssued();
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

/**
 * The repository query for one page of the objects a caller may see (`visible` as Authorizer.visibleIds answers:
 * 'all' for admins): one row more than the page, so toPage can tell whether another page follows.
 */
export function visiblePageQuery(
  page: { limit: number; cursor?: string | undefined },
  visible: 'all' | string[],
): { limit: number; before: string | undefined; idIn: string[] | undefined } {
  return { limit: page.limit + 1, before: decodeCursor(page.cursor), idIn: visible === 'all' ? undefined : visible };
}
