import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GitError, type GitErrorCode } from '@baton/contracts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { systemClock } from '../common/clock.js';
import { ConflictError, ForbiddenError, NotFoundError, UnprocessableError, ValidationError } from '../common/errors.js';
import { createProjectService, type ProjectCredential, type ProjectUse } from './project.service.js';

const HEAD = 'a'.repeat(40);
const CRED = 'cred_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe.each(DIALECTS)('project service on %s', (dialect) => {
  let tdb: TestDatabase;
  let uses: ProjectUse[] = [];
  let gitAnswer: () => Promise<string> = async () => HEAD;
  const revealed: ProjectCredential = { id: CRED, type: 'token', inputs: { token: 's3cret' } };
  const admin: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA0', username: 'root', role: 'admin' };
  const operator: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1', username: 'op', role: 'operator' };
  let service: ReturnType<typeof createProjectService>;
  const seen: Array<{ url: string; branch: string; auth?: unknown }> = [];

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    const { repos, transaction } = tdb.db;
    const at = new Date().toISOString();
    // The projects table references credentials: the credential the stub reveals exists as a row.
    await tdb.db.kysely
      .insertInto('credentials')
      .values({
        id: CRED,
        name: 'git token',
        type: 'token',
        description: null,
        public_inputs: '{}',
        secret_inputs_enc: 'sealed',
        created_by: admin.id,
        created_at: at,
        updated_at: at,
      })
      .execute();
    service = createProjectService({
      projects: repos.projects,
      knownHosts: repos.knownHosts,
      transaction,
      clock: systemClock,
      authz: createAuthorizer({ grants: repos.grants, teams: repos.teams }),
      git: {
        resolveBranchHead: (target) => {
          seen.push(target);
          return gitAnswer();
        },
      },
      credentials: { requireUsable: async () => revealed, reveal: async () => revealed },
      usedBy: async () => uses,
    });
  });
  afterAll(() => tdb.drop());

  let n = 0;
  const create = (p: Principal = operator) =>
    service.create(p, {
      name: `project ${dialect} ${++n}`,
      git_url: 'https://git.example.com/ops.git',
      branch: 'main',
    });

  it('answers 409 naming the users the caller can see and counting the rest, and deletes once nothing uses it', async () => {
    const project = await create();
    uses = [
      { kind: 'template', id: 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV', name: 'deploy web' },
      { kind: 'inventory_source', id: 'src_01ARZ3NDEKTSV4RRFFQ69G5FAV', name: 'cmdb' },
    ];
    const hidden = await service.remove(operator, project.id).catch((e: unknown) => e);
    expect(hidden).toBeInstanceOf(ConflictError);
    expect((hidden as Error).message).toBe(`project ${project.id} is used by 2 more you cannot see`);
    const err = await service.remove(admin, project.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toContain('template tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV (deploy web)');
    expect((err as Error).message).toContain('inventory_source src_01ARZ3NDEKTSV4RRFFQ69G5FAV (cmdb)');
    expect(await service.get(operator, project.id)).toMatchObject({ id: project.id });
    uses = [];
    await service.remove(operator, project.id);
    await expect(service.get(admin, project.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('checks use before telling whether the project is in use', async () => {
    const project = await create();
    uses = [{ kind: 'template', id: 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV', name: 'x' }];
    const stranger: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA2', username: 's', role: 'operator' };
    await expect(service.remove(stranger, project.id)).rejects.toBeInstanceOf(NotFoundError);
    uses = [];
  });

  it.each<[string, GitErrorCode, new (...a: never[]) => Error, string]>([
    ['an unreachable repository', 'git_failed', UnprocessableError, 'body.git_url'],
    ['a missing branch', 'branch_not_found', UnprocessableError, 'body.branch'],
    ['a rejected key', 'bad_credential', UnprocessableError, 'body.credential_id'],
    ['a timeout', 'timeout', UnprocessableError, 'body.git_url'],
    ['a refused URL', 'refused_url', ValidationError, 'body.git_url'],
  ])("maps git's refusal for %s to the right error and field, and stores nothing", async (_what, code, cls, path) => {
    gitAnswer = async () => {
      throw new GitError(code, `because ${code}`);
    };
    try {
      const before = (await service.list(admin, { limit: 500 })).items.length;
      const err = await create().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(cls);
      expect((err as { errors: unknown }).errors).toEqual([{ path, message: `because ${code}` }]);
      expect((await service.list(admin, { limit: 500 })).items.length).toBe(before);
    } finally {
      gitAnswer = async () => HEAD;
    }
  });

  it("matches git's refusal by class: an error merely named GitError is let through as it is", async () => {
    const impostor = Object.assign(new Error('because git_failed'), {
      name: 'GitError',
      code: 'git_failed',
      reason: 'because git_failed',
    });
    gitAnswer = async () => {
      throw impostor;
    };
    try {
      await expect(create()).rejects.toBe(impostor);
    } finally {
      gitAnswer = async () => HEAD;
    }
  });

  it('lets an unexpected error through as it is (a bug is not a 422)', async () => {
    gitAnswer = async () => {
      throw new TypeError('boom');
    };
    try {
      await expect(create()).rejects.toBeInstanceOf(TypeError);
    } finally {
      gitAnswer = async () => HEAD;
    }
  });

  it('gives the run engine the synced commit and the auth built from the credential; not to a viewer without a grant', async () => {
    const project = await service.create(operator, {
      name: `with token ${dialect}`,
      git_url: 'https://git.example.com/ops.git',
      branch: 'main',
      credential_id: CRED,
    });
    expect(seen.at(-1)).toEqual({
      url: 'https://git.example.com/ops.git',
      branch: 'main',
      auth: { kind: 'token', token: 's3cret' },
      hostKeys: { checking: 'accept_new', known_hosts: '' },
      onHostKeys: expect.any(Function),
    });
    expect(await service.checkoutSpec(operator, project.id)).toEqual({
      url: 'https://git.example.com/ops.git',
      commit: HEAD,
      auth: { kind: 'token', token: 's3cret' },
      hostKeys: { checking: 'accept_new', known_hosts: '' },
      onHostKeys: expect.any(Function),
    });
    const viewer: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA3', username: 'v', role: 'viewer' };
    await expect(service.checkoutSpec(viewer, project.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses a viewer creating (403) before asking git anything', async () => {
    const asked = seen.length;
    await expect(
      create({ id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA4', username: 'v2', role: 'viewer' }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    expect(seen.length).toBe(asked);
  });
});
