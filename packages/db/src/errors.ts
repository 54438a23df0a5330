/**
 * A write met a unique constraint (a name taken, a membership or grant that exists). Repositories throw it in
 * place of the driver's error, so callers need not know either driver's codes; services map it to their 409.
 */
export class DuplicateKeyError extends Error {
  override readonly name = 'DuplicateKeyError';
  constructor(
    /** the table whose constraint refused the write, when the driver says */
    readonly table: string | undefined,
    /** the constraint's columns, when the driver says */
    readonly columns: readonly string[],
    options: { cause: unknown },
  ) {
    super(`duplicate key in ${table ?? 'a table'}${columns.length ? ` (${columns.join(', ')})` : ''}`, options);
  }
}

/** The driver's unique-violation error as a DuplicateKeyError; undefined for any other error. */
function toDuplicateKeyError(err: unknown): DuplicateKeyError | undefined {
  const e = err as { code?: unknown; table?: unknown; detail?: unknown; message?: unknown } | null;
  if (e?.code === '23505') {
    // PostgreSQL: `Key (subject_id, object_id)=(…) already exists.`
    const keys = typeof e.detail === 'string' ? /^Key \((.+?)\)=/.exec(e.detail)?.[1] : undefined;
    return new DuplicateKeyError(typeof e.table === 'string' ? e.table : undefined, keys ? keys.split(', ') : [], {
      cause: err,
    });
  }
  if (e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // SQLite: `UNIQUE constraint failed: team_members.team_id, team_members.user_id`
    const refs =
      typeof e.message === 'string' ? (/constraint failed: (.+)$/.exec(e.message)?.[1]?.split(', ') ?? []) : [];
    const table = refs[0]?.split('.')[0];
    return new DuplicateKeyError(
      table,
      refs.map((r) => r.slice(r.indexOf('.') + 1)),
      { cause: err },
    );
  }
  return undefined;
}

/** A unique violation, as either driver reports it or as a DuplicateKeyError (tests that write around the repositories). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof DuplicateKeyError || toDuplicateKeyError(err) !== undefined;
}

/** Awaits a write; a unique violation comes out as a DuplicateKeyError, any other failure as it is. */
export async function refusingDuplicates<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    throw toDuplicateKeyError(err) ?? err;
  }
}

/** Why a database call failed for a reason the request did not cause: the database is away, or its storage is full. */
export type DatabaseOutage = 'unavailable' | 'storage_full';

// Node's socket errors and PostgreSQL's connection-exception class (08…), shutdown and start-up states (57P0…) and
// insufficient resources (53…): the database cannot answer now and may again later.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const PG_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[1-3]|53[0-9A-Z]{3})$/;
// pg's own errors for a lost or never-made connection carry no code.
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/;
// SQLite: the file cannot be written or read right now (locked past the busy timeout, an I/O error).
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|PROTOCOL)/;

/**
 * The outage behind a database failure (its cause chain is followed), or undefined for any other error. The HTTP layer
 * answers an outage 503 rather than 500: the request was fine and may be tried again.
 */
export function databaseOutage(err: unknown): DatabaseOutage | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    // SQLite's full disk, or PostgreSQL's disk_full.
    if (code === 'SQLITE_FULL' || code === '53100') return 'storage_full';
    if (
      typeof code === 'string' &&
      (NETWORK_CODES.has(code) || PG_UNAVAILABLE.test(code) || SQLITE_UNAVAILABLE.test(code))
    )
      return 'unavailable';
    if (typeof message === 'string' && code === undefined && PG_CONNECTION_MESSAGES.test(message)) return 'unavailable';
  }
  return undefined;
}
