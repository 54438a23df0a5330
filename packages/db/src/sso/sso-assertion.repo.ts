import type { Kysely } from 'kysely';
import { toNumber } from '../dialect.js';
import type { Schema } from '../schema.js';

/** SAML assertion ids already used for a sign-in: a replay is refused on every replica until the assertion expires. */
export function createSsoAssertionRepo(db: Kysely<Schema>) {
  return {
    /**
     * Records the assertion id as used until `expiresAt`: true the first time, false when it was used before, by
     * this or any other replica. The primary key decides (an insert that meets it inserts nothing), so two replicas
     * racing on one assertion cannot both win, and a transaction around the call is not aborted by the refusal.
     */
    async claim(id: string, expiresAt: string): Promise<boolean> {
      const r = await db
        .insertInto('sso_assertions')
        .values({ id, expires_at: expiresAt })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return toNumber(r.numInsertedOrUpdatedRows) > 0;
    },
    /** Housekeeping: ids of assertions no replica would accept any more. Returns how many went. */
    async deleteExpired(now: string): Promise<number> {
      const r = await db.deleteFrom('sso_assertions').where('expires_at', '<=', now).executeTakeFirst();
      return toNumber(r.numDeletedRows);
    },
  };
}
export type SsoAssertionRepo = ReturnType<typeof createSsoAssertionRepo>;
