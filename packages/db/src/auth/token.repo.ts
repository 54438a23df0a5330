import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { ApiTokenTable, Schema } from '../schema.js';
import type { UserRow } from '../users/user.repo.js';

export type TokenRow = Selectable<ApiTokenTable>;
/** A personal token with its owner's name and current role (for listing and for the owner_demoted status). */
export type PersonalTokenRow = TokenRow & { username: string; owner_role: string };

export function createTokenRepo(db: Kysely<Schema>) {
  const personal = () =>
    db
      .selectFrom('api_tokens as t')
      .innerJoin('users as u', 'u.id', 't.user_id')
      .selectAll('t')
      .select(['u.username', 'u.role as owner_role'])
      .where('t.kind', '=', 'personal')
      .where('t.revoked_at', 'is', null);

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
    /**
     * Records a use at `at` unless one was recorded after `staleBefore`: the condition sits in the UPDATE, so every
     * replica writes at most once per interval per token, whatever the others did.
     */
    async touch(id: string, at: string, staleBefore: string): Promise<void> {
      await db
        .updateTable('api_tokens')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', staleBefore)]))
        .execute();
    },
    /** Personal tokens not revoked (expired ones included), newest first; one user's or, without `userId`, all. */
    async listPersonal(filter: { userId?: string | undefined }, page: PageQuery): Promise<PersonalTokenRow[]> {
      let q = personal();
      if (filter.userId !== undefined) q = q.where('t.user_id', '=', filter.userId);
      return keysetPage(q, 't.id', page).execute();
    },
    async findPersonal(id: string): Promise<PersonalTokenRow | undefined> {
      return personal().where('t.id', '=', id).executeTakeFirst();
    },
    /** False when the token was already revoked (or does not exist). */
    async revoke(id: string, at: string): Promise<boolean> {
      const r = await db
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
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
