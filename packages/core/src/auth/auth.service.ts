import type { LoginBody, User } from '@baton/contracts';
import type { AuditRepo, TokenRepo, UserRepo } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { RateLimitedError, UnauthenticatedError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decoyHash, verifyPassword } from '../crypto/password.js';
import { newToken, sha256Hex } from '../crypto/tokens.js';
import { ownerDemotedBelow, recordTokenUse, tokenKindOf, tokenScopeOf } from '../tokens/token.service.js';
import { toUser } from '../users/user.view.js';
import { consultThrottle, type LoginThrottle } from './login-throttle.js';

export interface Session {
  principal: Principal;
  user: User;
  expires_at: string;
  /** the bearer token itself (never its secret): name and id matter for personal tokens only */
  token: { id: string; kind: 'session' | 'personal'; scope: 'read' | 'write'; name: string | null };
}

export function createAuthService(deps: {
  users: Pick<UserRepo, 'findByUsername' | 'findById'>;
  tokens: Pick<TokenRepo, 'findLive' | 'touch'>;
  transaction: <T>(
    fn: (r: { tokens: Pick<TokenRepo, 'insert' | 'revoke'>; audit: Pick<AuditRepo, 'append'> }) => Promise<T>,
  ) => Promise<T>;
  throttle: LoginThrottle;
  clock: Clock;
  tokenTtlSeconds: number;
}) {
  const BAD_CREDENTIALS = 'wrong username or password';

  /** Issues a token for a user that has already proven who they are (password now, OIDC/SAML later). */
  async function issueToken(userId: string, how: string, address: string) {
    // The role now: a session ends, like a personal token, once its user is demoted below it.
    const owner = await deps.users.findById(userId);
    if (!owner) throw new UnauthenticatedError('no such user');
    const token = newToken();
    const now = deps.clock();
    const expires_at = iso(new Date(now.getTime() + deps.tokenTtlSeconds * 1000));
    await deps.transaction(async (r) => {
      await r.tokens.insert({
        id: newId('tok', now.getTime()),
        user_id: userId,
        token_hash: sha256Hex(token),
        created_at: iso(now),
        expires_at,
        revoked_at: null,
        kind: 'session',
        name: null,
        scope: 'write',
        issued_role: owner.role,
        last_used_at: null,
      });
      await recordAudit(
        r.audit,
        { actor: userId, action: 'auth.login', object: userId, summary: `signed in with ${how} from ${address}` },
        deps.clock,
      );
    });
    return { token, expires_at };
  }

  return {
    issueToken,

    async login(body: LoginBody, address: string): Promise<{ token: string; expires_at: string; user: User }> {
      // Counted as a failure before the password is checked (and taken back if it is right), in one step with the check.
      const begun = await consultThrottle(() => deps.throttle.begin(body.username, address));
      if (begun.attempt === undefined)
        throw new RateLimitedError('too many failed sign-ins; try again later', begun.retryAfter);
      const user = await deps.users.findByUsername(body.username);
      // Same work whether or not the user exists, and the same answer.
      const ok = await verifyPassword(body.password, user?.password_hash ?? (await decoyHash()));
      if (!user || !ok) {
        if (user) {
          // Recorded only for real accounts: a mistyped username may be someone's password.
          await deps.transaction((r) =>
            recordAudit(
              r.audit,
              {
                actor: 'anonymous',
                action: 'auth.login_failed',
                object: user.id,
                summary: `failed sign-in for ${user.username} from ${address}`,
              },
              deps.clock,
            ),
          );
        }
        throw new UnauthenticatedError(BAD_CREDENTIALS);
      }
      const attempt = begun.attempt;
      await consultThrottle(() => deps.throttle.recordSuccess(body.username, { address, attempt }));
      const issued = await issueToken(user.id, 'password', address);
      return { ...issued, user: toUser(user) };
    },

    /**
     * Resolves a bearer token; bad, expired and revoked tokens, deleted users and users demoted below the token's
     * issued role all fail the same way. Records the use (at most once a minute per token).
     */
    async authenticate(token: string): Promise<Session> {
      const now = deps.clock();
      const found = await deps.tokens.findLive(sha256Hex(token), iso(now));
      if (!found || ownerDemotedBelow(found.token, found.user.role))
        throw new UnauthenticatedError('invalid or expired token');
      // Bookkeeping only: a database that cannot take the write (its disk full) must not turn every read away.
      await recordTokenUse(deps.tokens, found.token, now).catch(() => {});
      const user = toUser(found.user);
      const kind = tokenKindOf(found.token);
      const scope = tokenScopeOf(found.token);
      return {
        principal: {
          id: user.id,
          username: user.username,
          role: user.role,
          tokenId: found.token.id,
          tokenKind: kind,
          scope,
        },
        user,
        expires_at: found.token.expires_at,
        token: { id: found.token.id, kind, scope, name: found.token.name },
      };
    },

    async logout(p: Principal): Promise<void> {
      if (!p.tokenId) return;
      const tokenId = p.tokenId;
      await deps.transaction(async (r) => {
        await r.tokens.revoke(tokenId, iso(deps.clock()));
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'auth.logout', object: p.id, summary: `signed out ${p.username}` },
          deps.clock,
        );
      });
    },
  };
}
export type AuthService = ReturnType<typeof createAuthService>;
