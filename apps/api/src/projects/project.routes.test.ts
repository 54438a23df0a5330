import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, sshKeyPair, startSshd, tempDir } from '@baton/executor/testing';
import fs from 'node:fs';
import path from 'node:path';
import type { Response } from 'supertest';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const UNKNOWN_PROJECT = 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const UNKNOWN_CREDENTIAL = 'cred_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const TOKEN_SECRET = 'ghp_projectTestS3cretValue0123456789';
let seq = 0;
const projectName = (stem = 'project') => `${stem} ${++seq} ${Date.now().toString(36)}`;

const ids = (res: Response) => (res.body as Array<{ id: string }>).map((x) => x.id);

describe.each(DIALECTS)('projects on %s', (dialect) => {
  let h: Harness;
  const root = tempDir(`baton-projects-${dialect}`);
  const repo = createRepo(root);

  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const createProject = async (token: string, body: Record<string, unknown> = {}) => {
    const name = projectName();
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(token))
      .send({ name, git_url: repo.url, ...body });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, name, res };
  };
  const createCredential = async (token: string, type: string, inputs: Record<string, unknown>) => {
    const res = await h.http
      .post('/v1/credentials')
      .set(bearer(token))
      .send({ name: projectName(type), type, inputs });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const grant = async (token: string, subject: string, object: string, level: 'use' | 'manage') => {
    expect((await h.http.post('/v1/grants').set(bearer(token)).send({ subject, object, level })).status).toBe(201);
  };

  it('registers a project over file://: 201, Location, the branch head as last_commit, and a manage grant for the creator', async () => {
    const op = await h.user('operator');
    const p = await createProject(op.token);
    expect(p.res.headers.location).toBe(`/v1/projects/${p.id}`);
    expect(p.id).toMatch(/^prj_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(p.res.body).toEqual({
      id: p.id,
      name: p.name,
      git_url: repo.url,
      branch: 'main',
      credential_id: null,
      galaxy_credential_id: null,
      host_key_checking: 'accept_new',
      last_commit: repo.head('main'),
      synced_at: expect.any(String),
      created_by: op.id,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const grants = await h.http.get(`/v1/grants?object=${p.id}`).set(bearer(op.token));
    expect(grants.body).toEqual([expect.objectContaining({ subject: op.id, object: p.id, level: 'manage' })]);
    const fetched = await h.http.get(p.res.headers.location as string).set(bearer(op.token));
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(p.res.body);
  });

  it('resolves the given branch, not main', async () => {
    const featureHead = repo.commit('feature/deploy');
    repo.git('checkout', '-q', 'main');
    const p = await createProject(h.admin.token, { branch: 'feature/deploy' });
    expect(p.res.body).toMatchObject({ branch: 'feature/deploy', last_commit: featureHead });
    expect(featureHead).not.toBe(repo.head('main'));
  });

  it('syncs: a new commit on the branch becomes last_commit', async () => {
    const op = await h.user('operator');
    const p = await createProject(op.token);
    const before = p.res.body.last_commit as string;
    const newer = repo.commit();
    expect(newer).not.toBe(before);
    const synced = await h.http.post(`/v1/projects/${p.id}/sync`).set(bearer(op.token));
    expect(synced.status).toBe(200);
    expect(synced.body).toMatchObject({ id: p.id, last_commit: newer });
    expect(synced.body.synced_at >= p.res.body.synced_at).toBe(true);
    expect((await h.http.get(`/v1/projects/${p.id}`).set(bearer(op.token))).body.last_commit).toBe(newer);
  });

  it("answers 422 with git's reason for a repository git cannot reach, and creates nothing", async () => {
    const name = projectName('unreachable');
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(h.admin.token))
      .send({ name, git_url: `file://${root}/no-such-repo` });
    expectProblem(res, 422, 'body.git_url');
    expect(res.body.detail).toMatch(/does not appear to be a git repository|not a git repository/);
    const all = await h.http.get('/v1/projects?limit=500').set(bearer(h.admin.token));
    expect(all.body.map((x: { name: string }) => x.name)).not.toContain(name);
  });

  it('answers 422 naming body.branch for a branch the repository does not have', async () => {
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(h.admin.token))
      .send({ name: projectName(), git_url: repo.url, branch: 'no-such-branch' });
    expectProblem(res, 422, 'body.branch');
    expect(res.body.detail).toContain('no-such-branch');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an ext:: remote helper', { git_url: 'ext::sh -c id' }, 'body.git_url'],
    ['an fd:: remote helper', { git_url: 'fd::7' }, 'body.git_url'],
    ['plain http', { git_url: 'http://example.com/repo.git' }, 'body.git_url'],
    ['ftp', { git_url: 'ftp://example.com/repo.git' }, 'body.git_url'],
    ['a local path without file://', { git_url: '/srv/repo.git' }, 'body.git_url'],
    ['a password in the URL', { git_url: 'https://u:p@example.com/r.git' }, 'body.git_url'],
    ['an option as URL', { git_url: '--upload-pack=id' }, 'body.git_url'],
    ['no git_url', { git_url: undefined }, 'body.git_url'],
    ['a numeric git_url', { git_url: 5 }, 'body.git_url'],
    ['a branch with a space', { branch: 'my branch' }, 'body.branch'],
    ['a branch with ..', { branch: 'a..b' }, 'body.branch'],
    ['a branch that is an option', { branch: '-x' }, 'body.branch'],
    ['a branch ending in .lock', { branch: 'x.lock' }, 'body.branch'],
    ['an empty branch', { branch: '' }, 'body.branch'],
    ['no name', { name: undefined }, 'body.name'],
    ['a blank name', { name: '  ' }, 'body.name'],
    ['a credential_id that is not a cred_ id', { credential_id: UNKNOWN_PROJECT }, 'body.credential_id'],
    ['an unknown field', { webhook: true }, 'body'],
  ])('rejects creating a project with %s: 400', async (_what, override, path) => {
    const body = { name: projectName(), git_url: repo.url, ...override };
    expectProblem(await h.http.post('/v1/projects').set(bearer(h.admin.token)).send(body), 400, path);
  });

  it('answers 404 for an unknown credential and 400 naming body.credential_id for one of the wrong type', async () => {
    expectProblem(
      await h.http
        .post('/v1/projects')
        .set(bearer(h.admin.token))
        .send({ name: projectName(), git_url: repo.url, credential_id: UNKNOWN_CREDENTIAL }),
      404,
    );
    const vault = await createCredential(h.admin.token, 'vault_password', { password: 'vault secret' });
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(h.admin.token))
      .send({ name: projectName(), git_url: repo.url, credential_id: vault });
    expectProblem(res, 400, 'body.credential_id');
  });

  it('lets an operator attach only a credential they may use: 404 before a use grant, 201 after', async () => {
    const owner = await h.user('operator');
    const cred = await createCredential(owner.token, 'token', { token: TOKEN_SECRET });
    const other = await h.user('operator');
    expectProblem(
      await h.http
        .post('/v1/projects')
        .set(bearer(other.token))
        .send({ name: projectName(), git_url: repo.url, credential_id: cred }),
      404,
    );
    await grant(owner.token, other.id, cred, 'use');
    const ok = await h.http
      .post('/v1/projects')
      .set(bearer(other.token))
      .send({ name: projectName(), git_url: repo.url, credential_id: cred });
    expect(ok.status).toBe(201);
    expect(ok.body.credential_id).toBe(cred);
  });

  it('keeps the token secret out of every response and the audit trail', async () => {
    const cred = await createCredential(h.admin.token, 'token', { token: TOKEN_SECRET });
    const p = await createProject(h.admin.token, { credential_id: cred });
    const responses = [
      p.res,
      await h.http.get(`/v1/projects/${p.id}`).set(bearer(h.admin.token)),
      await h.http.get('/v1/projects').set(bearer(h.admin.token)),
      await h.http.post(`/v1/projects/${p.id}/sync`).set(bearer(h.admin.token)),
      await h.http
        .put(`/v1/projects/${p.id}`)
        .set(bearer(h.admin.token))
        .send({ name: projectName('renamed') }),
      // git echoes the URL it could not reach; the token inside it must come back scrubbed.
      await h.http
        .put(`/v1/projects/${p.id}`)
        .set(bearer(h.admin.token))
        .send({ git_url: `file://${root}/${TOKEN_SECRET}` }),
      await h.http.get('/v1/audit?limit=500').set(bearer(h.admin.token)),
    ];
    expect(responses[5]!.status).toBe(422);
    for (const res of responses) expect(res.text).not.toContain(TOKEN_SECRET);
    const audit = responses[6]!.body as Array<{ object: string }>;
    expect(audit.filter((e) => e.object === p.id).length).toBe(3);
  });

  it('answers 403 to a viewer creating and 401 without a token', async () => {
    const viewer = await h.user('viewer');
    expectProblem(
      await h.http.post('/v1/projects').set(bearer(viewer.token)).send({ name: projectName(), git_url: repo.url }),
      403,
    );
    expectProblem(await h.http.post('/v1/projects').send({ name: projectName(), git_url: repo.url }), 401);
    expectProblem(await h.http.get('/v1/projects'), 401);
  });

  it('hides a project from an operator without a grant (404 everywhere, absent from the list)', async () => {
    const owner = await h.user('operator');
    const p = await createProject(owner.token);
    const stranger = await h.user('operator');
    const t = bearer(stranger.token);
    expectProblem(await h.http.get(`/v1/projects/${p.id}`).set(t), 404);
    expectProblem(await h.http.put(`/v1/projects/${p.id}`).set(t).send({ name: projectName() }), 404);
    expectProblem(await h.http.delete(`/v1/projects/${p.id}`).set(t), 404);
    expectProblem(await h.http.post(`/v1/projects/${p.id}/sync`).set(t), 404);
    expect(ids(await h.http.get('/v1/projects?limit=500').set(t))).not.toContain(p.id);
    expect(ids(await h.http.get('/v1/projects?limit=500').set(bearer(owner.token)))).toContain(p.id);
  });

  it('lets use read and sync but not change; a viewer with use may only read', async () => {
    const owner = await h.user('operator');
    const p = await createProject(owner.token);
    const user = await h.user('operator');
    const viewer = await h.user('viewer');
    await grant(owner.token, user.id, p.id, 'use');
    await grant(owner.token, viewer.id, p.id, 'use');
    expect((await h.http.get(`/v1/projects/${p.id}`).set(bearer(user.token))).status).toBe(200);
    expect((await h.http.post(`/v1/projects/${p.id}/sync`).set(bearer(user.token))).status).toBe(200);
    expectProblem(await h.http.put(`/v1/projects/${p.id}`).set(bearer(user.token)).send({ name: projectName() }), 403);
    expectProblem(await h.http.delete(`/v1/projects/${p.id}`).set(bearer(user.token)), 403);
    expect(ids(await h.http.get('/v1/projects?limit=500').set(bearer(viewer.token)))).toEqual([p.id]);
    expectProblem(await h.http.post(`/v1/projects/${p.id}/sync`).set(bearer(viewer.token)), 403);
    expectProblem(
      await h.http.put(`/v1/projects/${p.id}`).set(bearer(viewer.token)).send({ name: projectName() }),
      403,
    );
  });

  it('lists newest first and pages with the Link header; also served without /v1, deprecated', async () => {
    const op = await h.user('operator');
    const older = await createProject(op.token);
    await h.user('viewer'); // a millisecond apart
    const newer = await createProject(op.token);
    const first = await h.http.get('/v1/projects?limit=1').set(bearer(op.token));
    expect(ids(first)).toEqual([newer.id]);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string);
    expect(next).not.toBeNull();
    expect(ids(await h.http.get(next![1]!).set(bearer(op.token)))).toEqual([older.id]);
    const legacy = await h.http.get('/projects').set(bearer(op.token));
    expect(legacy.status).toBe(200);
    expect(legacy.headers.deprecation).toBeDefined();
    expect(ids(legacy)).toEqual([newer.id, older.id]);
    expectProblem(await h.http.get('/v1/projects?limit=0').set(bearer(op.token)), 400, 'query.limit');
    expectProblem(await h.http.get('/v1/projects?cursor=%25%25').set(bearer(op.token)), 400);
  });

  it('updates: a rename keeps the commit; a new branch is resolved again; a bad one changes nothing', async () => {
    const op = await h.user('operator');
    const p = await createProject(op.token);
    const renamed = projectName('renamed');
    const r1 = await h.http.put(`/v1/projects/${p.id}`).set(bearer(op.token)).send({ name: renamed });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({
      name: renamed,
      last_commit: p.res.body.last_commit,
      synced_at: p.res.body.synced_at,
    });
    const releaseHead = repo.commit('release');
    repo.git('checkout', '-q', 'main');
    const r2 = await h.http.put(`/v1/projects/${p.id}`).set(bearer(op.token)).send({ branch: 'release' });
    expect(r2.status).toBe(200);
    expect(r2.body).toMatchObject({ name: renamed, branch: 'release', last_commit: releaseHead });
    expectProblem(
      await h.http.put(`/v1/projects/${p.id}`).set(bearer(op.token)).send({ branch: 'gone' }),
      422,
      'body.branch',
    );
    expectProblem(
      await h.http.put(`/v1/projects/${p.id}`).set(bearer(op.token)).send({ git_url: 'ext::sh' }),
      400,
      'body.git_url',
    );
    expect((await h.http.get(`/v1/projects/${p.id}`).set(bearer(op.token))).body).toEqual(r2.body);
  });

  it('attaches and detaches a credential by update, checking the type', async () => {
    const p = await createProject(h.admin.token);
    const token = await createCredential(h.admin.token, 'token', { token: TOKEN_SECRET });
    const vault = await createCredential(h.admin.token, 'vault_password', { password: 'x' });
    expectProblem(
      await h.http.put(`/v1/projects/${p.id}`).set(bearer(h.admin.token)).send({ credential_id: vault }),
      400,
      'body.credential_id',
    );
    expectProblem(
      await h.http.put(`/v1/projects/${p.id}`).set(bearer(h.admin.token)).send({ credential_id: UNKNOWN_CREDENTIAL }),
      404,
    );
    const on = await h.http.put(`/v1/projects/${p.id}`).set(bearer(h.admin.token)).send({ credential_id: token });
    expect(on.body.credential_id).toBe(token);
    const off = await h.http.put(`/v1/projects/${p.id}`).set(bearer(h.admin.token)).send({ credential_id: null });
    expect(off.body.credential_id).toBeNull();
  });

  it.each<[string, unknown, string]>([
    ['an empty body', {}, 'body'],
    ['a bad branch', { branch: 'a b' }, 'body.branch'],
    ['http', { git_url: 'http://example.com/x.git' }, 'body.git_url'],
    ['an unknown field', { owner: 'me' }, 'body'],
    ['a null name', { name: null }, 'body.name'],
  ])('rejects an update with %s: 400', async (_what, body, path) => {
    const p = await createProject(h.admin.token);
    expectProblem(
      await h.http
        .put(`/v1/projects/${p.id}`)
        .set(bearer(h.admin.token))
        .send(body as object),
      400,
      path,
    );
  });

  it('answers 409 for a duplicate name, on create and on rename', async () => {
    const a = await createProject(h.admin.token);
    const b = await createProject(h.admin.token);
    expectProblem(
      await h.http.post('/v1/projects').set(bearer(h.admin.token)).send({ name: a.name, git_url: repo.url }),
      409,
    );
    expectProblem(await h.http.put(`/v1/projects/${b.id}`).set(bearer(h.admin.token)).send({ name: a.name }), 409);
  });

  it('deletes a project and the grants on it', async () => {
    const op = await h.user('operator');
    const p = await createProject(op.token);
    expect((await h.http.delete(`/v1/projects/${p.id}`).set(bearer(op.token))).status).toBe(204);
    expectProblem(await h.http.get(`/v1/projects/${p.id}`).set(bearer(h.admin.token)), 404);
    expect((await h.http.get(`/v1/grants?object=${p.id}`).set(bearer(h.admin.token))).body).toEqual([]);
    expectProblem(await h.http.delete(`/v1/projects/${p.id}`).set(bearer(h.admin.token)), 404);
  });

  it('answers 409 to deleting a project an inventory source still references (the foreign key backs usedBy)', async () => {
    const p = await createProject(h.admin.token);
    const at = new Date().toISOString();
    const k = h.tdb.db.kysely;
    await k
      .insertInto('inventories')
      .values({
        id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        name: projectName('inv'),
        format: 'ini',
        content: '',
        groups: '[]',
        host_count: 0,
        created_by: h.admin.id,
        created_at: at,
        updated_at: at,
      })
      .execute();
    await k
      .insertInto('inventory_sources')
      .values({
        id: 'src_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        name: projectName('src'),
        kind: 'script',
        inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        project_id: p.id,
        path: 'inv.py',
        url: null,
        credential_id: null,
        refresh_interval_s: null,
        refreshed_at: null,
        host_count: null,
        last_error: null,
        created_by: h.admin.id,
        created_at: at,
        updated_at: at,
      })
      .execute();
    expectProblem(await h.http.delete(`/v1/projects/${p.id}`).set(bearer(h.admin.token)), 409);
    expect((await h.http.get(`/v1/projects/${p.id}`).set(bearer(h.admin.token))).status).toBe(200);
    expect((await h.http.get(`/v1/grants?object=${p.id}`).set(bearer(h.admin.token))).body).toHaveLength(1);
  });

  it('answers 404 for an unknown project and 400 naming path.id for a malformed one, on every route', async () => {
    const t = bearer(h.admin.token);
    for (const [id, status, path] of [
      [UNKNOWN_PROJECT, 404, undefined],
      ['not-an-id', 400, 'path.id'],
      [UNKNOWN_CREDENTIAL, 400, 'path.id'],
    ] as const) {
      expectProblem(await h.http.get(`/v1/projects/${id}`).set(t), status, path);
      expectProblem(await h.http.put(`/v1/projects/${id}`).set(t).send({ name: projectName() }), status, path);
      expectProblem(await h.http.delete(`/v1/projects/${id}`).set(t), status, path);
      expectProblem(await h.http.post(`/v1/projects/${id}/sync`).set(t), status, path);
    }
  });

  it('records project mutations in the audit trail', async () => {
    const op = await h.user('operator');
    const p = await createProject(op.token);
    expect((await h.http.post(`/v1/projects/${p.id}/sync`).set(bearer(op.token))).status).toBe(200);
    expect((await h.http.put(`/v1/projects/${p.id}`).set(bearer(op.token)).send({ name: projectName() })).status).toBe(
      200,
    );
    expect((await h.http.delete(`/v1/projects/${p.id}`).set(bearer(op.token))).status).toBe(204);
    const res = await h.http.get(`/v1/audit?object=${p.id}`).set(bearer(h.admin.token));
    expect(res.body.map((e: { action: string }) => e.action)).toEqual([
      'project.delete',
      'project.update',
      'project.sync',
      'project.create',
    ]);
    for (const e of res.body) expect(e.actor).toBe(op.id);
  });

  describe('over ssh with an ssh_key credential', () => {
    const sshDir = path.join(root, 'ssh');
    fs.mkdirSync(sshDir, { recursive: true });
    const sshRepo = createRepo(sshDir);
    const key = sshKeyPair(sshDir, 'deploy', 'deploy pass');
    const stranger = sshKeyPair(sshDir, 'stranger');
    let sshd: Awaited<ReturnType<typeof startSshd>>;
    let url: string;
    beforeAll(async () => {
      sshd = await startSshd(sshDir, [key.publicKey]);
      url = `ssh://root@127.0.0.1:${sshd.port}${sshRepo.dir}`;
    });
    afterAll(async () => {
      await sshd?.stop();
    });

    it('records the head, syncs a new commit, and never returns the key', async () => {
      const cred = await createCredential(h.admin.token, 'ssh_key', {
        private_key: key.privateKey,
        passphrase: 'deploy pass',
      });
      const p = await createProject(h.admin.token, { git_url: url, credential_id: cred });
      expect(p.res.body.last_commit).toBe(sshRepo.head());
      const newer = sshRepo.commit();
      const synced = await h.http.post(`/v1/projects/${p.id}/sync`).set(bearer(h.admin.token));
      expect(synced.body.last_commit).toBe(newer);
      for (const res of [p.res, synced]) expect(res.text).not.toMatch(/PRIVATE KEY|deploy pass/);
      const spec = await h.services.projects.checkoutSpec({ id: h.admin.id, username: 'root', role: 'admin' }, p.id);
      expect(spec).toMatchObject({ url, commit: newer, auth: { kind: 'ssh_key', passphrase: 'deploy pass' } });
    });

    it("answers 422 with ssh's reason for a key the server does not accept, and for none", async () => {
      const cred = await createCredential(h.admin.token, 'ssh_key', { private_key: stranger.privateKey });
      const res = await h.http
        .post('/v1/projects')
        .set(bearer(h.admin.token))
        .send({ name: projectName(), git_url: url, credential_id: cred });
      expectProblem(res, 422, 'body.git_url');
      expect(res.body.detail).toContain('Permission denied');
      expectProblem(
        await h.http.post('/v1/projects').set(bearer(h.admin.token)).send({ name: projectName(), git_url: url }),
        422,
      );
    });
  });
});
