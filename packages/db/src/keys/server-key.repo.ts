import type { Kysely, Selectable } from 'kysely';
import type { Schema, ServerKeyTable } from '../schema.js';

export type ServerKeyRow = Selectable<ServerKeyTable>;

/** Server-wide key pairs (e.g. the audit export signing key), private halves encrypted under the master key. */
export function createServerKeyRepo(db: Kysely<Schema>) {
  return {
    async get(purpose: string): Promise<ServerKeyRow | undefined> {
      return db.selectFrom('server_keys').selectAll().where('purpose', '=', purpose).executeTakeFirst();
    },
    /** Inserts unless another process got there first; returns the stored row either way. */
    async insertOrGet(row: ServerKeyRow): Promise<ServerKeyRow> {
      await db
        .insertInto('server_keys')
        .values(row)
        .onConflict((oc) => oc.column('purpose').doNothing())
        .execute();
      const stored = await this.get(row.purpose);
      if (!stored) throw new Error(`server key ${row.purpose} vanished`);
      return stored;
    },
  };
}
export type ServerKeyRepo = ReturnType<typeof createServerKeyRepo>;
