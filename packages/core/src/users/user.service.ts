import type { User, UserCreateBody, UserUpdateBody } from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type PageQuery,
  type TokenRepo,
  type UserPatch,
  type UserRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, notFound, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';
import { hashPassword, type PasswordHashParams } from '../crypto/password.js';
import { toUser } from './user.view.js';

type TxRepos = {
  users: Pick<UserRepo, 'insert' | 'findById' | 'update' | 'delete' | 'lockAdmins'>;
  tokens: Pick<TokenRepo, 'revokeAllForUser'>;
  grants: Pick<GrantRepo, 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
};

export function createUserService(deps: {
  users: Pick<UserRepo, 'list' | 'findById'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireAdmin'>;
  clock: Clock;
  /** scrypt's cost for the passwords users choose; default DEFAULT_PASSWORD_HASH_PARAMS (the test harness lowers it) */
  passwordHashParams?: Readonly<PasswordHashParams> | undefined;
}) {
  /** Creates a user; `actor` is a user id, or `system` / `cli` for bootstrap and the command line. */
  async function createAs(actor: string, body: UserCreateBody): Promise<User> {
    const password_hash = await hashPassword(body.password, deps.passwordHashParams);
    const now = deps.clock();
    const row = {
      id: newId('usr', now.getTime()),
      username: body.username,
      email: body.email ?? null,
      role: body.role,
      password_hash,
      created_at: iso(now),
      updated_at: iso(now),
    };
    try {
      await deps.transaction(async (r) => {
        await r.users.insert(row);
        await recordAudit(
          r.audit,
          {
            actor,
            action: 'user.create',
            object: row.id,
            summary: `created user ${row.username} with role ${row.role}`,
          },
          deps.clock,
        );
      });
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConflictError(`a user named ${body.username} already exists`);
      throw err;
    }
    return toUser(row);
  }

  /**
   * The last admin can be neither demoted nor deleted: someone must always be able to administer.
   * `admins` comes from `lockAdmins()`, taken before the user was read, so concurrent changes queue up.
   */
  function guardLastAdmin(admins: string[], userId: string): void {
    if (admins.includes(userId) && admins.length <= 1) throw new ConflictError(`${userId} is the last admin`);
  }

  async function updateAs(
    actor: string,
    exceptTokenId: string | undefined,
    id: string,
    body: UserUpdateBody,
  ): Promise<User> {
    const password_hash =
      body.password === undefined ? undefined : await hashPassword(body.password, deps.passwordHashParams);
    return deps.transaction(async (r) => {
      // Lock the admins before reading the user, so the role read below is current (see guardLastAdmin).
      const admins = body.role !== undefined && body.role !== 'admin' ? await r.users.lockAdmins() : undefined;
      const current = await r.users.findById(id);
      if (!current) throw notFound('user', id);
      if (admins && current.role === 'admin') guardLastAdmin(admins, id);
      const patch: UserPatch = { updated_at: iso(deps.clock()) };
      const changed: string[] = [];
      if (body.role !== undefined && body.role !== current.role) {
        patch.role = body.role;
        changed.push(`role ${current.role} → ${body.role}`);
      }
      if (body.email !== undefined && body.email !== current.email) {
        patch.email = body.email;
        changed.push('email');
      }
      if (password_hash !== undefined) {
        patch.password_hash = password_hash;
        changed.push('password');
      }
      await r.users.update(id, patch);
      if (password_hash !== undefined) {
        // A new password ends every other session of that user (the caller's own session survives).
        await r.tokens.revokeAllForUser(id, patch.updated_at!, exceptTokenId);
      }
      await recordAudit(
        r.audit,
        {
          actor,
          action: 'user.update',
          object: id,
          summary: `updated user ${current.username}: ${changed.join(', ') || 'no change'}`,
        },
        deps.clock,
      );
      return toUser({ ...current, ...patch });
    });
  }

  return {
    createAs,

    create(p: Principal, body: UserCreateBody): Promise<User> {
      deps.authz.requireAdmin(p);
      return createAs(p.id, body);
    },

    /** Any signed-in user may list users (to name grant subjects); only admins see e-mail addresses. */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<User>> {
      const rows = await deps.users.list({ limit: page.limit + 1, before: decodeCursor(page.cursor) });
      const users = rows.map(toUser).map((u) => (p.role === 'admin' ? u : { ...u, email: null }));
      return toPage(users, page.limit, (u) => u.id);
    },

    async get(p: Principal, id: string): Promise<User> {
      const row = await deps.users.findById(id);
      if (!row) throw notFound('user', id);
      const user = toUser(row);
      return p.role === 'admin' ? user : { ...user, email: null };
    },

    update(p: Principal, id: string, body: UserUpdateBody): Promise<User> {
      deps.authz.requireAdmin(p);
      return updateAs(p.id, p.tokenId, id, body);
    },

    updateAs,

    async remove(p: Principal, id: string): Promise<void> {
      deps.authz.requireAdmin(p);
      await deps.transaction(async (r) => {
        const admins = await r.users.lockAdmins();
        const current = await r.users.findById(id);
        if (!current) throw notFound('user', id);
        guardLastAdmin(admins, id);
        // Tokens and team memberships go with the row (foreign keys cascade); grants name the user loosely.
        await r.grants.deleteMentioning(id);
        await r.users.delete(id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'user.delete', object: id, summary: `deleted user ${current.username}` },
          deps.clock,
        );
      });
    },
  };
}
export type UserService = ReturnType<typeof createUserService>;
