import type { Kysely, Selectable } from 'kysely';
import { refusingDuplicates } from '../errors.js';
import type { Schema, UserIdentityTable } from '../schema.js';

export type UserIdentityRow = Selectable<UserIdentityTable>;

/** External identities (OIDC issuer + subject, SAML IdP entity id + NameID) linked to the Baton user they created. */
export function createUserIdentityRepo(db: Kysely<Schema>) {
  return {
    async insert(row: UserIdentityRow): Promise<void> {
      await refusingDuplicates(db.insertInto('user_identities').values(row).execute());
    },
    async find(issuer: string, subject: string): Promise<UserIdentityRow | undefined> {
      return db
        .selectFrom('user_identities')
        .selectAll()
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .executeTakeFirst();
    },
    async listForUser(userId: string): Promise<UserIdentityRow[]> {
      return db.selectFrom('user_identities').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
    },
    async touch(issuer: string, subject: string, at: string): Promise<void> {
      await db
        .updateTable('user_identities')
        .set({ last_login_at: at })
        .where('issuer', '=', issuer)
        .where('subject', '=', subject)
        .execute();
    },
  };
}
export type UserIdentityRepo = ReturnType<typeof createUserIdentityRepo>;
