import type { GrantLevel, Role } from '@baton/contracts';
import type { GrantRepo, TeamRepo, UserRepo } from '@baton/db';
import { ForbiddenError, NotFoundError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { idPrefix } from '../common/ids.js';

/** Who is calling: resolved from a bearer token by the auth service. */
export interface Principal {
  id: string;
  username: string;
  role: Role;
  /** the token this request came with, when it came with one */
  tokenId?: string | undefined;
  /** how that token was issued: by a sign-in (session) or at POST /v1/tokens (personal) */
  tokenKind?: 'session' | 'personal' | undefined;
  /** read: the token may change nothing (the HTTP layer refuses every mutation with 403); absent: write */
  scope?: 'read' | 'write' | undefined;
}

/** Roles from weakest to strongest, for "ranks below": viewer 0 < operator 1 < admin 2; -1 for a name that is no role. */
export function roleRank(role: string): number {
  return (['viewer', 'operator', 'admin'] as const).indexOf(role as Role);
}

/**
 * A user as a principal, with their role as it is now: what a template, schedule or trigger acts as when it launches
 * with its owner's authority. Null when the account was deleted.
 */
export async function principalOf(users: Pick<UserRepo, 'findById'>, userId: string): Promise<Principal | null> {
  const user = await users.findById(userId);
  return user ? { id: user.id, username: user.username, role: user.role as Role } : null;
}

/**
 * THE answer for an object that is unknown or that the caller may not see: the same words either way (rule 5),
 * so a 404 never tells whether an id exists. `kind` is what the caller asked for (`inventory`, `run`…), never
 * what the id turned out to be.
 */
export function notFound(kind: string, id: string): NotFoundError {
  return new NotFoundError(`${kind} ${id} not found`);
}

/**
 * `row` when it exists and `canSee` accepts it, else the one 404 of `notFound`: for objects with a visibility
 * rule of their own (runs, grants). Objects guarded by grants alone go through `Authorizer.requireVisible`.
 */
export async function visibleOr404<T>(
  kind: string,
  id: string,
  row: T | null | undefined,
  canSee: (row: T) => boolean | Promise<boolean>,
): Promise<T> {
  if (row === null || row === undefined || !(await canSee(row))) throw notFound(kind, id);
  return row;
}

/** An object a service looked up for a caller: `row` is what the lookup found (null or undefined: nothing). */
export interface LookedUp<T> {
  kind: string;
  id: string;
  row: T | null | undefined;
}

/** Id prefixes of the objects every signed-in user may list (rule 5): refusals on them are 403, never 404. */
export const LISTABLE_PREFIXES: ReadonlySet<string> = new Set(['team', 'usr']);

/**
 * THE AUTHORIZATION RULE — every domain asks this module, nothing else decides access.
 *
 * 1. Admins may do anything.
 * 2. Viewers never create or change anything, whatever grants they hold.
 * 3. Operators may create objects; creating one gives the creator a `manage` grant on it (the creating
 *    service writes that grant in the same transaction), so "operators manage what they create" is an
 *    ordinary, visible, revocable grant.
 * 4. Otherwise the strongest grant held on the object by the user or by any team the user belongs to
 *    decides; `manage` implies `use`.
 * 5. An object the caller cannot see (no grant at all) answers 404, exactly like an unknown one, so ids
 *    cannot be probed. Objects every signed-in user may list (teams, users) answer 403 instead.
 */
export function createAuthorizer(deps: {
  grants: Pick<GrantRepo, 'levelsOn' | 'objectsHeldBy'>;
  teams: Pick<TeamRepo, 'teamIdsOf'>;
}) {
  async function subjectsOf(p: Principal): Promise<string[]> {
    return [p.id, ...(await deps.teams.teamIdsOf(p.id))];
  }

  async function levelOn(p: Principal, objectId: string): Promise<GrantLevel | null> {
    if (p.role === 'admin') return 'manage';
    const levels = await deps.grants.levelsOn(await subjectsOf(p), objectId);
    if (levels.includes('manage')) return 'manage';
    return levels.includes('use') ? 'use' : null;
  }

  async function check(
    p: Principal,
    objectId: string,
    need: GrantLevel,
    listable: boolean | undefined,
    hidden: () => NotFoundError,
  ): Promise<void> {
    const level = await levelOn(p, objectId);
    const visible = level !== null || (listable ?? LISTABLE_PREFIXES.has(idPrefix(objectId)));
    if (!visible) throw hidden();
    if (need === 'use') {
      if (level === null) throw new ForbiddenError(`no grant on ${objectId}`);
      return;
    }
    if (p.role === 'viewer') throw new ForbiddenError('viewers cannot create or change anything');
    if (level !== 'manage') throw new ForbiddenError(`changing ${objectId} needs a manage grant`);
  }

  return {
    levelOn,
    subjectsOf,

    requireAdmin(p: Principal): void {
      if (p.role !== 'admin') throw new ForbiddenError('this needs the admin role');
    },

    /** Rules 1–3: may this caller create objects (or change anything at all)? */
    requireCreator(p: Principal): void {
      if (p.role === 'viewer') throw new ForbiddenError('viewers cannot create or change anything');
    },

    /**
     * Rules 1–5 for an object the service has looked up: unknown and not visible answer the same 404 (`notFound`),
     * visible without `need` answers 403. Answers the row. Every lookup of an object for a caller goes through here.
     */
    async requireVisible<T>(
      p: Principal,
      need: GrantLevel,
      found: LookedUp<T>,
      opts: { listable?: boolean } = {},
    ): Promise<T> {
      const { kind, id, row } = found;
      if (row === null || row === undefined) throw notFound(kind, id);
      await check(p, id, need, opts.listable, () => notFound(kind, id));
      return row;
    },

    /**
     * Rules 1–5 for an object known to exist (a team, a grant's object). `listable`: the object is visible to all,
     * so refuse with 403, not 404; by default, whether its id prefix is one of LISTABLE_PREFIXES.
     */
    require(p: Principal, objectId: string, need: GrantLevel, opts: { listable?: boolean } = {}): Promise<void> {
      return check(p, objectId, need, opts.listable, () => notFound('object', objectId));
    },

    /** For list filtering: 'all' for admins, else the ids (with this prefix) the caller holds any grant on. */
    async visibleIds(p: Principal, prefix: string): Promise<'all' | string[]> {
      if (p.role === 'admin') return 'all';
      return deps.grants.objectsHeldBy(await subjectsOf(p), `${prefix}_`);
    },
  };
}
export type Authorizer = ReturnType<typeof createAuthorizer>;

/**
 * Rule 3: the creator of an object gets `manage` on it. Called inside the creating transaction, with that
 * transaction's grant repository, so the object and its grant commit together.
 */
export async function grantCreatorManage(
  grants: Pick<GrantRepo, 'insert'>,
  p: Principal,
  objectId: string,
  at: Date,
): Promise<void> {
  await grants.insert({
    id: newId('grant', at.getTime()),
    subject_id: p.id,
    object_id: objectId,
    level: 'manage',
    created_at: at.toISOString(),
    created_by: p.id,
  });
}
