// Galaxy requirements through the API, on SQLite and PostgreSQL, with the real ansible-galaxy and ansible-playbook:
// a sync reports the requirements of the commit; runs install a role and a collection from local git repositories into
// the project's cache (a hit on the next run, a miss when the requirements change); a broken requirement fails the
// run `requirements` with galaxy's words in the log; a project's galaxy credential sends its token to the server it
// names (a local HTTP server here) and the token never reaches the log.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import {
  collectionRequirement,
  createCollectionRepo,
  createRepo,
  createRoleRepo,
  roleRequirement,
  tempDir,
} from '@baton/executor/testing';
import { bearer, createHarness, expectProblem, type Harness, runFinished } from '../testing/harness.js';

const LOCAL = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const PLAYBOOK = [
  '- hosts: all',
  '  gather_facts: false',
  '  roles:',
  '    - baton_test_role',
  '    - baton.testcoll.inner',
  '',
].join('\n');

describe.each(DIALECTS)('Galaxy requirements on %s', (dialect) => {
  const root = tempDir(`baton-galaxy-${dialect}`);
  const cache = path.join(root, 'cache');
  let h: Harness;
  let auth: Record<string, string>;
  let repo: ReturnType<typeof createRepo>;
  let projectId: string;
  let role: ReturnType<typeof createRoleRepo>;
  let collection: ReturnType<typeof createCollectionRepo>;

  const commitFiles = (files: Record<string, string>) => {
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(repo.dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(repo.dir, rel), text);
    }
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'requirements');
  };
  const sync = async () => {
    const res = await h.http.post(`/v1/projects/${projectId}/sync`).set(auth);
    expect(res.status).toBe(200);
    return res.body as { last_commit: string; requirements: Array<Record<string, unknown>> };
  };
  const runOnce = async () => {
    const res = await h.http
      .post('/v1/runs')
      .set(auth)
      .send({ project_id: projectId, playbook: 'site.yml', inventory: LOCAL });
    expect(res.status).toBe(201);
    const run = await runFinished(h, res.body.id as string, h.admin.token);
    const log = (await h.http.get(`/v1/runs/${run.id}/logs`).set(auth)).text;
    return { run, log };
  };
  const cacheEntries = () => fs.readdirSync(path.join(cache, projectId)).filter((n) => !n.includes('.tmp-'));

  beforeAll(async () => {
    fs.mkdirSync(cache);
    h = await createHarness(dialect, { executors: { count: 2, requirementsCache: cache } });
    auth = bearer(h.admin.token);
    role = createRoleRepo(root);
    collection = createCollectionRepo(root);
    repo = createRepo(root, 'project');
    commitFiles({
      'site.yml': PLAYBOOK,
      'roles/requirements.yml': roleRequirement(role),
      'collections/requirements.yml': `collections:\n${collectionRequirement(collection).replace(/^/gm, '  ')}`,
    });
    const res = await h.http
      .post('/v1/projects')
      .set(auth)
      .send({ name: `galaxy ${dialect}`, git_url: repo.url });
    expect(res.status).toBe(201);
    projectId = res.body.id as string;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('a sync reports the requirements at the commit', async () => {
    const synced = await sync();
    expect(synced.last_commit).toBe(repo.head());
    expect(synced.requirements).toEqual([
      { path: 'roles/requirements.yml', roles: [`baton_test_role from ${role.url}`], collections: [] },
      { path: 'collections/requirements.yml', roles: [], collections: [`${collection.url} (HEAD)`] },
    ]);
  });

  it('installs a role and a collection before the run, from the cache on the next run, again when they change', async () => {
    await sync();
    const first = await runOnce();
    expect(first.run.conclusion).toBe('succeeded');
    expect(first.log).toMatch(
      /baton: installing requirements \(roles\/requirements\.yml, collections\/requirements\.yml\)/,
    );
    expect(first.log).toMatch(/hello from the role/);
    expect(first.log).toMatch(/"msg": "inner"/);
    expect(cacheEntries()).toHaveLength(1);

    const second = await runOnce();
    expect(second.run.conclusion).toBe('succeeded');
    expect(second.log).toMatch(/baton: requirements unchanged, using the cache/);
    expect(second.log).not.toMatch(/baton: installing requirements/);
    expect(cacheEntries()).toHaveLength(1);

    // A commit that changes only the playbook keeps the cache; one that changes the requirements misses it.
    commitFiles({ 'site.yml': `${PLAYBOOK}# touched\n` });
    await sync();
    expect((await runOnce()).log).toMatch(/using the cache/);
    commitFiles({ 'roles/requirements.yml': `# pinned again\n${roleRequirement(role)}` });
    await sync();
    const changed = await runOnce();
    expect(changed.run.conclusion).toBe('succeeded');
    expect(changed.log).toMatch(/baton: installing requirements/);
    expect(cacheEntries()).toHaveLength(2);
  }, 180_000);

  it('a broken requirement fails the run `requirements` with ansible-galaxy in its log', async () => {
    commitFiles({ 'roles/requirements.yml': `- src: git+file://${root}/no-such-repo\n  name: missing_role\n` });
    const synced = await sync();
    expect(synced.requirements[0]).toMatchObject({
      path: 'roles/requirements.yml',
      roles: [`missing_role from git+file://${root}/no-such-repo`],
    });
    const broken = await runOnce();
    expect(broken.run).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
    expect(broken.log).toMatch(/baton: installing requirements/);
    expect(broken.log).toMatch(/does not appear to be a git repository|failed/i);
    expect(broken.log).toMatch(/baton: installing requirements failed/);
    // Put it right for the next test.
    commitFiles({ 'roles/requirements.yml': roleRequirement(role) });
    await sync();
  }, 120_000);

  it("a project's galaxy credential: its token goes to the server it names, never to the log", async () => {
    const token = `galaxy-canary-${dialect}-${Date.now()}`;
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"detail": "not found"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
      // A galaxy credential needs an http(s) URL without user info and a one-word token.
      for (const [inputs, path] of [
        [{ url: 'ftp://hub.example.com/', token }, 'body.inputs.url'],
        [{ url: 'https://user:pw@hub.example.com/', token }, 'body.inputs.url'],
        [{ url }, 'body.inputs.token'],
        [{ url, token: 'two words' }, 'body.inputs.token'],
        [{ url, token: '\ud800' }, undefined],
      ] as const) {
        const bad = await h.http
          .post('/v1/credentials')
          .set(auth)
          .send({ name: `bad hub ${dialect}`, type: 'galaxy', inputs });
        expectProblem(bad, 400, path);
      }
      const cred = await h.http
        .post('/v1/credentials')
        .set(auth)
        .send({ name: `hub ${dialect}`, type: 'galaxy', inputs: { url, token } });
      expect(cred.status).toBe(201);
      expect(JSON.stringify(cred.body)).not.toContain(token);
      const tokenCred = await h.http
        .post('/v1/credentials')
        .set(auth)
        .send({ name: `git token ${dialect}`, type: 'token', inputs: { token: 'x-token-value' } });

      // Only a galaxy credential may be a project's Galaxy server.
      expectProblem(
        await h.http.put(`/v1/projects/${projectId}`).set(auth).send({ galaxy_credential_id: tokenCred.body.id }),
        400,
        'body.galaxy_credential_id',
      );
      const attach = await h.http
        .put(`/v1/projects/${projectId}`)
        .set(auth)
        .send({ galaxy_credential_id: cred.body.id });
      expect(attach.status).toBe(200);
      expect(attach.body.galaxy_credential_id).toBe(cred.body.id);
      // In use: it cannot be deleted.
      expectProblem(await h.http.delete(`/v1/credentials/${cred.body.id}`).set(auth), 409);

      commitFiles({
        'collections/requirements.yml': 'collections:\n  - name: baton_remote.absent\n    version: 1.0.0\n',
      });
      await sync();
      const run = await runOnce();
      expect(run.run).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
      expect(seen).toContain(`Token ${token}`);
      expect(run.log).not.toContain(token);
      const events = (await h.http.get(`/v1/runs/${run.run.id}/events`).set(auth)).text;
      expect(events).not.toContain(token);

      const detach = await h.http.put(`/v1/projects/${projectId}`).set(auth).send({ galaxy_credential_id: null });
      expect(detach.body.galaxy_credential_id).toBeNull();
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 120_000);

  it('the cache holds no galaxy token', () => {
    // grep exits 1 when nothing matches, 0 when something does.
    const found = spawnSync('grep', ['-rl', 'galaxy-canary', cache], { encoding: 'utf8' });
    expect(found.status).toBe(1);
    expect(found.stdout).toBe('');
    expect(cacheEntries().length).toBeGreaterThanOrEqual(2);
  });
});
