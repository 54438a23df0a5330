import type { Kysely, Selectable } from 'kysely';
import type { Schema, SsoStateTable } from '../schema.js';

export type SsoStateRow = Selectable<SsoStateTable>;

/** Sign-in handshake state (OIDC state, nonce and PKCE verifier; SAML request ids), readable by every replica. */
export function createSsoStateRepo(db: Kysely<Schema>) {
  return {
    async insert(row: SsoStateRow): Promise<void> {
      await db.insertInto('sso_states').values(row).execute();
    },
    /**
     * Removes the state and returns it (single use): a second take of the same id, on any replica, finds nothing.
     * An expired state is removed too but not returned.
     */
    async take(id: string, provider: string, now: string): Promise<SsoStateRow | undefined> {
      const row = await db
        .deleteFrom('sso_states')
        .where('id', '=', id)
        .where('provider', '=', provider)
        .returningAll()
        .executeTakeFirst();
      return row && row.expires_at > now ? row : undefined;
    },
    async find(id: string): Promise<SsoStateRow | undefined> {
      return db.selectFrom('sso_states').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /** Housekeeping: handshakes nobody finished. */
    async deleteExpired(now: string): Promise<void> {
      await db.deleteFrom('sso_states').where('expires_at', '<=', now).execute();
    },
  };
}
export type SsoStateRepo = ReturnType<typeof createSsoStateRepo>;
