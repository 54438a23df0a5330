import type { Kysely, Selectable } from 'kysely';
import type { Schema, SsoCodeTable } from '../schema.js';

export type SsoCodeRow = Selectable<SsoCodeTable>;

/** One-time sign-in codes (stored as hashes) that hand a browser its token. */
export function createSsoCodeRepo(db: Kysely<Schema>) {
  return {
    async insert(row: SsoCodeRow): Promise<void> {
      await db.insertInto('sso_codes').values(row).execute();
    },
    /**
     * Marks the code used and returns it, when it is unused and not expired at `now`; otherwise undefined. One
     * conditional UPDATE, so two replicas exchanging the same code at once cannot both win.
     */
    async consume(codeHash: string, now: string): Promise<SsoCodeRow | undefined> {
      return db
        .updateTable('sso_codes')
        .set({ used_at: now })
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
    },
    async find(codeHash: string): Promise<SsoCodeRow | undefined> {
      return db.selectFrom('sso_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    },
    /** Housekeeping: codes past their expiry can never be exchanged. */
    async deleteExpired(now: string): Promise<void> {
      await db.deleteFrom('sso_codes').where('expires_at', '<=', now).execute();
    },
  };
}
export type SsoCodeRepo = ReturnType<typeof createSsoCodeRepo>;
