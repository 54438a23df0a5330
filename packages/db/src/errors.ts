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
