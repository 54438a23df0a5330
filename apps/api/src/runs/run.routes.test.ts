import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunRow } from '@baton/db';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { parseInventory } from '@baton/executor';
import fs from 'node:fs';
import path from 'node:path';
import type { Response } from 'supertest';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const UNKNOWN = {
  prj: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  inv: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  cred: 'cred_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  run: 'run_01ARZ3NDEKTSV4RRFFQ69G5FAV',
};
const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';
const INI = '[web]\nweb1 ansible_host=10.0.0.1\nweb2\n\n[db]\ndb1\n';
// Seven hosts, deliberately not in name order; `app` holds the five that a limit of `app` selects.
const FLEET =
  '[app]\nhost-e tier=e\nhost-a\nhost-g\nhost-c\nhost-b\n\n[other]\nhost-d\nhost-f\n\n[app:vars]\nrole=app\n';
let seq = 0;
const unique = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;
const ids = (res: Response) => (res.body as Array<{ id: string }>).map((x) => x.id);

describe.each(DIALECTS)('runs on %s', (dialect) => {
  let h: Harness;
  const root = tempDir(`baton-runs-${dialect}`);
  const repo = createRepo(root);
  fs.mkdirSync(path.join(repo.dir, 'plays', 'roles'), { recursive: true });
  fs.writeFileSync(path.join(repo.dir, 'plays', 'deploy.yml'), PLAYBOOK);
  fs.writeFileSync(path.join(repo.dir, 'plays', 'roles', 'keep'), '');
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'plays');

  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h.services.closeRuns();
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const repos = () => h.tdb.db.repos;
  const row = async (id: string): Promise<RunRow> => (await repos().runs.findById(id))!;
  const runCount = async () => Object.values(await repos().runs.countByStatus()).reduce((a, b) => a + b, 0);
  const submit = (token: string, body: Record<string, unknown>) =>
    h.http.post('/v1/runs').set(bearer(token)).send(body);
  const created = async (token: string, body: Record<string, unknown>) => {
    const res = await submit(token, body);
    expect(res.status).toBe(201);
    return res;
  };
  const createInventory = async (token: string, content = INI) => {
    const res = await h.http
      .post('/v1/inventories')
      .set(bearer(token))
      .send({ name: unique('inv'), content });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const createProject = async (token: string, url = repo.url) => {
    const res = await h.http
      .post('/v1/projects')
      .set(bearer(token))
      .send({ name: unique('prj'), git_url: url });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const createCredential = async (token: string, type: string, inputs: Record<string, unknown>) => {
    const res = await h.http
      .post('/v1/credentials')
      .set(bearer(token))
      .send({ name: unique(type), type, inputs });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const grant = async (token: string, subject: string, object: string, level: 'use' | 'manage') => {
    expect((await h.http.post('/v1/grants').set(bearer(token)).send({ subject, object, level })).status).toBe(201);
  };
  /** Simulates an executor's end of a run (no executor runs in these tests). */
  const conclude = async (id: string, conclusion: string, from = ['pending', 'running']) => {
    expect(
      await repos().runs.transition(id, from, {
        status: 'finished',
        conclusion,
        finished_at: new Date().toISOString(),
      }),
    ).toBe(true);
  };
  const auditOf = async (object: string) => repos().audit.list({ object }, { limit: 10 });
  const pending = () => h.services.runQueue.pendingIds();

  describe('submit', () => {
    it('stores an inline run: 201, Location, pending, enqueued, audited without extra var values', async () => {
      const op = await h.user('operator');
      const res = await created(op.token, {
        playbook: PLAYBOOK,
        inventory: INI,
        limit: 'web',
        extra_vars: { secret_word: 'swordfish' },
        check: true,
        forks: 3,
        verbosity: 2,
        timeout_s: 60,
      });
      const id = res.body.id as string;
      expect(id).toMatch(/^run_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(res.headers.location).toBe(`/v1/runs/${id}`);
      expect(res.body).toEqual({
        id,
        kind: 'run',
        parent_id: null,
        shard_index: null,
        shard_count: null,
        retry_of: null,
        status: 'pending',
        conclusion: null,
        reason: null,
        playbook: '(inline)',
        project_id: null,
        commit: null,
        ref: null,
        origin: 'api',
        template_id: null,
        schedule_id: null,
        trigger_id: null,
        step_index: null,
        step_name: null,
        run_if: null,
        survey_answers: null,
        inventory_id: null,
        limit: 'web',
        hosts: null,
        extra_vars: { secret_word: 'swordfish' },
        credential_ids: [],
        check: true,
        forks: 3,
        verbosity: 2,
        timeout_s: 60,
        labels: [],
        submitted_by: op.id,
        worker: null,
        exit_code: null,
        host_summary: null,
        last_seq: 0,
        log_lines: 0,
        output_truncated: false,
        output_pruned_at: null,
        created_at: expect.any(String),
        started_at: null,
        finished_at: null,
        cancel_requested_at: null,
        held_by: null,
        hold_expires_at: null,
        approvals_needed: null,
        approvals: [],
      });
      expect(await row(id)).toMatchObject({
        playbook_source: 'inline',
        playbook: PLAYBOOK,
        inventory_content: INI,
        inventory_format: 'ini',
      });
      const got = await h.http.get(`/v1/runs/${id}`).set(bearer(op.token));
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ ...res.body, host_stats: null });
      expect(await pending()).toContain(id);
      const audit = await auditOf(id);
      expect(audit).toEqual([expect.objectContaining({ actor: op.id, action: 'run.submit' })]);
      expect(audit[0]!.summary).toMatch(/inline playbook.*limit web.*1 extra vars.*check mode/);
      expect(audit[0]!.summary).not.toContain('swordfish');
    });

    it('keeps the worker labels a run asks for, sorted and once each, on the run, its shards, its retry and in the audit', async () => {
      const op = await h.user('operator');
      const res = await created(op.token, {
        playbook: PLAYBOOK,
        inventory: FLEET,
        labels: ['linux', 'gpu', 'linux'],
        shards: 2,
      });
      expect(res.body.labels).toEqual(['gpu', 'linux']);
      const shards = await h.http.get(`/v1/runs/${res.body.id}/shards`).set(bearer(op.token));
      expect((shards.body as Array<{ labels: string[] }>).map((s) => s.labels)).toEqual([
        ['gpu', 'linux'],
        ['gpu', 'linux'],
      ]);
      expect((await auditOf(res.body.id as string))[0]!.summary).toMatch(/worker labels gpu, linux/);
    });

    it('resolves a project playbook at the branch head now, not at the last sync, and records the commit', async () => {
      const op = await h.user('operator');
      const project = await createProject(op.token);
      const synced = repo.head();
      const newer = repo.commit();
      expect(newer).not.toBe(synced);
      const inventory = await createInventory(op.token);
      const res = await created(op.token, {
        playbook: './plays//deploy.yml',
        project_id: project,
        inventory_id: inventory,
      });
      expect(res.body).toMatchObject({
        kind: 'run',
        playbook: 'plays/deploy.yml',
        project_id: project,
        commit: newer,
        inventory_id: inventory,
      });
      expect(await row(res.body.id)).toMatchObject({
        playbook_source: 'project',
        git_commit: newer,
        inventory_content: null,
        inventory_format: null,
      });
    });

    it('takes credentials the caller may use, in the order given', async () => {
      const op = await h.user('operator');
      const key = await createCredential(op.token, 'become_password', { password: 'pw-0123' });
      const vault = await createCredential(op.token, 'vault_password', { password: 'vault-0123' });
      const res = await created(op.token, { playbook: PLAYBOOK, inventory: INI, credential_ids: [vault, key] });
      expect(res.body.credential_ids).toEqual([vault, key]);
    });

    it.each([
      ['no playbook', { inventory: INI }, 'body.playbook'],
      ['a playbook that is not a string', { playbook: 42, inventory: INI }, 'body.playbook'],
      ['check that is not a boolean', { playbook: PLAYBOOK, inventory: INI, check: 'yes' }, 'body.check'],
      ['forks of 0', { playbook: PLAYBOOK, inventory: INI, forks: 0 }, 'body.forks'],
      ['negative shards', { playbook: PLAYBOOK, inventory: INI, shards: -1 }, 'body.shards'],
      ['shards that are not an integer', { playbook: PLAYBOOK, inventory: INI, shards: 1.5 }, 'body.shards'],
      ['shards as a string', { playbook: PLAYBOOK, inventory: INI, shards: '2' }, 'body.shards'],
      ['an unknown field', { playbook: PLAYBOOK, inventory: INI, hosts: ['web1'] }, undefined],
      ['both inventories', { playbook: PLAYBOOK, inventory: INI, inventory_id: UNKNOWN.inv }, 'body.inventory_id'],
      ['no inventory', { playbook: PLAYBOOK }, 'body.inventory_id'],
      [
        'an inventory_id that is not an inv_ id',
        { playbook: PLAYBOOK, inventory_id: UNKNOWN.prj },
        'body.inventory_id',
      ],
      ['a limit that reads a file', { playbook: PLAYBOOK, inventory: INI, limit: 'web,@/etc/passwd' }, 'body.limit'],
      [
        'a credential listed twice',
        { playbook: PLAYBOOK, inventory: INI, credential_ids: [UNKNOWN.cred, UNKNOWN.cred] },
        'body.credential_ids.1',
      ],
      ['an inline inventory ansible cannot parse', { playbook: PLAYBOOK, inventory: '[web\nweb1\n' }, 'body.inventory'],
      [
        'a project path with ..',
        { playbook: '../etc/passwd', project_id: UNKNOWN.prj, inventory: INI },
        'body.playbook',
      ],
      [
        'an absolute project path',
        { playbook: '/etc/passwd', project_id: UNKNOWN.prj, inventory: INI },
        'body.playbook',
      ],
      [
        'a worker label with a space',
        { playbook: PLAYBOOK, inventory: INI, labels: ['gpu', 'eu west'] },
        'body.labels.1',
      ],
      ['labels that are not a list', { playbook: PLAYBOOK, inventory: INI, labels: 'gpu' }, 'body.labels'],
      [
        'seventeen labels',
        { playbook: PLAYBOOK, inventory: INI, labels: Array.from({ length: 17 }, (_, i) => `l${i}`) },
        'body.labels',
      ],
    ])('answers 400 for %s, and writes nothing', async (_what, body, fieldPath) => {
      const before = await runCount();
      expectProblem(await submit(h.admin.token, body), 400, fieldPath);
      expect(await runCount()).toBe(before);
    });

    it('names ansible’s complaint about an inline inventory', async () => {
      const res = await submit(h.admin.token, { playbook: PLAYBOOK, inventory: '[web\nweb1\n' });
      expectProblem(res, 400, 'body.inventory');
      expect(res.body.detail).toMatch(/Failed to parse inventory\.ini with ini plugin/);
    });

    it('answers 403 to a viewer, even with use on the inventory', async () => {
      const viewer = await h.user('viewer');
      const inventory = await createInventory(h.admin.token);
      await grant(h.admin.token, viewer.id, inventory, 'use');
      const before = await runCount();
      expectProblem(await submit(viewer.token, { playbook: PLAYBOOK, inventory_id: inventory }), 403);
      expect(await runCount()).toBe(before);
    });

    it('answers 404 for unknown or invisible projects, inventories and credentials, 400 for a credential of the wrong type', async () => {
      const op = await h.user('operator');
      const stranger = await h.user('operator');
      const theirInventory = await createInventory(stranger.token);
      const theirProject = await createProject(stranger.token);
      const theirKey = await createCredential(stranger.token, 'become_password', { password: 'not-yours' });
      const myInventory = await createInventory(op.token);
      const token = await createCredential(op.token, 'token', { token: 'ghp_notForRuns0123' });
      const before = await runCount();
      expectProblem(await submit(op.token, { playbook: PLAYBOOK, inventory_id: UNKNOWN.inv }), 404);
      expectProblem(await submit(op.token, { playbook: PLAYBOOK, inventory_id: theirInventory }), 404);
      expectProblem(
        await submit(op.token, { playbook: 'site.yml', project_id: UNKNOWN.prj, inventory_id: myInventory }),
        404,
      );
      expectProblem(
        await submit(op.token, { playbook: 'site.yml', project_id: theirProject, inventory_id: myInventory }),
        404,
      );
      expectProblem(
        await submit(op.token, { playbook: PLAYBOOK, inventory_id: myInventory, credential_ids: [UNKNOWN.cred] }),
        404,
      );
      // No use grant on someone else's credential: it is not even visible.
      expectProblem(
        await submit(op.token, { playbook: PLAYBOOK, inventory_id: myInventory, credential_ids: [theirKey] }),
        404,
      );
      expectProblem(
        await submit(op.token, { playbook: PLAYBOOK, inventory_id: myInventory, credential_ids: [token] }),
        400,
        'body.credential_ids.0',
      );
      expect(await runCount()).toBe(before);
      // With a use grant, the same credential works.
      await grant(stranger.token, op.id, theirKey, 'use');
      await created(op.token, { playbook: PLAYBOOK, inventory_id: myInventory, credential_ids: [theirKey] });
    });

    it('answers 422 at body.playbook for a missing playbook or a directory, and at body.project_id when git cannot fetch', async () => {
      const op = await h.user('operator');
      const project = await createProject(op.token);
      const before = await runCount();
      const missing = await submit(op.token, { playbook: 'plays/nope.yml', project_id: project, inventory: INI });
      expectProblem(missing, 422, 'body.playbook');
      expect(missing.body.detail).toContain(
        `plays/nope.yml does not exist in project ${project} at commit ${repo.head()}`,
      );
      const dir = await submit(op.token, { playbook: 'plays/roles', project_id: project, inventory: INI });
      expectProblem(dir, 422, 'body.playbook');
      expect(dir.body.detail).toMatch(/is a directory/);

      const moving = createRepo(root, `moving-${dialect}`);
      const gone = await createProject(op.token, moving.url);
      fs.renameSync(moving.dir, `${moving.dir}-moved`);
      const unreachable = await submit(op.token, { playbook: 'site.yml', project_id: gone, inventory: INI });
      expectProblem(unreachable, 422, 'body.project_id');
      expect(unreachable.body.detail).toMatch(/not appear to be a git repository|not a git repository/);
      expect(await runCount()).toBe(before);
    });
  });

  describe('shards', () => {
    it('splits into a split and N shards: shard k gets hosts [k::N] sorted by name after the limit, each with an inventory of only its hosts', async () => {
      const op = await h.user('operator');
      const inventory = await createInventory(op.token, FLEET);
      const res = await created(op.token, { playbook: PLAYBOOK, inventory_id: inventory, limit: 'app', shards: 2 });
      const split = res.body;
      expect(split).toMatchObject({
        kind: 'split',
        shard_count: 2,
        parent_id: null,
        hosts: null,
        limit: 'app',
        inventory_id: inventory,
        status: 'pending',
      });
      expect(res.headers.location).toBe(`/v1/runs/${split.id}`);

      const shards = await h.http.get(`/v1/runs/${split.id}/shards`).set(bearer(op.token));
      expect(shards.status).toBe(200);
      expect(shards.body.map((s: { shard_index: number; hosts: string[] }) => [s.shard_index, s.hosts])).toEqual([
        [0, ['host-a', 'host-c', 'host-g']],
        [1, ['host-b', 'host-e']],
      ]);
      for (const shard of shards.body) {
        expect(shard).toMatchObject({
          kind: 'shard',
          parent_id: split.id,
          shard_count: 2,
          limit: 'app',
          inventory_id: inventory,
          status: 'pending',
        });
        const stored = await row(shard.id);
        expect(stored.inventory_format).toBe('yaml');
        const parsed = await parseInventory({ content: stored.inventory_content! });
        expect(parsed.hosts.map((x) => x.name)).toEqual(shard.hosts);
        expect(parsed.hosts.every((x) => x.groups.includes('app'))).toBe(true);
        for (const host of shard.hosts)
          expect(
            (parsed.list._meta as { hostvars: Record<string, Record<string, unknown>> }).hostvars[host],
          ).toMatchObject({ role: 'app' });
      }
      expect(
        (
          (await parseInventory({ content: (await row(shards.body[1].id)).inventory_content! })).list._meta as {
            hostvars: Record<string, unknown>;
          }
        ).hostvars['host-e'],
      ).toEqual({ role: 'app', tier: 'e' });

      // The shards are queued, the split never is; one audit entry for the whole submit.
      const queued = await pending();
      expect(queued).toEqual(expect.arrayContaining(shards.body.map((s: { id: string }) => s.id)));
      expect(queued).not.toContain(split.id);
      expect(await auditOf(split.id)).toEqual([
        expect.objectContaining({ action: 'run.submit', summary: expect.stringContaining('2 shards') }),
      ]);

      // Lists show the split; shards only when asked for.
      const top = await h.http.get(`/v1/runs?inventory=${inventory}`).set(bearer(op.token));
      expect(ids(top)).toEqual([split.id]);
      const all = await h.http.get(`/v1/runs?inventory=${inventory}&include_shards=true`).set(bearer(op.token));
      expect(ids(all).sort()).toEqual([split.id, ...shards.body.map((s: { id: string }) => s.id)].sort());
    });

    it('splits an inline inventory without a limit, and answers [] for the shards of an ordinary run', async () => {
      const res = await created(h.admin.token, { playbook: PLAYBOOK, inventory: FLEET, shards: 3 });
      const shards = await h.http.get(`/v1/runs/${res.body.id}/shards`).set(bearer(h.admin.token));
      expect(shards.body.map((s: { hosts: string[] }) => s.hosts)).toEqual([
        ['host-a', 'host-d', 'host-g'],
        ['host-b', 'host-e'],
        ['host-c', 'host-f'],
      ]);
      const ordinary = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI, shards: 1 });
      expect(ordinary.body).toMatchObject({ kind: 'run', shard_count: null });
      expect((await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI, shards: 0 })).body.kind).toBe('run');
      const none = await h.http.get(`/v1/runs/${ordinary.body.id}/shards`).set(bearer(h.admin.token));
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
      const steps = await h.http.get(`/v1/runs/${ordinary.body.id}/steps`).set(bearer(h.admin.token));
      expect(steps.status).toBe(200);
      expect(steps.body).toEqual([]);
    });

    it('answers 400 at body.shards, saying how many hosts match, when there are more shards than hosts', async () => {
      const inventory = await createInventory(h.admin.token, FLEET);
      const before = await runCount();
      const res = await submit(h.admin.token, {
        playbook: PLAYBOOK,
        inventory_id: inventory,
        limit: 'other',
        shards: 3,
      });
      expectProblem(res, 400, 'body.shards');
      expect(res.body.detail).toBe('3 shards need at least 3 hosts, but 2 hosts match the limit other');
      expectProblem(
        await submit(h.admin.token, { playbook: PLAYBOOK, inventory: INI, limit: 'nothing', shards: 2 }),
        400,
        'body.shards',
      );
      expect(await runCount()).toBe(before);
    });
  });

  describe('visibility and lists', () => {
    it('shows a run to its submitter, admins and holders of use on its inventory; 404 to anyone else', async () => {
      const owner = await h.user('operator');
      const holder = await h.user('viewer');
      const stranger = await h.user('operator');
      const inventory = await createInventory(owner.token);
      await grant(owner.token, holder.id, inventory, 'use');
      const { body: run } = await created(owner.token, { playbook: PLAYBOOK, inventory_id: inventory });
      for (const token of [owner.token, holder.token, h.admin.token]) {
        expect((await h.http.get(`/v1/runs/${run.id}`).set(bearer(token))).status).toBe(200);
        expect(ids(await h.http.get('/v1/runs?limit=500').set(bearer(token)))).toContain(run.id);
      }
      for (const p of [
        `/v1/runs/${run.id}`,
        `/v1/runs/${run.id}/shards`,
        `/v1/runs/${run.id}/steps`,
        `/v1/runs/${UNKNOWN.run}`,
      ]) {
        expectProblem(await h.http.get(p).set(bearer(stranger.token)), 404);
      }
      expect(ids(await h.http.get('/v1/runs?limit=500').set(bearer(stranger.token)))).not.toContain(run.id);
      expectProblem(await h.http.post(`/v1/runs/${run.id}/cancel`).set(bearer(stranger.token)), 404);
      expectProblem(await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(stranger.token)), 404);
      // The viewer sees it but may not act on it.
      expectProblem(await h.http.post(`/v1/runs/${run.id}/cancel`).set(bearer(holder.token)), 403);
      expect((await row(run.id)).status).toBe('pending');
    });

    it('filters by status, conclusion, project, inventory, host and since, newest first, and pages with Link', async () => {
      const op = await h.user('operator');
      const inventory = await createInventory(op.token);
      const project = await createProject(op.token);
      const first = (await created(op.token, { playbook: PLAYBOOK, inventory_id: inventory })).body.id as string;
      const second = (await created(op.token, { playbook: 'site.yml', project_id: project, inventory_id: inventory }))
        .body.id as string;
      const third = (await created(op.token, { playbook: PLAYBOOK, inventory_id: inventory })).body.id as string;
      await conclude(first, 'failed');
      await repos().runs.replaceHosts(first, [
        {
          run_id: first,
          host: 'web1',
          outcome: 'failed',
          ok: 0,
          changed: 0,
          failed: 1,
          unreachable: 0,
          skipped: 0,
          rescued: 0,
          ignored: 0,
        },
      ]);

      const list = async (query: string) => {
        const res = await h.http.get(`/v1/runs?inventory=${inventory}${query}`).set(bearer(op.token));
        expect(res.status).toBe(200);
        return ids(res);
      };
      expect(await list('')).toEqual([third, second, first]);
      expect(await list('&status=pending')).toEqual([third, second]);
      expect(await list('&status=finished&conclusion=failed')).toEqual([first]);
      expect(await list('&conclusion=succeeded')).toEqual([]);
      expect(await list(`&project=${project}`)).toEqual([second]);
      expect(await list('&host=web1')).toEqual([first]);
      expect(await list('&kind=run')).toEqual([third, second, first]);
      expect(await list('&kind=split')).toEqual([]);
      expect(await list('&kind=pipeline')).toEqual([]);
      expect((await h.http.get('/v1/runs?kind=batch').set(bearer(op.token))).status).toBe(400);
      expect(await list('&since=2000-01-01T02:00:00%2B02:00')).toEqual([third, second, first]);
      expect(await list('&since=2999-01-01T00:00:00Z')).toEqual([]);
      expect(
        await h.http.get(`/v1/runs?inventory=${inventory}&host=web1`).set(bearer(h.admin.token)).then(ids),
      ).toEqual([first]);

      const page1 = await h.http.get(`/v1/runs?inventory=${inventory}&limit=2`).set(bearer(op.token));
      expect(ids(page1)).toEqual([third, second]);
      const next = /^<([^>]+)>; rel="next"$/.exec(page1.headers.link as string);
      expect(next).not.toBeNull();
      const page2 = await h.http.get(next![1]!).set(bearer(op.token));
      expect(ids(page2)).toEqual([first]);
      expect(page2.headers.link).toBeUndefined();
    });

    it.each([
      ['status=done', 'query.status'],
      ['since=yesterday', 'query.since'],
      ['limit=0', 'query.limit'],
      ['project=inv_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'query.project'],
      ['cursor=%21%21', 'query.cursor'],
    ])('answers 400 for a bad query: %s', async (query, fieldPath) => {
      expectProblem(await h.http.get(`/v1/runs?${query}`).set(bearer(h.admin.token)), 400, fieldPath);
    });

    it('describes the run operations in the OpenAPI document', async () => {
      const res = await h.http.get('/v1/openapi.json');
      expect(res.status).toBe(200);
      const paths = res.body.paths as Record<
        string,
        Record<string, { operationId: string; responses: Record<string, unknown> }>
      >;
      expect(paths['/v1/runs']!.post!.operationId).toBe('submitRun');
      expect(paths['/v1/runs']!.get!.operationId).toBe('listRuns');
      expect(Object.keys(paths['/v1/runs/{id}/cancel']!.post!.responses)).toEqual(
        expect.arrayContaining(['200', '202', '409']),
      );
      expect(paths['/v1/runs/{id}/retry']!.post!.operationId).toBe('retryRun');
      expect(paths['/v1/runs/{id}/shards']!.get!.operationId).toBe('listRunShards');
    });

    it('serves the earlier edition at /runs with a Deprecation header', async () => {
      const res = await h.http.post('/runs').set(bearer(h.admin.token)).send({ playbook: PLAYBOOK, inventory: INI });
      expect(res.status).toBe(201);
      expect(res.headers.deprecation).toBeDefined();
      expect((await h.http.get(`/runs/${res.body.id}`).set(bearer(h.admin.token))).body.id).toBe(res.body.id);
    });
  });

  describe('cancel', () => {
    it('finishes a pending run at once: 200, canceled, out of the queue, one status event with seq 1, audited', async () => {
      const op = await h.user('operator');
      const { body: run } = await created(op.token, { playbook: PLAYBOOK, inventory: INI });
      expect(await pending()).toContain(run.id);
      const res = await h.http.post(`/v1/runs/${run.id}/cancel`).set(bearer(op.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: run.id,
        status: 'finished',
        conclusion: 'canceled',
        reason: 'canceled',
        finished_at: expect.any(String),
      });
      expect(await pending()).not.toContain(run.id);
      const events = await repos().runEvents.list(run.id, { limit: 10 });
      expect(events).toEqual([expect.objectContaining({ seq: 1, kind: 'status' })]);
      expect(events[0]!.data).toMatchObject({ status: 'finished', conclusion: 'canceled' });
      expect((await auditOf(run.id)).map((a) => a.action)).toEqual(
        expect.arrayContaining(['run.submit', 'run.cancel']),
      );
      expectProblem(await h.http.post(`/v1/runs/${run.id}/cancel`).set(bearer(op.token)), 409);
    });

    it('answers 409 for a finished run and changes nothing', async () => {
      const { body: run } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI });
      await conclude(run.id, 'succeeded');
      expectProblem(await h.http.post(`/v1/runs/${run.id}/cancel`).set(bearer(h.admin.token)), 409);
      expect(await row(run.id)).toMatchObject({ conclusion: 'succeeded', cancel_requested_at: null });
      expect(await repos().runEvents.list(run.id, { limit: 10 })).toEqual([]);
    });

    it('cancels every shard of a split; the split concludes canceled', async () => {
      const { body: split } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: FLEET, shards: 2 });
      const res = await h.http.post(`/v1/runs/${split.id}/cancel`).set(bearer(h.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: split.id,
        status: 'finished',
        conclusion: 'canceled',
        cancel_requested_at: expect.any(String),
      });
      const shards = (await h.http.get(`/v1/runs/${split.id}/shards`).set(bearer(h.admin.token))).body as Array<{
        id: string;
        status: string;
        conclusion: string;
      }>;
      expect(shards.map((s) => [s.status, s.conclusion])).toEqual([
        ['finished', 'canceled'],
        ['finished', 'canceled'],
      ]);
      const queued = await pending();
      for (const s of shards) expect(queued).not.toContain(s.id);
    });

    it('finishes a running run no executor holds at once (200), and asks the holder of a lease to stop (202)', async () => {
      const { body: orphan } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI });
      await h.services.runQueue.cancel(orphan.id);
      expect(
        await repos().runs.transition(orphan.id, ['pending'], {
          status: 'running',
          started_at: new Date().toISOString(),
        }),
      ).toBe(true);
      const res = await h.http.post(`/v1/runs/${orphan.id}/cancel`).set(bearer(h.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'finished',
        conclusion: 'canceled',
        cancel_requested_at: expect.any(String),
      });

      // A stand-in worker that holds its lease until told to stop; earlier tests' runs are taken out of the queue first.
      for (const id of await pending()) await h.services.runQueue.cancel(id);
      let stopped!: () => void;
      const stopSignal = new Promise<void>((resolve) => (stopped = resolve));
      const leased: string[] = [];
      const worker = h.services.runQueue.lease({ name: 'stand-in', labels: [], capacity: 1 }, async (job, lease) => {
        leased.push(job.runId);
        await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
        stopped();
      });
      try {
        const { body: held } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI });
        expect(await h.services.runIngest.claim(held.id, 'stand-in')).toBe(true);
        expect(leased).toEqual([held.id]);
        const stop = await h.http.post(`/v1/runs/${held.id}/cancel`).set(bearer(h.admin.token));
        expect(stop.status).toBe(202);
        expect(stop.body).toMatchObject({
          id: held.id,
          status: 'running',
          conclusion: null,
          cancel_requested_at: expect.any(String),
        });
        await stopSignal;
      } finally {
        await worker.close();
      }
    });
  });

  describe('retry', () => {
    it('retries a split with failed shards: a new split of only those shards, with their hosts and inventories', async () => {
      const op = await h.user('operator');
      const inventory = await createInventory(op.token, FLEET);
      const { body: split } = await created(op.token, {
        playbook: PLAYBOOK,
        inventory_id: inventory,
        shards: 3,
        check: true,
        extra_vars: { a: 1 },
      });
      const shards = (await repos().runs.children(split.id)) as RunRow[];
      await conclude(shards[0]!.id, 'succeeded');
      await conclude(shards[1]!.id, 'failed');
      await conclude(shards[2]!.id, 'error');
      await conclude(split.id, 'failed');

      const res = await h.http.post(`/v1/runs/${split.id}/retry`).set(bearer(op.token));
      expect(res.status).toBe(201);
      const again = res.body;
      expect(res.headers.location).toBe(`/v1/runs/${again.id}`);
      expect(again).toMatchObject({
        kind: 'split',
        retry_of: split.id,
        shard_count: 2,
        status: 'pending',
        conclusion: null,
        inventory_id: inventory,
        check: true,
        extra_vars: { a: 1 },
        hosts: [...shards[1]!.hosts!, ...shards[2]!.hosts!].sort(),
      });
      const newShards = (await h.http.get(`/v1/runs/${again.id}/shards`).set(bearer(op.token))).body as Array<
        Record<string, unknown>
      >;
      expect(newShards.map((s) => [s.shard_index, s.shard_count, s.retry_of, s.hosts, s.status])).toEqual([
        [0, 2, shards[1]!.id, shards[1]!.hosts, 'pending'],
        [1, 2, shards[2]!.id, shards[2]!.hosts, 'pending'],
      ]);
      expect((await row(newShards[0]!.id as string)).inventory_content).toBe(shards[1]!.inventory_content);
      expect((await row(newShards[1]!.id as string)).inventory_content).toBe(shards[2]!.inventory_content);
      const queued = await pending();
      expect(queued).toEqual(expect.arrayContaining(newShards.map((s) => s.id)));
      expect(queued).not.toContain(again.id);
      expect(await auditOf(again.id)).toEqual([expect.objectContaining({ action: 'run.retry', actor: op.id })]);
    });

    it('retries a failed ordinary run on its failed and unreachable hosts, or whole when it has none', async () => {
      const { body: run } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI, limit: 'all' });
      await conclude(run.id, 'failed');
      const counts = { ok: 1, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 };
      await repos().runs.replaceHosts(run.id, [
        { run_id: run.id, host: 'db1', outcome: 'unreachable', ...counts, unreachable: 1 },
        { run_id: run.id, host: 'web1', outcome: 'ok', ...counts },
        { run_id: run.id, host: 'web2', outcome: 'failed', ...counts, failed: 1 },
      ]);
      const res = await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(h.admin.token));
      expect(res.status).toBe(201);
      // An inventory of only the failed hosts, as shards get theirs; no --limit.
      expect(res.body).toMatchObject({
        kind: 'run',
        retry_of: run.id,
        hosts: ['db1', 'web2'],
        limit: null,
        status: 'pending',
      });
      const stored = await row(res.body.id);
      expect(stored.inventory_format).toBe('yaml');
      const parsed = await parseInventory({ content: stored.inventory_content! });
      expect(parsed.hosts.map((x) => [x.name, x.groups])).toEqual([
        ['db1', ['db']],
        ['web2', ['web']],
      ]);
      const bundle = await h.services.runBundles.build(res.body.id);
      expect(bundle.limit).toBeUndefined();
      expect(bundle.inventory).toEqual({ content: stored.inventory_content, format: 'yaml' });
      expect(await pending()).toContain(res.body.id);

      const { body: errored } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI, limit: 'web' });
      await conclude(errored.id, 'error');
      const whole = await h.http.post(`/v1/runs/${errored.id}/retry`).set(bearer(h.admin.token));
      expect(whole.status).toBe(201);
      expect(whole.body).toMatchObject({ retry_of: errored.id, hosts: null, limit: 'web' });
    });

    it('retries hosts whose names ansible would read as patterns (`,`) or a file (`@…`) on exactly those hosts', async () => {
      const op = await h.user('operator');
      const yaml = 'all:\n  hosts:\n    "@/etc/hostname":\n      ansible_host: 10.0.0.9\n    "web,1":\n    plain:\n';
      const inventory = await createInventory(op.token, yaml);
      const { body: run } = await created(op.token, { playbook: PLAYBOOK, inventory_id: inventory });
      await conclude(run.id, 'failed');
      const counts = { ok: 0, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 };
      await repos().runs.replaceHosts(run.id, [
        { run_id: run.id, host: '@/etc/hostname', outcome: 'failed', ...counts, failed: 1 },
        { run_id: run.id, host: 'plain', outcome: 'ok', ...counts, ok: 1 },
        { run_id: run.id, host: 'web,1', outcome: 'unreachable', ...counts, unreachable: 1 },
      ]);
      const res = await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(op.token));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ hosts: ['@/etc/hostname', 'web,1'], limit: null, inventory_id: inventory });
      const bundle = await h.services.runBundles.build(res.body.id);
      expect(bundle.limit).toBeUndefined();
      const parsed = await parseInventory({ content: bundle.inventory.content });
      expect(parsed.hosts.map((x) => x.name).sort()).toEqual(['@/etc/hostname', 'web,1']);
      expect((parsed.list._meta as { hostvars: Record<string, unknown> }).hostvars['@/etc/hostname']).toEqual({
        ansible_host: '10.0.0.9',
      });

      // A failed host gone from the inventory since: 409 naming it, nothing stored.
      const put = await h.http
        .put(`/v1/inventories/${inventory}`)
        .set(bearer(op.token))
        .send({ name: unique('inv'), content: 'all:\n  hosts:\n    plain:\n    "web,1":\n' });
      expect(put.status).toBe(200);
      const before = await runCount();
      const gone = await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(op.token));
      expectProblem(gone, 409);
      expect(gone.body.detail).toContain('@/etc/hostname');
      expect(await runCount()).toBe(before);
    });

    it('answers 409 for a run that is not finished, one where nothing failed, a split without failed shards, and a shard', async () => {
      const { body: pendingRun } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI });
      const before = await runCount();
      expectProblem(await h.http.post(`/v1/runs/${pendingRun.id}/retry`).set(bearer(h.admin.token)), 409);
      for (const conclusion of ['succeeded', 'canceled', 'rejected']) {
        const { body: run } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI });
        await conclude(run.id, conclusion);
        expectProblem(await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(h.admin.token)), 409);
      }
      const { body: split } = await created(h.admin.token, { playbook: PLAYBOOK, inventory: INI, shards: 2 });
      const shards = await repos().runs.children(split.id);
      await conclude(shards[0]!.id, 'succeeded');
      await conclude(shards[1]!.id, 'canceled');
      await conclude(split.id, 'canceled');
      expectProblem(await h.http.post(`/v1/runs/${split.id}/retry`).set(bearer(h.admin.token)), 409);
      await repos().runs.update(shards[1]!.id, { conclusion: 'failed' });
      expectProblem(await h.http.post(`/v1/runs/${shards[1]!.id}/retry`).set(bearer(h.admin.token)), 409);
      expect(await runCount()).toBe(before + 3 + 3);
    });

    it('re-checks use: 403 for a viewer, 409 once the inventory is gone', async () => {
      const op = await h.user('operator');
      const viewer = await h.user('viewer');
      const inventory = await createInventory(op.token);
      await grant(op.token, viewer.id, inventory, 'use');
      const { body: run } = await created(op.token, { playbook: PLAYBOOK, inventory_id: inventory });
      await conclude(run.id, 'failed');
      expectProblem(await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(viewer.token)), 403);
      expect((await h.http.delete(`/v1/inventories/${inventory}`).set(bearer(op.token))).status).toBe(204);
      const before = await runCount();
      const res = await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(h.admin.token));
      expectProblem(res, 409);
      expect(res.body.detail).toContain(inventory);
      expect(await runCount()).toBe(before);
    });
  });
});
