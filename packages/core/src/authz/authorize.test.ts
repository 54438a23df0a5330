import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { GrantLevel, Role } from '@baton/contracts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { ForbiddenError, NotFoundError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { type Authorizer, createAuthorizer, type Principal, visibleOr404 } from './authorize.js';

const NOW = '2026-01-01T00:00:00.000Z';

/**
 * The world every case runs against. Objects: PRJ (a project id: not listable) and TEAM_OBJ (a team: listable).
 * Teams as subjects: T_MANAGE holds manage on PRJ, T_USE holds use on PRJ.
 */
const PEOPLE = {
  admin: { role: 'admin', direct: null, teams: [] },
  operator: { role: 'operator', direct: null, teams: [] },
  viewer: { role: 'viewer', direct: null, teams: [] },
  opUse: { role: 'operator', direct: 'use', teams: [] },
  opManage: { role: 'operator', direct: 'manage', teams: [] },
  viewerManage: { role: 'viewer', direct: 'manage', teams: [] },
  viewerUse: { role: 'viewer', direct: 'use', teams: [] },
  opUseTeamManage: { role: 'operator', direct: 'use', teams: ['T_MANAGE'] },
  opManageTeamUse: { role: 'operator', direct: 'manage', teams: ['T_USE'] },
  opTeamUse: { role: 'operator', direct: null, teams: ['T_USE'] },
  opTeamManage: { role: 'operator', direct: null, teams: ['T_MANAGE'] },
  opBothTeams: { role: 'operator', direct: null, teams: ['T_USE', 'T_MANAGE'] },
  viewerTeamManage: { role: 'viewer', direct: null, teams: ['T_MANAGE'] },
} as const satisfies Record<string, { role: Role; direct: GrantLevel | null; teams: readonly string[] }>;
type Who = keyof typeof PEOPLE;
type Obj = 'PRJ' | 'TEAM_OBJ' | 'UNKNOWN_PRJ';
type Outcome = 'ok' | typeof NotFoundError | typeof ForbiddenError;

// require(p, object, need[, opts]) → outcome: one row per clause of the rule.
const REQUIRE_CASES: Array<[string, Who, Obj, GrantLevel, { listable?: boolean } | undefined, Outcome]> = [
  ['rule 1: an admin may manage an object without any grant', 'admin', 'PRJ', 'manage', undefined, 'ok'],
  ['rule 1: an admin passes even for an id nobody holds', 'admin', 'UNKNOWN_PRJ', 'manage', undefined, 'ok'],
  ['rule 2: a viewer with manage may use the object', 'viewerManage', 'PRJ', 'use', undefined, 'ok'],
  ['rule 2: a viewer with manage still may not change it', 'viewerManage', 'PRJ', 'manage', undefined, ForbiddenError],
  [
    'rule 2: a viewer whose team holds manage may not change it',
    'viewerTeamManage',
    'PRJ',
    'manage',
    undefined,
    ForbiddenError,
  ],
  ['rule 2: a viewer with use may use it', 'viewerUse', 'PRJ', 'use', undefined, 'ok'],
  ['rule 4: use is enough to use', 'opUse', 'PRJ', 'use', undefined, 'ok'],
  ['rule 4: use is not enough to manage', 'opUse', 'PRJ', 'manage', undefined, ForbiddenError],
  ['rule 4: manage implies use', 'opManage', 'PRJ', 'use', undefined, 'ok'],
  ['rule 4: manage allows managing', 'opManage', 'PRJ', 'manage', undefined, 'ok'],
  ["rule 4: a team's manage beats the user's own use", 'opUseTeamManage', 'PRJ', 'manage', undefined, 'ok'],
  ["rule 4: the user's own manage beats a team's use", 'opManageTeamUse', 'PRJ', 'manage', undefined, 'ok'],
  ["rule 4: a team's use lets a member use", 'opTeamUse', 'PRJ', 'use', undefined, 'ok'],
  ["rule 4: a team's use does not let a member manage", 'opTeamUse', 'PRJ', 'manage', undefined, ForbiddenError],
  ["rule 4: a team's manage lets a member manage", 'opTeamManage', 'PRJ', 'manage', undefined, 'ok'],
  ['rule 4: the strongest of several teams wins', 'opBothTeams', 'PRJ', 'manage', undefined, 'ok'],
  ['rule 5: no grant hides the object from an operator (use)', 'operator', 'PRJ', 'use', undefined, NotFoundError],
  [
    'rule 5: no grant hides the object from an operator (manage)',
    'operator',
    'PRJ',
    'manage',
    undefined,
    NotFoundError,
  ],
  ['rule 5: no grant hides the object from a viewer', 'viewer', 'PRJ', 'use', undefined, NotFoundError],
  [
    'rule 5: an unknown object looks the same as a hidden one',
    'operator',
    'UNKNOWN_PRJ',
    'use',
    undefined,
    NotFoundError,
  ],
  ['rule 5: listable objects answer 403 (manage)', 'operator', 'PRJ', 'manage', { listable: true }, ForbiddenError],
  ['rule 5: listable objects answer 403 (use)', 'operator', 'PRJ', 'use', { listable: true }, ForbiddenError],
  ['rule 5: a team is listable by its id prefix', 'operator', 'TEAM_OBJ', 'manage', undefined, ForbiddenError],
  ['rule 5: a team is listable for use too', 'viewer', 'TEAM_OBJ', 'use', undefined, ForbiddenError],
  ['rule 5: listable does not hide a grant that exists', 'opUse', 'PRJ', 'use', { listable: true }, 'ok'],
  [
    'rule 5: listable: false overrides the prefix',
    'operator',
    'TEAM_OBJ',
    'manage',
    { listable: false },
    NotFoundError,
  ],
];

const LEVEL_CASES: Array<[Who, Obj, GrantLevel | null]> = [
  ['admin', 'PRJ', 'manage'],
  ['admin', 'UNKNOWN_PRJ', 'manage'],
  ['operator', 'PRJ', null],
  ['viewer', 'PRJ', null],
  ['opUse', 'PRJ', 'use'],
  ['opManage', 'PRJ', 'manage'],
  ['viewerManage', 'PRJ', 'manage'],
  ['opUseTeamManage', 'PRJ', 'manage'],
  ['opManageTeamUse', 'PRJ', 'manage'],
  ['opTeamUse', 'PRJ', 'use'],
  ['opBothTeams', 'PRJ', 'manage'],
  ['opManage', 'TEAM_OBJ', null],
];

const ROLE_CASES: Array<[Role, boolean, boolean]> = [
  // role, may create (rules 1–3), is admin
  ['admin', true, true],
  ['operator', true, false],
  ['viewer', false, false],
];

async function outcomeOf(fn: () => unknown): Promise<Outcome> {
  try {
    await fn();
    return 'ok';
  } catch (err) {
    if (err instanceof NotFoundError) return NotFoundError;
    if (err instanceof ForbiddenError) return ForbiddenError;
    throw err;
  }
}
const nameOf = (o: Outcome) => (o === 'ok' ? 'ok' : o.name);

describe.each(DIALECTS)('the authorization rule on %s', (dialect) => {
  let tdb: TestDatabase;
  let authz: Authorizer;
  const principals = {} as Record<Who, Principal>;
  const objects = {} as Record<Obj, string>;
  const teams = {} as Record<string, string>;

  async function addUser(role: Role, name: string): Promise<Principal> {
    const id = newId('usr');
    await tdb.db.repos.users.insert({
      id,
      username: name,
      email: null,
      role,
      password_hash: 'x',
      created_at: NOW,
      updated_at: NOW,
    });
    return { id, username: name, role };
  }
  async function addTeam(name: string): Promise<string> {
    const id = newId('team');
    await tdb.db.repos.teams.insert({ id, name, created_at: NOW, created_by: 'system' });
    return id;
  }
  const grant = (subject: string, object: string, level: GrantLevel) =>
    tdb.db.repos.grants.insert({
      id: newId('grant'),
      subject_id: subject,
      object_id: object,
      level,
      created_at: NOW,
      created_by: 'system',
    });

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    authz = createAuthorizer({ grants: tdb.db.repos.grants, teams: tdb.db.repos.teams });
    objects.PRJ = newId('prj');
    objects.UNKNOWN_PRJ = newId('prj');
    objects.TEAM_OBJ = await addTeam('object team');
    teams.T_MANAGE = await addTeam('managers');
    teams.T_USE = await addTeam('users');
    await tdb.db.transaction(async (r) => {
      await r.grants.insert({
        id: newId('grant'),
        subject_id: teams.T_MANAGE!,
        object_id: objects.PRJ,
        level: 'manage',
        created_at: NOW,
        created_by: 'system',
      });
      await r.grants.insert({
        id: newId('grant'),
        subject_id: teams.T_USE!,
        object_id: objects.PRJ,
        level: 'use',
        created_at: NOW,
        created_by: 'system',
      });
    });
    for (const [who, spec] of Object.entries(PEOPLE) as Array<[Who, (typeof PEOPLE)[Who]]>) {
      const p = await addUser(spec.role, who);
      principals[who] = p;
      if (spec.direct) await grant(p.id, objects.PRJ, spec.direct);
      for (const t of spec.teams)
        await tdb.db.repos.teams.addMember({ team_id: teams[t]!, user_id: p.id, added_at: NOW });
    }
  });
  afterAll(() => tdb.drop());

  it.each(REQUIRE_CASES)('%s', async (_clause, who, obj, need, opts, expected) => {
    const outcome = await outcomeOf(() => authz.require(principals[who], objects[obj], need, opts));
    expect(nameOf(outcome)).toBe(nameOf(expected));
  });

  // requireVisible: the same rule for an object the service found, and the one 404 when it found nothing.
  it.each(REQUIRE_CASES)('requireVisible on a found object, %s', async (_clause, who, obj, need, opts, expected) => {
    const found = { kind: 'project', id: objects[obj], row: { name: 'found' } };
    let err: unknown;
    const outcome = await outcomeOf(() =>
      authz.requireVisible(principals[who], need, found, opts).catch((e: unknown) => {
        err = e;
        throw e;
      }),
    );
    expect(nameOf(outcome)).toBe(nameOf(expected));
    if (outcome === NotFoundError) expect((err as Error).message).toBe(`project ${objects[obj]} not found`);
    if (outcome === 'ok')
      expect(await authz.requireVisible(principals[who], need, found, opts)).toEqual({ name: 'found' });
  });

  it.each<Who>(['admin', 'opManage', 'operator', 'viewer'])(
    'requireVisible: nothing found is the same 404 for %s as a hidden object',
    async (who) => {
      const errors = await Promise.all(
        [null, undefined].map((row) =>
          authz
            .requireVisible(principals[who], 'use', { kind: 'project', id: objects.PRJ, row })
            .catch((e: unknown) => e),
        ),
      );
      for (const err of errors) {
        expect(err).toBeInstanceOf(NotFoundError);
        expect((err as Error).message).toBe(`project ${objects.PRJ} not found`);
      }
    },
  );

  it('visibleOr404: the one 404 for nothing found and for a row the rule hides, the row otherwise', async () => {
    const missing = await visibleOr404('run', 'run_X', null, () => true).catch((e: unknown) => e);
    const hidden = await visibleOr404('run', 'run_X', { id: 'run_X' }, async () => false).catch((e: unknown) => e);
    for (const err of [missing, hidden])
      expect([err instanceof NotFoundError, (err as Error).message]).toEqual([true, 'run run_X not found']);
    expect(await visibleOr404('run', 'run_X', { id: 'run_X' }, async () => true)).toEqual({ id: 'run_X' });
  });

  it.each(LEVEL_CASES)('levelOn: %s on %s is %s', async (who, obj, expected) => {
    expect(await authz.levelOn(principals[who], objects[obj])).toBe(expected);
  });

  it.each(ROLE_CASES)('a %s: may create %s, is admin %s', async (role, mayCreate, isAdmin) => {
    const p: Principal = { id: newId('usr'), username: role, role };
    expect(nameOf(await outcomeOf(() => authz.requireCreator(p)))).toBe(mayCreate ? 'ok' : 'ForbiddenError');
    expect(nameOf(await outcomeOf(() => authz.requireAdmin(p)))).toBe(isAdmin ? 'ok' : 'ForbiddenError');
  });

  it('subjectsOf is the user followed by every team they belong to', async () => {
    expect(await authz.subjectsOf(principals.operator)).toEqual([principals.operator.id]);
    const both = await authz.subjectsOf(principals.opBothTeams);
    expect(both[0]).toBe(principals.opBothTeams.id);
    expect(both.slice(1).sort()).toEqual([teams.T_USE, teams.T_MANAGE].sort());
  });

  it('takes effect at once: a new grant, a new membership and a revocation change the answer', async () => {
    const p = await addUser('operator', 'latecomer');
    const obj = newId('prj');
    expect(await authz.levelOn(p, obj)).toBeNull();
    await grant(p.id, obj, 'use');
    expect(await authz.levelOn(p, obj)).toBe('use');
    const t = await addTeam('late team');
    await grant(t, obj, 'manage');
    expect(await authz.levelOn(p, obj)).toBe('use');
    await tdb.db.repos.teams.addMember({ team_id: t, user_id: p.id, added_at: NOW });
    expect(await authz.levelOn(p, obj)).toBe('manage');
    await tdb.db.repos.teams.removeMember(t, p.id);
    await tdb.db.repos.grants.deleteMentioning(p.id);
    expect(nameOf(await outcomeOf(() => authz.require(p, obj, 'use')))).toBe('NotFoundError');
  });

  describe('visibleIds', () => {
    it("is 'all' for an admin", async () => {
      expect(await authz.visibleIds(principals.admin, 'prj')).toBe('all');
    });

    it('is empty for a user without grants', async () => {
      expect(await authz.visibleIds(principals.operator, 'prj')).toEqual([]);
      expect(await authz.visibleIds(principals.viewer, 'team')).toEqual([]);
    });

    it('lists objects held directly or through a team, with that prefix only, once each', async () => {
      expect(await authz.visibleIds(principals.opUse, 'prj')).toEqual([objects.PRJ]);
      expect(await authz.visibleIds(principals.opTeamUse, 'prj')).toEqual([objects.PRJ]);
      expect(await authz.visibleIds(principals.opManageTeamUse, 'prj')).toEqual([objects.PRJ]);
      expect(await authz.visibleIds(principals.viewerManage, 'prj')).toEqual([objects.PRJ]);
      expect(await authz.visibleIds(principals.opUse, 'team')).toEqual([]);
    });

    it('matches the prefix exactly: not as a LIKE pattern, not ignoring case', async () => {
      const p = await addUser('operator', 'collector');
      const own = newId('prj');
      const team = await addTeam('collector team');
      const onTeam = newId('team');
      await tdb.db.repos.teams.addMember({ team_id: team, user_id: p.id, added_at: NOW });
      await grant(p.id, own, 'use');
      await grant(team, objects.PRJ, 'use');
      await grant(p.id, onTeam, 'manage');
      // Look-alikes: `_` is a LIKE wildcard, and SQLite's LIKE ignores case.
      const suffix = own.slice('prj_'.length);
      for (const lookalike of [`prjx_${suffix}`, `PRJ_${suffix}`, `prjs${suffix}`]) await grant(p.id, lookalike, 'use');
      expect(((await authz.visibleIds(p, 'prj')) as string[]).sort()).toEqual([own, objects.PRJ].sort());
      expect(await authz.visibleIds(p, 'team')).toEqual([onTeam]);
    });
  });
});
