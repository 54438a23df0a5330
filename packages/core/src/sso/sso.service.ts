import crypto from 'node:crypto';
import { IdentityEmail, type Role, type SignedIn, type User, Username } from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type SsoCodeRepo,
  type SsoStateRepo,
  type SsoTeamRepo,
  type TeamRepo,
  type UserIdentityRepo,
  type UserRepo,
  type UserRow,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { AuthService } from '../auth/auth.service.js';
import { roleRank } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { UnauthenticatedError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { hashPassword } from '../crypto/password.js';
import { sha256Hex } from '../crypto/tokens.js';
import { toUser } from '../users/user.view.js';
import { SsoError } from './sso.errors.js';

/** Who the identity provider says signed in (OIDC: verified ID token and userinfo; SAML: verified assertion). */
export interface ExternalIdentity {
  provider: 'oidc' | 'saml';
  /** OIDC issuer URL, or the SAML IdP entity id */
  issuer: string;
  /** OIDC `sub`, or the SAML NameID */
  subject: string;
  preferredUsername?: string | undefined;
  email?: string | undefined;
  /** values of the role claim/attribute named by BATON_SSO_ROLE_CLAIM (already extracted by the provider code) */
  groups: string[];
}

export interface SsoSettings {
  /** BATON_SSO_ROLE_MAP: a group and the role it gives; the strongest mapped role wins, none mapped: viewer */
  roleMap: Array<{ group: string; role: Role }>;
  /** BATON_SSO_TEAM_SYNC: the mapped groups are mirrored into teams of the same names */
  teamSync: boolean;
  /** lifetime of the one-time code a browser exchanges for its token (≤ 60) */
  codeTtlSeconds: number;
}

export const DEFAULT_SSO_SETTINGS: SsoSettings = { roleMap: [], teamSync: false, codeTtlSeconds: 60 };
export const MAX_SSO_CODE_TTL_SECONDS = 60;
/** How long a started sign-in may take at the provider (typing a password, a second factor) before it must restart. */
export const SSO_STATE_TTL_SECONDS = 600;

/** The strongest role any of the groups maps to; viewer when none is mapped. */
export function roleFromGroups(groups: readonly string[], roleMap: SsoSettings['roleMap']): Role {
  let role: Role = 'viewer';
  for (const m of roleMap) if (groups.includes(m.group) && roleRank(m.role) > roleRank(role)) role = m.role;
  return role;
}

/**
 * The username a first sign-in creates: preferred_username, else email, else subject — the first of them that
 * already fits Baton's username rules as it is. Nothing is rewritten: a rewritten name could land on someone
 * else's (or let two identities collide), so when none fits, the sign-in is refused.
 */
export function usernameFor(identity: ExternalIdentity): string | undefined {
  for (const candidate of [identity.preferredUsername, identity.email, identity.subject])
    if (candidate !== undefined && Username.safeParse(candidate).success) return candidate;
  return undefined;
}

/** Longest issuer or subject Baton links (OIDC caps `sub` at 255 ASCII characters; the rest is headroom). */
const MAX_IDENTITY_PART = 1024;
const short = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

/** A sign-in refused after the provider proved the identity; `object` is the user it concerns, when there is one. */
interface Refusal {
  refused: SsoError;
  object: string | null;
}
const refusal = (reason: SsoError['reason'], message: string): Refusal => ({
  refused: new SsoError(reason, message),
  object: null,
});

type SsoTxRepos = {
  users: Pick<UserRepo, 'insert' | 'findById' | 'findByUsername' | 'update' | 'lockAdmins'>;
  userIdentities: Pick<UserIdentityRepo, 'find' | 'insert' | 'touch'>;
  ssoTeams: Pick<SsoTeamRepo, 'findByNames' | 'insertIfMissing' | 'addMemberIfMissing'>;
  teams: Pick<TeamRepo, 'removeMember'>;
  ssoCodes: Pick<SsoCodeRepo, 'insert' | 'consume' | 'deleteExpired'>;
  ssoStates: Pick<SsoStateRepo, 'insert' | 'take' | 'deleteExpired'>;
  audit: Pick<AuditRepo, 'append'>;
};

/**
 * Single sign-on, whatever the protocol: creates or finds the user an external identity stands for, keeps its role
 * (and, when enabled, its team memberships) in line with the provider's groups, and hands out one-time codes that a
 * browser exchanges for its token.
 */
export function createSsoService(deps: {
  users: Pick<UserRepo, 'findById'>;
  transaction: <T>(fn: (r: SsoTxRepos) => Promise<T>) => Promise<T>;
  auth: Pick<AuthService, 'issueToken'>;
  settings: SsoSettings;
  clock: Clock;
}) {
  const settings = {
    ...deps.settings,
    codeTtlSeconds: Math.min(deps.settings.codeTtlSeconds, MAX_SSO_CODE_TTL_SECONDS),
  };
  const syncedTeams = settings.teamSync ? [...new Set(settings.roleMap.map((m) => m.group))] : [];

  /** A refusal after the provider proved who it is: recorded (in its own transaction, since the sign-in fails). */
  async function refuse(identity: ExternalIdentity, address: string, reason: SsoError, object: string | null) {
    await deps.transaction((r) =>
      recordAudit(
        r.audit,
        {
          actor: 'anonymous',
          action: 'auth.sso_refused',
          object,
          summary: `refused ${identity.provider} sign-in of ${short(identity.subject)} (${short(identity.issuer)}) from ${address}: ${reason.message}`,
        },
        deps.clock,
      ),
    );
    return reason;
  }

  /** Team sync: membership of each team named like a mapped group follows that group; other teams are untouched. */
  async function syncTeams(r: SsoTxRepos, user: UserRow, groups: readonly string[], method: string, at: string) {
    if (syncedTeams.length === 0) return;
    const actor = user.id;
    for (const name of syncedTeams.filter((g) => groups.includes(g))) {
      const team = { id: newId('team', Date.parse(at)), name, created_at: at, created_by: 'sso' };
      if (await r.ssoTeams.insertIfMissing(team))
        await recordAudit(
          r.audit,
          { actor, action: 'team.create', object: team.id, summary: `created team ${name} (${method} group sync)` },
          deps.clock,
        );
    }
    for (const team of await r.ssoTeams.findByNames(syncedTeams)) {
      const member = groups.includes(team.name);
      const changed = member
        ? await r.ssoTeams.addMemberIfMissing(team.id, user.id, at)
        : await r.teams.removeMember(team.id, user.id);
      if (changed)
        await recordAudit(
          r.audit,
          {
            actor,
            action: member ? 'team.member_add' : 'team.member_remove',
            object: team.id,
            summary: `${member ? 'added' : 'removed'} ${user.username} ${member ? 'to' : 'from'} team ${team.name} (${method} group sync)`,
          },
          deps.clock,
        );
    }
  }

  async function signInOnce(identity: ExternalIdentity, address: string, passwordHash: string): Promise<User> {
    const method = identity.provider;
    const role = roleFromGroups(identity.groups, settings.roleMap);
    const email = IdentityEmail.safeParse(identity.email).success ? identity.email! : null;
    const outcome = await deps.transaction(async (r): Promise<User | Refusal> => {
      const at = iso(deps.clock());
      const link = await r.userIdentities.find(identity.issuer, identity.subject);
      let user: UserRow;
      if (!link) {
        const username = usernameFor(identity);
        if (!username)
          return refusal(
            'invalid_username',
            'none of preferred_username, email and subject fits the username rules (letters, digits and . _ @ -, starting with a letter or digit, at most 64)',
          );
        const taken = await r.users.findByUsername(username);
        if (taken)
          return {
            refused: new SsoError(
              'username_taken',
              `the username ${username} belongs to an existing user that is not linked to this identity; it is not merged`,
            ),
            object: taken.id,
          };
        user = {
          id: newId('usr', Date.parse(at)),
          username,
          email,
          role,
          password_hash: passwordHash,
          created_at: at,
          updated_at: at,
        };
        await r.users.insert(user);
        await r.userIdentities.insert({
          issuer: identity.issuer,
          subject: identity.subject,
          provider: method,
          user_id: user.id,
          created_at: at,
          last_login_at: at,
        });
        await recordAudit(
          r.audit,
          {
            actor: user.id,
            action: 'user.create',
            object: user.id,
            summary: `created user ${username} with role ${role} at the first ${method} sign-in of ${short(identity.subject)} (${short(identity.issuer)})`,
          },
          deps.clock,
        );
      } else {
        let found = await r.users.findById(link.user_id);
        let admins: string[] = [];
        if (found?.role === 'admin' && role !== 'admin') {
          // This sign-in may demote an admin: lock the admins, then read the user again (see the user service).
          admins = await r.users.lockAdmins();
          found = await r.users.findById(link.user_id);
        }
        if (!found) return refusal('provider_error', 'the linked user no longer exists; sign in again');
        user = found;
        const changes: string[] = [];
        const patch: { role?: Role; email?: string; updated_at?: string } = {};
        if (user.role !== role) {
          // The groups decide the role at every sign-in, except that the last admin is never demoted by them.
          if (user.role === 'admin' && admins.length <= 1 && admins.includes(user.id))
            changes.push(`kept role admin (the last admin) although the ${method} groups give ${role}`);
          else {
            changes.push(`role ${user.role} → ${role} (${method} groups)`);
            patch.role = role;
          }
        }
        if (email !== null && email !== user.email) {
          changes.push('email');
          patch.email = email;
        }
        if (patch.role !== undefined || patch.email !== undefined) {
          patch.updated_at = at;
          await r.users.update(user.id, patch);
          user = { ...user, ...patch };
        }
        if (changes.length)
          await recordAudit(
            r.audit,
            {
              actor: user.id,
              action: 'user.update',
              object: user.id,
              summary: `updated user ${user.username}: ${changes.join(', ')}`,
            },
            deps.clock,
          );
        await r.userIdentities.touch(identity.issuer, identity.subject, at);
      }
      await syncTeams(r, user, identity.groups, method, at);
      await recordAudit(
        r.audit,
        {
          actor: user.id,
          action: 'auth.sso',
          object: user.id,
          summary: `${method} identity ${short(identity.subject)} (${short(identity.issuer)}) verified for ${user.username} (role ${user.role}) from ${address}`,
        },
        deps.clock,
      );
      return toUser(user);
    });
    if ('refused' in outcome) throw await refuse(identity, address, outcome.refused, outcome.object);
    return outcome;
  }

  return {
    /**
     * The user this identity stands for, created at its first sign-in (a random password nobody knows: such users
     * sign in through their provider) and linked by issuer + subject. Role, e-mail and synced teams follow the
     * provider at every sign-in. Refusals (no usable username, a local user of that name) are audited.
     */
    async signIn(identity: ExternalIdentity, address: string): Promise<User> {
      for (const [part, value] of [
        ['issuer', identity.issuer],
        ['subject', identity.subject],
      ] as const)
        if (!value || value.length > MAX_IDENTITY_PART)
          throw new SsoError('provider_error', `the provider's ${part} is empty or longer than ${MAX_IDENTITY_PART}`);
      // Hashed outside the transaction (it takes a while); used only when this sign-in creates the user.
      const passwordHash = await hashPassword(crypto.randomBytes(32).toString('base64url'));
      try {
        return await signInOnce(identity, address, passwordHash);
      } catch (err) {
        // Two first sign-ins of one identity at once: the second finds the link the first created.
        if (err instanceof DuplicateKeyError) return signInOnce(identity, address, passwordHash);
        throw err;
      }
    },

    /** A one-time code for this user (single use, ≤ 60 s); only its hash is stored. */
    async createCode(userId: string, method: 'oidc' | 'saml'): Promise<string> {
      const code = crypto.randomBytes(32).toString('base64url');
      const now = deps.clock();
      await deps.transaction(async (r) => {
        await r.ssoCodes.deleteExpired(iso(now));
        await r.ssoCodes.insert({
          code_hash: sha256Hex(code),
          user_id: userId,
          method,
          created_at: iso(now),
          expires_at: iso(new Date(now.getTime() + settings.codeTtlSeconds * 1000)),
          used_at: null,
        });
      });
      return code;
    },

    /**
     * Keeps a sign-in's handshake state (OIDC nonce and PKCE verifier, a SAML request id) in the database, so any
     * replica can finish a sign-in another one started; returns the random handle to send along (only its hash is
     * stored). Expired handshakes are cleared on the way.
     */
    async saveState(
      provider: 'oidc' | 'saml',
      data: Record<string, unknown>,
      ttlSeconds: number = SSO_STATE_TTL_SECONDS,
    ): Promise<string> {
      const handle = crypto.randomBytes(32).toString('base64url');
      const now = deps.clock();
      await deps.transaction(async (r) => {
        await r.ssoStates.deleteExpired(iso(now));
        await r.ssoStates.insert({
          id: sha256Hex(handle),
          provider,
          data: JSON.stringify(data),
          created_at: iso(now),
          expires_at: iso(new Date(now.getTime() + ttlSeconds * 1000)),
        });
      });
      return handle;
    },

    /** The state saved under this handle, removed as it is read (single use); undefined when unknown or expired. */
    async takeState(provider: 'oidc' | 'saml', handle: string): Promise<Record<string, unknown> | undefined> {
      const row = await deps.transaction((r) => r.ssoStates.take(sha256Hex(handle), provider, iso(deps.clock())));
      return row ? (JSON.parse(row.data) as Record<string, unknown>) : undefined;
    },

    /** `POST /v1/auth/exchange`: the code → a token. Unknown, used and expired codes all fail the same way (401). */
    async exchange(code: string, address: string): Promise<SignedIn> {
      const used = await deps.transaction((r) => r.ssoCodes.consume(sha256Hex(code), iso(deps.clock())));
      const user = used && (await deps.users.findById(used.user_id));
      if (!used || !user) throw new UnauthenticatedError('unknown, used or expired sign-in code; sign in again');
      const issued = await deps.auth.issueToken(user.id, used.method, address);
      return { ...issued, user: toUser(user) };
    },
  };
}
export type SsoService = ReturnType<typeof createSsoService>;
