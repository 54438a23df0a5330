import type { Kysely, Selectable } from 'kysely';
import type { ApiTokenTable, Schema } from '../schema.js';
import type { UserRow } from '../users/user.repo.js';

export type TokenRow = Selectable<ApiTokenTable>;

export function createTokenRepo(db: Kysely<Schema>) {
  return {
    async insert(row: TokenRow): Promise<void> {
      await db.insertInto('api_tokens').values(row).execute();
    },
    /** The token with this hash and its user, if it is neither revoked nor expired at `now`. */
    async findLive(tokenHash: string, now: string): Promise<{ token: TokenRow; user: UserRow } | undefined> {
      const row = await db
        .selectFrom('api_tokens as t')
        .innerJoin('users as u', 'u.id', 't.user_id')
        .select([
          't.id as t_id',
          't.user_id as t_user_id',
          't.token_hash as t_token_hash',
          't.created_at as t_created_at',
          't.expires_at as t_expires_at',
          't.revoked_at as t_revoked_at',
          't.kind as t_kind',
          't.name as t_name',
          't.scope as t_scope',
          't.issued_role as t_issued_role',
          't.last_used_at as t_last_used_at',
          'u.id',
          'u.username',
          'u.email',
          'u.role',
          'u.password_hash',
          'u.created_at',
          'u.updated_at',
        ])
        .where('t.token_hash', '=', tokenHash)
        .where('t.revoked_at', 'is', null)
        .where('t.expires_at', '>', now)
        .executeTakeFirst();
      if (!row) return undefined;
      const {
        t_id,
        t_user_id,
        t_token_hash,
        t_created_at,
        t_expires_at,
        t_revoked_at,
        t_kind,
        t_name,
        t_scope,
        t_issued_role,
        t_last_used_at,
        ...user
      } = row;
      return {
        token: {
          id: t_id,
          user_id: t_user_id,
          token_hash: t_token_hash,
          created_at: t_created_at,
          expires_at: t_expires_at,
          revoked_at: t_revoked_at,
          kind: t_kind,
          name: t_name,
          scope: t_scope,
          issued_role: t_issued_role,
          last_used_at: t_last_used_at,
        },
        user,
      };
    },
    async revoke(id: string, at: string): Promise<void> {
      await db
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
    },
    async revokeAllForUser(userId: string, at: string, exceptTokenId?: string): Promise<void> {
      let q = db
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null);
      if (exceptTokenId) q = q.where('id', '!=', exceptTokenId);
      await q.execute();
    },
    /** Housekeeping: drop tokens that can no longer authenticate. */
    async deleteDead(now: string): Promise<void> {
      await db
        .deleteFrom('api_tokens')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('revoked_at', 'is not', null)]))
        .execute();
    },
  };
}
export type TokenRepo = ReturnType<typeof createTokenRepo>;
