import crypto from 'node:crypto';
import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { systemClock } from '@baton/core';
import { openDatabase } from '@baton/db';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import supertest from 'supertest';
import { createApp } from '../app.js';
import { createLogger } from '../logger.js';
import { databaseGauges } from '../system/metrics.js';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';
import { createServices } from '../wiring.js';

const INVENTORY = 'localhost ansible_connection=local\n';
const ZERO = '0'.repeat(40);
const UNKNOWN = { trg: 'trg_01ARZ3NDEKTSV4RRFFQ69G5FAV', prj: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV' };
let seq = 0;
const unique = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;
const hmac = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');

interface Created {
  id: string;
  token: string;
  hook_url: string;
  secret: string;
}

describe.each(DIALECTS)('webhook triggers on %s', (dialect) => {
  let h: Harness;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
  const root = tempDir(`baton-triggers-${dialect}`);
  const repo = createRepo(root, 'site');
  const other = createRepo(root, 'other');
  let op: { id: string; token: string; username: string };
  let projectId: string;

  beforeAll(async () => {
    h = await createHarness(dialect, { logStream: logs });
    op = await h.user('operator');
    projectId = await createProject(op.token, repo.url);
  }, 60_000);
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const createProject = async (token: string, url: string) => {
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(token))
      .send({ name: unique('prj'), git_url: url });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const runTarget = (project = projectId) => ({
    run: { project_id: project, playbook: 'site.yml', inventory: INVENTORY },
  });
  const create = async (body: Record<string, unknown> = {}, token = op.token): Promise<Created> => {
    const res = await h.http
      .post('/v1/triggers')
      .set(bearer(token))
      .send({ name: unique('trg'), target: runTarget(), ...body });
    expect(res.status).toBe(201);
    return res.body as Created;
  };

  /** A GitHub push payload of `repo` moving `ref` to `after`. */
  const githubPush = (after: string, ref = 'refs/heads/main', url = repo.url) =>
    JSON.stringify({
      ref,
      before: ZERO,
      after,
      repository: { full_name: 'ops/site', clone_url: url, html_url: url },
      head_commit: after === ZERO ? null : { id: after },
    });
  const deliver = (token: string, body: string, headers: Record<string, string> = {}) => {
    let req = h.http.post(`/hooks/${token}`).set('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return req.send(body);
  };
  /** Signed the GitHub way, with a fresh delivery id unless one is given. */
  const github = (t: Created, body: string, extra: Record<string, string> = {}) =>
    deliver(t.token, body, {
      'X-GitHub-Event': 'push',
      'X-GitHub-Delivery': crypto.randomUUID(),
      'X-Hub-Signature-256': `sha256=${hmac(t.secret, body)}`,
      ...extra,
    });
  const runsOf = async (triggerId: string) => {
    const res = await h.http.get(`/v1/runs?trigger=${triggerId}`).set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    return res.body as Array<{ id: string; commit: string; ref: string; origin: string; trigger_id: string }>;
  };
  const auditOf = (object: string) => h.tdb.db.repos.audit.list({ object }, { limit: 50 });

  describe('create, read, update, delete', () => {
    it('creates: 201 with Location, the token, hook URL and secret, shown only now; sealed at rest; audited without them', async () => {
      const res = await h.http
        .post('/v1/triggers')
        .set(bearer(op.token))
        .send({ name: unique('deploy'), target: runTarget(), filters: { branches: ['main', 'release/*'] } });
      expect(res.status).toBe(201);
      const t = res.body as Created & Record<string, unknown>;
      expect(t.id).toMatch(/^trg_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(res.headers.location).toBe(`/v1/triggers/${t.id}`);
      expect(t.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(t.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(t.hook_url).toBe(`http://127.0.0.1:8080/hooks/${t.token}`);
      expect(t).toMatchObject({
        require_signature: true,
        filters: { events: ['push'], branches: ['main', 'release/*'] },
        target: runTarget(),
        created_by: op.id,
        last_delivery_at: null,
        last_run_id: null,
      });

      const row = (await h.tdb.db.repos.triggers.findById(t.id))!;
      expect(row.secret_enc).not.toContain(t.secret);
      expect(h.keyring.decrypt(row.secret_enc).toString()).toBe(t.secret);

      const got = await h.http.get(`/v1/triggers/${t.id}`).set(bearer(op.token));
      expect(got.status).toBe(200);
      expect(got.body.secret).toBeUndefined();
      expect(got.body.token).toBeUndefined();
      expect(got.body.hook_url).toBe(t.hook_url);
      const listed = await h.http.get('/v1/triggers').set(bearer(op.token));
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain(t.secret);
      expect((listed.body as Array<{ id: string }>).map((x) => x.id)).toContain(t.id);

      const entries = await auditOf(t.id);
      expect(entries.map((e) => e.action)).toContain('trigger.create');
      expect(JSON.stringify(entries)).not.toContain(t.secret);
      expect(JSON.stringify(entries)).not.toContain(t.token);
      // The creator manages it: the grant is there, so it is grantable too.
      const viewer = await h.user('viewer');
      expect(
        (await h.http.post('/v1/grants').set(bearer(op.token)).send({ subject: viewer.id, object: t.id, level: 'use' }))
          .status,
      ).toBe(201);
      const asUser = await h.http.get(`/v1/triggers/${t.id}`).set(bearer(viewer.token));
      expect(asUser.status).toBe(200);
      expect(asUser.body.hook_url).toBeNull();
      expect((await h.http.put(`/v1/triggers/${t.id}`).set(bearer(viewer.token)).send({ name: 'x' })).status).toBe(403);
    });

    it('refuses bad bodies at their field', async () => {
      const post = (body: Record<string, unknown>) => h.http.post('/v1/triggers').set(bearer(op.token)).send(body);
      expectProblem(await post({ target: runTarget() }), 400, 'body.name');
      expectProblem(await post({ name: unique('t') }), 400, 'body.target');
      expectProblem(await post({ name: unique('t'), target: {} }), 400, 'body.target');
      expectProblem(
        await post({ name: unique('t'), target: { ...runTarget(), template_id: 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV' } }),
        400,
        'body.target',
      );
      expectProblem(
        await post({ name: unique('t'), target: runTarget(), require_signature: 'yes' }),
        400,
        'body.require_signature',
      );
      expectProblem(
        await post({ name: unique('t'), target: runTarget(), filters: { events: ['push'], tags: ['v*'] } }),
        400,
        'body.filters.tags',
      );
      expectProblem(
        await post({ name: unique('t'), target: runTarget(), filters: { events: ['merge'] } }),
        400,
        'body.filters.events.0',
      );
      expectProblem(
        await post({ name: unique('t'), target: runTarget(), filters: { branches: [] } }),
        400,
        'body.filters.branches',
      );
      expectProblem(await post({ name: unique('t'), target: runTarget(), token: 'mine' }), 400);
      // The target is checked as a submission would be: its fields are reported under body.target.
      expectProblem(
        await post({ name: unique('t'), target: { run: { project_id: projectId, playbook: 'site.yml' } } }),
        400,
        'body.target.run.inventory_id',
      );
      expectProblem(
        await post({
          name: unique('t'),
          target: { run: { project_id: projectId, playbook: 'missing.yml', inventory: INVENTORY } },
        }),
        422,
      );
      // An inline playbook has no commit to run: a trigger needs a project.
      expectProblem(
        await post({
          name: unique('t'),
          target: { run: { playbook: '- hosts: all\n  tasks: []\n', inventory: INVENTORY } },
        }),
        400,
        'body.target',
      );
    });

    it('needs use on everything the target names, and a role that may create', async () => {
      const stranger = await h.user('operator');
      const post = (token: string, target: unknown) =>
        h.http
          .post('/v1/triggers')
          .set(bearer(token))
          .send({ name: unique('t'), target });
      expectProblem(await post(stranger.token, runTarget()), 404);
      expectProblem(await post(op.token, runTarget(UNKNOWN.prj)), 404);
      const viewer = await h.user('viewer');
      expectProblem(await post(viewer.token, runTarget()), 403);
      expectProblem(await h.http.post('/v1/triggers').send({ name: 'x', target: runTarget() }), 401);
    });

    it('refuses a duplicate name with 409, on create and on rename', async () => {
      const a = await create();
      const name = unique('taken');
      await create({ name });
      expectProblem(await h.http.post('/v1/triggers').set(bearer(op.token)).send({ name, target: runTarget() }), 409);
      expectProblem(await h.http.put(`/v1/triggers/${a.id}`).set(bearer(op.token)).send({ name }), 409);
    });

    it('updates: renames, toggles require_signature, changes filters, retargets; never shows the secret', async () => {
      const t = await create();
      const name = unique('renamed');
      const res = await h.http
        .put(`/v1/triggers/${t.id}`)
        .set(bearer(op.token))
        .send({ name, require_signature: false, filters: { tags: ['v*'] } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: t.id,
        name,
        require_signature: false,
        filters: { events: ['tag_push'], tags: ['v*'] },
      });
      expect(res.body.secret).toBeUndefined();
      const otherProject = await createProject(op.token, other.url);
      const retarget = await h.http
        .put(`/v1/triggers/${t.id}`)
        .set(bearer(op.token))
        .send({ target: runTarget(otherProject), filters: {} });
      expect(retarget.status).toBe(200);
      expect(retarget.body).toMatchObject({ target: runTarget(otherProject), filters: { events: ['push'] } });
      expect((await h.http.get(`/v1/triggers/${t.id}`).set(bearer(op.token))).body).toMatchObject({ name });
      const actions = (await auditOf(t.id)).map((e) => e.action);
      expect(actions.filter((a) => a === 'trigger.update')).toHaveLength(2);
      // launch_refs follow the target
      expect(await h.tdb.db.repos.launchRefs.ownersOf(otherProject)).toEqual([
        expect.objectContaining({ id: t.id, kind: 'trigger' }),
      ]);
      expect((await h.tdb.db.repos.launchRefs.ownersOf(projectId)).map((o) => o.id)).not.toContain(t.id);
    });

    it('refuses bad updates: empty body, bad fields, unknown ids, others’ triggers, targets the caller cannot use', async () => {
      const t = await create();
      const put = (id: string, body: unknown, token = op.token) =>
        h.http
          .put(`/v1/triggers/${id}`)
          .set(bearer(token))
          .send(body as object);
      expectProblem(await put(t.id, {}), 400);
      expectProblem(await put(t.id, { name: '' }), 400, 'body.name');
      expectProblem(await put(t.id, { require_signature: 1 }), 400, 'body.require_signature');
      expectProblem(await put(t.id, { target: { run: {} } }), 400);
      expectProblem(await put(UNKNOWN.trg, { name: 'x' }), 404);
      expectProblem(await put('prj_01ARZ3NDEKTSV4RRFFQ69G5FAV', { name: 'x' }), 400, 'path.id');
      const stranger = await h.user('operator');
      expectProblem(await put(t.id, { name: 'x' }, stranger.token), 404);
      expectProblem(await h.http.get(`/v1/triggers/${t.id}`).set(bearer(stranger.token)), 404);
      expectProblem(await h.http.delete(`/v1/triggers/${t.id}`).set(bearer(stranger.token)), 404);
      expectProblem(await h.http.post(`/v1/triggers/${t.id}/rotate-secret`).set(bearer(stranger.token)), 404);
      const theirs = await createProject(stranger.token, other.url);
      expectProblem(await put(t.id, { target: runTarget(theirs) }), 404);
    });

    it('deletes: 204, then 404 everywhere, including the hook', async () => {
      const t = await create();
      const res = await h.http.delete(`/v1/triggers/${t.id}`).set(bearer(op.token));
      expect(res.status).toBe(204);
      expectProblem(await h.http.get(`/v1/triggers/${t.id}`).set(bearer(op.token)), 404);
      expectProblem(await h.http.delete(`/v1/triggers/${t.id}`).set(bearer(op.token)), 404);
      expectProblem(await github(t, githubPush(repo.head())), 404);
      expect((await auditOf(t.id)).map((e) => e.action)).toContain('trigger.delete');
      expect((await h.tdb.db.repos.launchRefs.ownersOf(projectId)).map((o) => o.id)).not.toContain(t.id);
    });

    it('is served without /v1 too, deprecated', async () => {
      const res = await h.http.get('/triggers').set(bearer(op.token));
      expect(res.status).toBe(200);
      expect(res.headers.deprecation).toBeDefined();
      // The hook is in the OpenAPI document, unversioned and without bearer auth.
      const doc = (await h.http.get('/v1/openapi.json')).body as {
        paths: Record<string, Record<string, { operationId: string; security: unknown[] }>>;
      };
      expect(doc.paths['/hooks/{token}']!.post).toMatchObject({ operationId: 'fireHook', security: [] });
      expect(doc.paths['/v1/hooks/{token}']).toBeUndefined();
      expect(doc.paths['/triggers/{id}/rotate-secret']!.post!.operationId).toBe('rotateTriggerSecretLegacy');
    });
  });

  describe('deliveries', () => {
    it('fires on a GitHub-signed push: 202, a run of exactly the pushed commit, recorded as from the trigger', async () => {
      const t = await create();
      const first = repo.head();
      repo.commit();
      // The pushed commit, not whatever the branch head is when the hook arrives.
      const res = await github(t, githubPush(first));
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ fired: true, run_id: expect.stringMatching(/^run_/) });
      const run = await h.http.get(`/v1/runs/${res.body.run_id}`).set(bearer(op.token));
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({
        origin: 'trigger',
        trigger_id: t.id,
        commit: first,
        ref: first,
        project_id: projectId,
        submitted_by: op.id,
      });
      const row = (await h.tdb.db.repos.triggers.findById(t.id))!;
      expect(row.last_run_id).toBe(res.body.run_id);
      expect(row.last_delivery_at).not.toBeNull();
    });

    it('fires on a Gitea delivery (its own header and GitHub’s) and prefers Gitea’s header', async () => {
      const t = await create();
      const body = githubPush(repo.head());
      const headers = (gitea: string, hub: string) => ({
        'X-Gitea-Event': 'push',
        'X-GitHub-Event': 'push',
        'X-Gitea-Delivery': crypto.randomUUID(),
        'X-Gitea-Signature': gitea,
        'X-Hub-Signature-256': `sha256=${hub}`,
      });
      const ok = await deliver(t.token, body, headers(hmac(t.secret, body), hmac(t.secret, body)));
      expect(ok.status).toBe(202);
      expect(ok.body.fired).toBe(true);
      expectProblem(await deliver(t.token, body, headers(hmac('wrong', body), hmac(t.secret, body))), 401);
    });

    it('fires on a GitLab push with its token, and on a tag push', async () => {
      const t = await create({ filters: { branches: ['main'], tags: ['v*'] } });
      const head = repo.head();
      const gitlab = (kind: 'Push Hook' | 'Tag Push Hook', ref: string, token = t.secret) =>
        deliver(
          t.token,
          JSON.stringify({
            object_kind: kind === 'Push Hook' ? 'push' : 'tag_push',
            ref,
            before: ZERO,
            after: head,
            checkout_sha: head,
            project: { path_with_namespace: 'ops/site', git_http_url: repo.url },
          }),
          { 'X-Gitlab-Event': kind, 'X-Gitlab-Event-UUID': crypto.randomUUID(), 'X-Gitlab-Token': token },
        );
      const push = await gitlab('Push Hook', 'refs/heads/main');
      expect(push.status).toBe(202);
      expect(push.body.fired).toBe(true);
      const tag = await gitlab('Tag Push Hook', 'refs/tags/v1.0');
      expect(tag.status).toBe(202);
      expect(tag.body.fired).toBe(true);
      expect((await h.http.get(`/v1/runs/${tag.body.run_id}`).set(bearer(op.token))).body).toMatchObject({
        commit: head,
      });
      expectProblem(await gitlab('Push Hook', 'refs/heads/main', 'wrong'), 401);
    });

    it('refuses tampered bodies, wrong secrets and unsigned deliveries with 401, fires nothing, and audits without the body', async () => {
      const t = await create();
      const body = githubPush(repo.head());
      const tampered = body.replace('refs/heads/main', 'refs/heads/mainx');
      const signed = (sig: string, b = body) =>
        deliver(t.token, b, { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sig, 'X-GitHub-Delivery': 'd-1' });
      expectProblem(await signed(`sha256=${hmac(t.secret, body)}`, tampered), 401);
      expectProblem(await signed(`sha256=${hmac('not the secret', body)}`), 401);
      expectProblem(await signed('sha256=not-hex'), 401);
      const unsigned = await deliver(t.token, body, { 'X-GitHub-Event': 'push' });
      expectProblem(unsigned, 401);
      expect(unsigned.headers['www-authenticate']).toBeUndefined();
      expect(await runsOf(t.id)).toEqual([]);
      const refused = (await auditOf(t.id)).filter((e) => e.action === 'trigger.signature_refused');
      expect(refused).toHaveLength(4);
      expect(refused.map((e) => e.summary).join('\n')).toMatch(/unsigned/);
      for (const e of refused) {
        expect(e.summary).not.toContain('refs/heads');
        expect(e.summary).not.toContain(repo.url);
        expect(e.summary).not.toContain(t.token);
      }
      // The refused delivery id was not claimed: the genuine delivery with that id still fires.
      const genuine = await signed(`sha256=${hmac(t.secret, body)}`);
      expect(genuine.status).toBe(202);
      expect(genuine.body.fired).toBe(true);
    });

    it('accepts unsigned deliveries when require_signature is false', async () => {
      const t = await create({ require_signature: false });
      const res = await deliver(t.token, githubPush(repo.head()), { 'X-GitHub-Event': 'push' });
      expect(res.status).toBe(202);
      expect(res.body.fired).toBe(true);
      // …and toggled back on, refuses them
      await h.http.put(`/v1/triggers/${t.id}`).set(bearer(op.token)).send({ require_signature: true });
      expectProblem(await deliver(t.token, githubPush(repo.head()), { 'X-GitHub-Event': 'push' }), 401);
    });

    it('rotates the secret: the old one is refused, the new one fires; the hook URL stays', async () => {
      const t = await create();
      const res = await h.http.post(`/v1/triggers/${t.id}/rotate-secret`).set(bearer(op.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: t.id, token: t.token, hook_url: t.hook_url });
      expect(res.body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(res.body.secret).not.toBe(t.secret);
      expectProblem(await github(t, githubPush(repo.head())), 401);
      const fired = await github({ ...t, secret: res.body.secret as string }, githubPush(repo.head()));
      expect(fired.status).toBe(202);
      expect(fired.body.fired).toBe(true);
      const entries = await auditOf(t.id);
      expect(entries.map((e) => e.action)).toContain('trigger.rotate_secret');
      expect(JSON.stringify(entries)).not.toContain(res.body.secret);
      expectProblem(await h.http.post(`/v1/triggers/${UNKNOWN.trg}/rotate-secret`).set(bearer(op.token)), 404);
    });

    it('fires a delivery id once: a replay answers duplicate with the first run', async () => {
      const t = await create();
      const body = githubPush(repo.head());
      const headers = { 'X-GitHub-Delivery': crypto.randomUUID() };
      const first = await github(t, body, headers);
      expect(first.body.fired).toBe(true);
      const again = await github(t, body, headers);
      expect(again.status).toBe(202);
      expect(again.body).toEqual({ fired: false, reason: 'duplicate delivery', run_id: first.body.run_id });
      expect(await runsOf(t.id)).toHaveLength(1);
    });

    it('filters: branch globs, tags, deletions of branches and tags, pings and other events', async () => {
      const t = await create({ filters: { branches: ['main', 'release/*'], tags: ['v*'] } });
      const head = repo.head();
      const outcome = async (body: string, event = 'push') => {
        const res = await github(t, body, { 'X-GitHub-Event': event });
        expect(res.status).toBe(202);
        return res.body as { fired: boolean; reason?: string };
      };
      expect(await outcome(githubPush(head, 'refs/heads/release/2.0'))).toMatchObject({ fired: true });
      expect(await outcome(githubPush(head, 'refs/heads/release/2.0/hotfix'))).toEqual({
        fired: false,
        reason: expect.stringMatching(/branch release\/2.0\/hotfix matches none/),
      });
      expect(await outcome(githubPush(head, 'refs/heads/feature'))).toMatchObject({ fired: false });
      expect(await outcome(githubPush(head, 'refs/tags/v2'))).toMatchObject({ fired: true });
      expect(await outcome(githubPush(head, 'refs/tags/nightly'))).toMatchObject({ fired: false });
      expect(await outcome(githubPush(ZERO, 'refs/tags/v2'))).toEqual({ fired: false, reason: 'tag v2 was deleted' });
      expect(await outcome(githubPush(ZERO, 'refs/heads/main'))).toEqual({
        fired: false,
        reason: 'branch main was deleted',
      });
      expect(await outcome(JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 }), 'ping')).toEqual({
        fired: false,
        reason: expect.stringMatching(/^ping/),
      });
      expect(await outcome(JSON.stringify({ action: 'opened' }), 'pull_request')).toMatchObject({ fired: false });
      expect(await runsOf(t.id)).toHaveLength(2);

      // Default filters: branch pushes only.
      const d = await create();
      const tag = await github(d, githubPush(head, 'refs/tags/v1'));
      expect(tag.body).toEqual({ fired: false, reason: expect.stringMatching(/tag pushes do not fire/) });
    });

    it('answers 413 over 5 MiB, 400 to what is not JSON or not a push, 404 to unknown tokens, 422 to another repository', async () => {
      const t = await create();
      const big = JSON.stringify({ ref: 'refs/heads/main', pad: 'x'.repeat(5 * 1024 * 1024) });
      expectProblem(await github(t, big), 413);
      const notJson = '{"ref": refs/heads/main';
      expectProblem(await github(t, notJson), 400, 'body');
      expectProblem(await github(t, JSON.stringify({ after: repo.head() })), 400, 'body.ref');
      expectProblem(await github(t, JSON.stringify({ ref: 'refs/heads/main', after: 'HEAD' })), 400, 'body.after');
      expectProblem(await deliver(crypto.randomBytes(32).toString('base64url'), githubPush(repo.head())), 404);
      expectProblem(await deliver('short', githubPush(repo.head())), 404);
      const elsewhere = await github(
        t,
        githubPush(repo.head(), 'refs/heads/main', 'https://git.example.com/ops/other.git'),
      );
      expectProblem(elsewhere, 422, 'body.repository');
      // Matching by full name works whatever URL the forge reports.
      const byName = JSON.stringify({
        ref: 'refs/heads/main',
        after: repo.head(),
        repository: { full_name: repo.dir.replace(/^\//, ''), clone_url: 'https://mirror.example.com/x.git' },
      });
      expect((await github(t, byName)).body.fired).toBe(true);
      expectProblem(await h.http.get(`/hooks/${t.token}`), 405);
      expect(await runsOf(t.id)).toHaveLength(1);
    });

    it('accepts GitHub’s form-encoded deliveries', async () => {
      const t = await create();
      const body = new URLSearchParams({ payload: githubPush(repo.head()) }).toString();
      const res = await h.http
        .post(`/hooks/${t.token}`)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('X-GitHub-Event', 'push')
        .set('X-Hub-Signature-256', `sha256=${hmac(t.secret, body)}`)
        .send(body);
      expect(res.status).toBe(202);
      expect(res.body.fired).toBe(true);
    });

    it('a launch that fails answers 4xx with the reason, audited, and the delivery may be redelivered', async () => {
      const owner = await h.user('operator');
      const project = await createProject(owner.token, repo.url);
      const t = await create({ target: runTarget(project) }, owner.token);
      // The owner loses use on the project: the trigger launches with the owner's grants.
      const grants = await h.http.get(`/v1/grants`).set(bearer(h.admin.token));
      const grant = (grants.body as Array<{ id: string; subject: string; object: string }>).find(
        (g) => g.subject === owner.id && g.object === project,
      )!;
      expect((await h.http.delete(`/v1/grants/${grant.id}`).set(bearer(h.admin.token))).status).toBe(204);
      const delivery = { 'X-GitHub-Delivery': crypto.randomUUID() };
      const res = await github(t, githubPush(repo.head()), delivery);
      expectProblem(res, 422);
      expect(res.body.detail).toMatch(new RegExp(`trigger ${t.id} could not launch its target as ${owner.username}`));
      expect((await auditOf(t.id)).map((e) => e.action)).toContain('trigger.fire_failed');
      // Granted again, the forge's redelivery of the same id fires.
      await h.http
        .post('/v1/grants')
        .set(bearer(h.admin.token))
        .send({ subject: owner.id, object: project, level: 'use' });
      expect((await github(t, githubPush(repo.head()), delivery)).body.fired).toBe(true);

      // The owner deleted: 409.
      expect((await h.http.delete(`/v1/users/${owner.id}`).set(bearer(h.admin.token))).status).toBe(204);
      const gone = await github(t, githubPush(repo.head()));
      expectProblem(gone, 409);
      expect(gone.body.detail).toMatch(/no longer exists/);
    });

    it('never writes the hook token to a log or an error answer', async () => {
      const t = await create();
      await github(t, githubPush(repo.head()));
      await deliver(t.token, '{}', {});
      const missing = await h.http.post(`/hooks/${t.token}/extra`).send({});
      expectProblem(missing, 404);
      expect(missing.body.detail).not.toContain(t.token);
      expect(missing.body.detail).toContain('/hooks/<redacted>');
      await h.http.get(`/hooks/${t.token}`);
      await h.http.get(`/v1/hooks/${t.token}`);
      await new Promise((r) => setTimeout(r, 50));
      expect(logText).toContain('/hooks/<redacted>');
      expect(logText).not.toContain(t.token);
    });

    it('fires a pipeline target: every step that runs the project runs the pushed commit', async () => {
      const step = (name: string) => ({ name, project_id: projectId, playbook: 'site.yml', run_if: 'always' });
      const t = await create({ target: { pipeline: { inventory: INVENTORY, steps: [step('one'), step('two')] } } });
      const pushed = repo.head();
      repo.commit();
      const res = await github(t, githubPush(pushed));
      expect(res.status).toBe(202);
      expect(res.body.fired).toBe(true);
      const run = await h.http.get(`/v1/runs/${res.body.run_id}`).set(bearer(op.token));
      expect(run.body).toMatchObject({ kind: 'pipeline', origin: 'trigger', trigger_id: t.id });
      const steps = await h.http.get(`/v1/runs/${res.body.run_id}/steps`).set(bearer(op.token));
      expect(steps.status).toBe(200);
      expect(steps.body).toHaveLength(2);
      for (const s of steps.body as Array<{ commit: string; ref: string }>)
        expect(s).toMatchObject({ commit: pushed, ref: pushed });
      // A bad step is reported under body.target.pipeline.
      const bad = await h.http
        .post('/v1/triggers')
        .set(bearer(op.token))
        .send({
          name: unique('t'),
          target: { pipeline: { inventory: INVENTORY, steps: [step('one'), { ...step('two'), shards: 5 }] } },
        });
      expectProblem(bad, 400);
      expect((bad.body.errors as Array<{ path: string }>)[0]!.path).toMatch(/^body\.target\.pipeline\.steps\.1/);
    });

    it('fires a template target: password answers sealed apart, shown as $encrypted$, kept on PUT', async () => {
      const tpl = await h.http
        .post('/v1/templates')
        .set(bearer(op.token))
        .send({
          name: unique('tpl'),
          kind: 'run',
          spec: { project_id: projectId, playbook: 'site.yml', inventory: INVENTORY },
          survey: [
            { variable: 'pw', question: 'Password?', type: 'password', required: true },
            { variable: 'who', question: 'Who?', type: 'text', required: false },
          ],
        });
      expect(tpl.status).toBe(201);
      const templateId = tpl.body.id as string;
      const secretAnswer = 'hunter2-never-shown';
      const t = await create({ target: { template_id: templateId, survey_answers: { pw: secretAnswer, who: 'ci' } } });
      expect(t).toMatchObject({
        template_id: templateId,
        target: { template_id: templateId, survey_answers: { pw: '$encrypted$', who: 'ci' } },
      });
      const row = (await h.tdb.db.repos.triggers.findById(t.id))!;
      expect(JSON.stringify(row.target)).not.toContain(secretAnswer);
      expect(h.keyring.decrypt(row.target_secrets_enc!).toString()).toContain(secretAnswer);
      // Sending back what GET shows keeps the sealed answer.
      const shown = await h.http.get(`/v1/triggers/${t.id}`).set(bearer(op.token));
      const kept = await h.http.put(`/v1/triggers/${t.id}`).set(bearer(op.token)).send({ target: shown.body.target });
      expect(kept.status).toBe(200);
      expect(JSON.stringify(kept.body)).not.toContain(secretAnswer);
      const after = (await h.tdb.db.repos.triggers.findById(t.id))!;
      expect(h.keyring.decrypt(after.target_secrets_enc!).toString()).toContain(secretAnswer);
      expect(JSON.stringify(await auditOf(t.id))).not.toContain(secretAnswer);

      const pushed = repo.head();
      repo.commit();
      const res = await github(t, githubPush(pushed));
      expect(res.body.fired).toBe(true);
      const run = await h.http.get(`/v1/runs/${res.body.run_id}`).set(bearer(op.token));
      expect(run.body).toMatchObject({
        origin: 'trigger',
        template_id: templateId,
        trigger_id: t.id,
        commit: pushed,
        ref: pushed,
        extra_vars: { pw: '$encrypted$', who: 'ci' },
      });
      expect(JSON.stringify(run.body)).not.toContain(secretAnswer);

      // A bad answer is reported where it sits; the template cannot go while the trigger launches it.
      expectProblem(
        await h.http
          .post('/v1/triggers')
          .set(bearer(op.token))
          .send({ name: unique('t'), target: { template_id: templateId, survey_answers: { who: 'x' } } }),
        400,
        'body.target.survey_answers.pw',
      );
      const del = await h.http.delete(`/v1/templates/${templateId}`).set(bearer(op.token));
      expectProblem(del, 409);
      expect(del.body.detail).toContain(t.id);
    });

    it('fires once across two app instances on one database, however the same delivery races', async () => {
      const t = await create();
      const db2 = openDatabase(h.tdb.url);
      const services2 = createServices(db2, { keyring: h.keyring, clock: systemClock, tokenTtlSeconds: 3600 });
      const { app: app2 } = createApp({
        services: services2,
        ping: () => db2.ping(),
        gauges: databaseGauges(db2),
        logger: createLogger('error', { silent: true }),
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
      });
      try {
        const body = githubPush(repo.head());
        const headers = {
          'Content-Type': 'application/json',
          'X-GitHub-Event': 'push',
          'X-GitHub-Delivery': crypto.randomUUID(),
          'X-Hub-Signature-256': `sha256=${hmac(t.secret, body)}`,
        };
        const answers = await Promise.all(
          [h.app, app2, h.app, app2].map((app) => supertest(app).post(`/hooks/${t.token}`).set(headers).send(body)),
        );
        expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
        const fired = answers.filter((a) => a.body.fired === true);
        expect(fired).toHaveLength(1);
        for (const a of answers.filter((x) => x.body.fired === false)) expect(a.body.reason).toBe('duplicate delivery');
        expect((await runsOf(t.id)).map((r) => r.id)).toEqual([fired[0]!.body.run_id]);
      } finally {
        await services2.closeRuns();
        await db2.close();
      }
    });
  });
});
