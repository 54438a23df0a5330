// Personal API tokens (issue 12, "API tokens"): named bearer tokens for automation, created, listed and revoked by
// their owner (admins: anyone's). Sign-in tokens (kind session) share the table and the lookup but are not managed
// here: they end with POST /v1/auth/logout, a password change or their expiry.
import type { Role, Token, TokenCreateBody, TokenListQuery, TokenWithSecret } from '@baton/contracts';
import type { AuditRepo, PersonalTokenRow, TokenRepo, TokenRow } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, notFound, type Principal, roleRank, visibleOr404 } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ForbiddenError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';
import { newToken, sha256Hex } from '../crypto/tokens.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** last_used_at is written at most once per this interval per token, not on every request. */
export const TOKEN_USE_INTERVAL_MS = 60_000;

/**
 * A token stops authenticating once its owner's role ranks below the role it was issued under (admin > operator >
 * viewer). Tokens from before issue 12 have no issued role and are not affected.
 */
export function ownerDemotedBelow(token: Pick<TokenRow, 'issued_role'>, ownerRole: string): boolean {
  return token.issued_role !== null && roleRank(ownerRole) < roleRank(token.issued_role);
}

/** Records that `token` authenticated a request at `now`, unless that was already recorded within the interval. */
export async function recordTokenUse(
  tokens: Pick<TokenRepo, 'touch'>,
  token: Pick<TokenRow, 'id' | 'last_used_at'>,
  now: Date,
): Promise<void> {
  const staleBefore = iso(new Date(now.getTime() - TOKEN_USE_INTERVAL_MS));
  if (token.last_used_at !== null && token.last_used_at >= staleBefore) return;
  await tokens.touch(token.id, iso(now), staleBefore);
}

/** Stored kind and scope as the API spells them: rows from before issue 12 are write-scoped session tokens. */
export const tokenKindOf = (row: Pick<TokenRow, 'kind'>): 'session' | 'personal' =>
  row.kind === 'personal' ? 'personal' : 'session';
export const tokenScopeOf = (row: Pick<TokenRow, 'scope'>): 'read' | 'write' =>
  row.scope === 'read' ? 'read' : 'write';

type TxRepos = { tokens: Pick<TokenRepo, 'insert' | 'revoke'>; audit: Pick<AuditRepo, 'append'> };

export function createTokenService(deps: {
  tokens: Pick<TokenRepo, 'listPersonal' | 'findPersonal'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireAdmin'>;
  clock: Clock;
}) {
  function view(row: PersonalTokenRow): Token {
    const now = iso(deps.clock());
    return {
      id: row.id,
      name: row.name ?? '',
      scope: tokenScopeOf(row),
      user_id: row.user_id,
      username: row.username,
      issued_role: row.issued_role as Role,
      status: row.expires_at <= now ? 'expired' : ownerDemotedBelow(row, row.owner_role) ? 'owner_demoted' : 'active',
      created_at: row.created_at,
      expires_at: row.expires_at,
      last_used_at: row.last_used_at,
    };
  }

  /** The caller's own token, or anyone's for an admin; any other is the same 404 as an unknown id. */
  async function visible(p: Principal, id: string): Promise<PersonalTokenRow> {
    return visibleOr404(
      'token',
      id,
      await deps.tokens.findPersonal(id),
      (row) => row.user_id === p.id || p.role === 'admin',
    );
  }

  return {
    /** Any signed-in user, for themselves, with their current role as the token's issued role. */
    async create(p: Principal, body: TokenCreateBody): Promise<TokenWithSecret> {
      // A leaked personal token must not be able to outlive itself by minting another one.
      if (p.tokenKind === 'personal')
        throw new ForbiddenError('a personal token cannot create tokens; sign in to create one');
      const now = deps.clock();
      const secret = newToken();
      const row: TokenRow = {
        id: newId('tok', now.getTime()),
        user_id: p.id,
        token_hash: sha256Hex(secret),
        created_at: iso(now),
        expires_at: iso(new Date(now.getTime() + body.expires_in_days * DAY_MS)),
        revoked_at: null,
        kind: 'personal',
        name: body.name,
        scope: body.scope,
        issued_role: p.role,
        last_used_at: null,
      };
      await deps.transaction(async (r) => {
        await r.tokens.insert(row);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'token.create',
            object: row.id,
            summary: `created personal token "${body.name}" (${row.id}, scope ${body.scope}, expires ${row.expires_at}) for ${p.username}`,
          },
          deps.clock,
        );
      });
      return { ...view({ ...row, username: p.username, owner_role: p.role }), token: secret };
    },

    /** The caller's own tokens; admins may name a user (`user`) or ask for everyone's (`all=true`). */
    async list(p: Principal, query: TokenListQuery): Promise<Page<Token>> {
      const everyone = query.all === 'true';
      if (everyone || (query.user !== undefined && query.user !== p.id)) deps.authz.requireAdmin(p);
      const userId = everyone ? undefined : (query.user ?? p.id);
      const rows = await deps.tokens.listPersonal(
        { userId },
        { limit: query.limit + 1, before: decodeCursor(query.cursor) },
      );
      return toPage(rows.map(view), query.limit, (t) => t.id);
    },

    async get(p: Principal, id: string): Promise<Token> {
      return view(await visible(p, id));
    },

    /** Revokes at once: the next request with the token answers 401. */
    async revoke(p: Principal, id: string): Promise<void> {
      const row = await visible(p, id);
      await deps.transaction(async (r) => {
        // Revoked meanwhile by someone else: as unknown as a revoked token is.
        if (!(await r.tokens.revoke(id, iso(deps.clock())))) throw notFound('token', id);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'token.revoke',
            object: id,
            summary: `revoked personal token "${row.name}" (${id}) of ${row.username}`,
          },
          deps.clock,
        );
      });
    },
  };
}
export type TokenService = ReturnType<typeof createTokenService>;
