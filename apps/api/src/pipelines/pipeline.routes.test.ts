// Pipelines end to end (issue 11): the real app, its embedded executors and real ansible-playbook on local hosts,
// on SQLite and PostgreSQL. Steps run one after another, run_if decides, a failing middle step and a clean-up step,
// steps that are splits, cancel mid-pipeline, retry from the failed step, and a restart between two steps.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import { systemClock } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { DEFAULT_LEASE_MS } from '@baton/queue';
import { createLogger } from '../logger.js';
import { startEmbeddedMode } from '../runs/embedded-mode.js';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';
import { createServices } from '../wiring.js';

const LOCAL = 'ansible_connection=local ansible_python_interpreter=/usr/bin/python3';
const INVENTORY = `alpha ${LOCAL}\nbeta ${LOCAL}\ngamma ${LOCAL}\ndelta ${LOCAL}\n`;
const say = (words: string) =>
  `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: { msg: "${words} {{ greeting | default('none') }} {{ target | default('none') }}" }\n`;
/** Fails on every host unless `marker` exists. */
const failUnless = (marker: string) =>
  `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.stat: { path: ${marker} }\n      register: m\n    - ansible.builtin.fail: { msg: deploy breaks }\n      when: not m.stat.exists\n`;
const SLEEP = '- hosts: alpha\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: sleep 60\n';

describe.each(DIALECTS)('pipelines on %s', (dialect) => {
  let h: Harness;
  let auth: Record<string, string>;
  let inventoryId: string;
  const markers = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-pipelines-'));
  const root = tempDir(`baton-pipeline-repo-${dialect}`);
  const repo = createRepo(root);

  const submit = (body: Record<string, unknown>, token = h.admin.token) =>
    h.http.post('/v1/pipelines').set(bearer(token)).send(body);
  const created = async (body: Record<string, unknown>): Promise<Run> => {
    const res = await submit(body);
    if (res.status !== 201) throw new Error(`submit: ${res.status} ${res.text}`);
    return res.body as Run;
  };
  const get = async (id: string): Promise<Run> => (await h.http.get(`/v1/runs/${id}`).set(auth)).body as Run;
  const steps = async (id: string): Promise<Run[]> =>
    (await h.http.get(`/v1/runs/${id}/steps`).set(auth)).body as Run[];
  const until = async (id: string, done: (r: Run) => boolean, what: string, timeoutMs = 120_000): Promise<Run> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await get(id);
      if (done(run)) return run;
      if (Date.now() > deadline) throw new Error(`run ${id} never ${what} (still ${run.status})`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const finished = (id: string) => until(id, (r) => r.status === 'finished', 'finished');
  const logOf = async (id: string) => (await h.http.get(`/v1/runs/${id}/logs`).set(auth)).text;
  const runCount = async () => Object.values(await h.tdb.db.repos.runs.countByStatus()).reduce((a, b) => a + b, 0);
  const outcome = (r: Run) => [r.step_name, r.status, r.conclusion, r.reason];
  /** Every step that ran started only after the one before it finished. */
  const expectOneAfterAnother = (all: Run[]) => {
    const ran = all.filter((s) => s.started_at !== null);
    for (let i = 1; i < ran.length; i++) expect(ran[i]!.started_at! >= ran[i - 1]!.finished_at!).toBe(true);
  };

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 2, interruptGraceMs: 2_000, terminateGraceMs: 2_000 } });
    auth = bearer(h.admin.token);
    const res = await h.http
      .post('/v1/inventories')
      .set(auth)
      .send({ name: `local ${dialect}`, content: INVENTORY });
    inventoryId = res.body.id as string;
    fs.writeFileSync(path.join(repo.dir, 'hello.yml'), say('from-git'));
    repo.git('add', 'hello.yml');
    repo.git('commit', '-q', '-m', 'hello');
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    fs.rmSync(markers, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('submit refuses what cannot run, storing nothing', () => {
    it('answers 400 at the field for a bad body or step', async () => {
      const before = await runCount();
      const step = { playbook: say('x') };
      expectProblem(await submit({ steps: [] }), 400, 'body.steps');
      expectProblem(
        await submit({ steps: Array.from({ length: 51 }, () => step), inventory_id: inventoryId }),
        400,
        'body.steps',
      );
      expectProblem(await submit({ inventory_id: inventoryId }), 400, 'body.steps');
      expectProblem(await submit({ steps: [step] }), 400, 'body.steps.0.inventory_id');
      expectProblem(
        await submit({ steps: [step], inventory_id: inventoryId, inventory: INVENTORY }),
        400,
        'body.inventory_id',
      );
      expectProblem(
        await submit({ steps: [step, { ...step, run_if: 'sometimes' }], inventory_id: inventoryId }),
        400,
        'body.steps.1.run_if',
      );
      expectProblem(
        await submit({ steps: [{ ...step, colour: 'red' }], inventory_id: inventoryId }),
        400,
        'body.steps.0',
      );
      expectProblem(await submit({ steps: 'all of them', inventory_id: inventoryId }), 400, 'body.steps');
      expectProblem(await submit({ steps: [step], inventory_id: 42 }), 400, 'body.inventory_id');
      expectProblem(
        await submit({ steps: [step, { ...step, limit: '@/etc/hosts' }], inventory_id: inventoryId }),
        400,
        'body.steps.1.limit',
      );
      expectProblem(
        await submit({ steps: [step, { ...step, inventory: 'not [valid' }], inventory_id: inventoryId }),
        400,
        'body.steps.1.inventory',
      );
      expectProblem(
        await submit({ steps: [step, { ...step, shards: 9 }], inventory_id: inventoryId }),
        400,
        'body.steps.1.shards',
      );
      expect(await runCount()).toBe(before);
    });

    it('answers 404 for an unknown object in a later step, 422 for a missing playbook, 403 for a viewer', async () => {
      const before = await runCount();
      const project = await h.http
        .post('/v1/projects')
        .set(auth)
        .send({ name: `repo ${dialect}`, git_url: repo.url });
      expect(project.status).toBe(201);
      const step = { playbook: say('x') };
      expectProblem(
        await submit({
          steps: [step, { ...step, inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV' }],
          inventory_id: inventoryId,
        }),
        404,
      );
      const missing = await submit({
        steps: [step, { playbook: 'nope.yml', project_id: project.body.id }],
        inventory_id: inventoryId,
      });
      expectProblem(missing, 422, 'body.steps.1.playbook');
      const viewer = await h.user('viewer');
      expectProblem(await submit({ steps: [step], inventory_id: inventoryId }, viewer.token), 403);
      // An operator without use on the inventory: the same 404 as for an unknown one.
      const operator = await h.user('operator');
      expectProblem(await submit({ steps: [step], inventory_id: inventoryId }, operator.token), 404);
      expect(await runCount()).toBe(before);
    });
  });

  it('runs a failing middle step, skips what needs success, runs the clean-up and `always` steps, and concludes failed', async () => {
    const marker = path.join(markers, `deploy-ok-${dialect}`);
    const project = await h.http
      .post('/v1/projects')
      .set(auth)
      .send({ name: `hello ${dialect}`, git_url: repo.url });
    const pipeline = await created({
      name: 'release',
      inventory_id: inventoryId,
      extra_vars: { greeting: 'hi', target: 'all' },
      steps: [
        { name: 'build', playbook: 'hello.yml', project_id: project.body.id, extra_vars: { target: 'build-only' } },
        { name: 'deploy', playbook: failUnless(marker) },
        { name: 'notify', playbook: say('notify') },
        { name: 'rollback', playbook: say('rollback'), run_if: 'failure', limit: 'alpha' },
        { name: 'report', playbook: say('report'), run_if: 'always' },
      ],
    });
    expect(pipeline).toMatchObject({ kind: 'pipeline', playbook: 'release', origin: 'api', retry_of: null });
    // Pending, or running already: an idle executor claims the first step at once.
    expect(['pending', 'running']).toContain(pipeline.status);
    const listed = await steps(pipeline.id);
    expect(listed.map((s) => [s.kind, s.step_index, s.step_name, s.run_if, s.parent_id])).toEqual([
      ['step', 0, 'build', 'success', pipeline.id],
      ['step', 1, 'deploy', 'success', pipeline.id],
      ['step', 2, 'notify', 'success', pipeline.id],
      ['step', 3, 'rollback', 'failure', pipeline.id],
      ['step', 4, 'report', 'always', pipeline.id],
    ]);
    // Only the first step may run yet; the project step records the commit resolved at submit.
    expect(listed.slice(1).every((s) => s.status === 'waiting')).toBe(true);
    expect(listed[0]!.commit).toBe(repo.head());

    const done = await finished(pipeline.id);
    expect(done).toMatchObject({ status: 'finished', conclusion: 'failed' });
    const all = await steps(pipeline.id);
    expect(all.map(outcome)).toEqual([
      ['build', 'finished', 'succeeded', null],
      ['deploy', 'finished', 'failed', null],
      ['notify', 'finished', 'canceled', 'skipped'],
      ['rollback', 'finished', 'succeeded', null],
      ['report', 'finished', 'succeeded', null],
    ]);
    expect(all[2]!.started_at).toBeNull();
    expectOneAfterAnother(all);
    // Steps inherit the pipeline's vars (a step's own win) and inventory; a step's limit applies to it alone.
    expect(await logOf(all[0]!.id)).toContain('from-git hi build-only');
    expect(await logOf(all[4]!.id)).toContain('report hi all');
    expect(all[3]!.host_summary).toMatchObject({ total: 1 });
    expect(all[4]!.host_summary).toMatchObject({ total: 4 });
    // The pipeline sums what its steps did per host.
    expect(done.host_summary).toMatchObject({ total: 4, failed: 4 });
    // The pipeline's own events: running, then finished.
    const events = (await h.http.get(`/v1/runs/${pipeline.id}/events`).set(auth)).body as Array<{ data: unknown }>;
    expect(events.map((e) => e.data)).toEqual([{ status: 'running' }, { status: 'finished', conclusion: 'failed' }]);
    // History lists the pipeline, not its steps (unless asked).
    const top = (await h.http.get(`/v1/runs?limit=500`).set(auth)).body as Run[];
    expect(top.map((r) => r.id)).toContain(pipeline.id);
    expect(top.map((r) => r.id)).not.toContain(all[0]!.id);
    const everything = (await h.http.get(`/v1/runs?limit=500&include_shards=true`).set(auth)).body as Run[];
    expect(everything.map((r) => r.id)).toEqual(expect.arrayContaining(all.map((s) => s.id)));

    // Retry: a new pipeline from the failed step on, which now succeeds.
    expectProblem(await h.http.post(`/v1/runs/${all[1]!.id}/retry`).set(auth), 409);
    fs.writeFileSync(marker, 'ok');
    const retry = await h.http.post(`/v1/runs/${pipeline.id}/retry`).set(auth);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ kind: 'pipeline', retry_of: pipeline.id, playbook: 'release' });
    const again = await finished(retry.body.id as string);
    expect(again.conclusion).toBe('succeeded');
    const retried = await steps(again.id);
    expect(retried.map((s) => [s.step_index, s.step_name, s.retry_of, s.conclusion, s.reason])).toEqual([
      [0, 'deploy', all[1]!.id, 'succeeded', null],
      [1, 'notify', all[2]!.id, 'succeeded', null],
      [2, 'rollback', all[3]!.id, 'canceled', 'skipped'],
      [3, 'report', all[4]!.id, 'succeeded', null],
    ]);
    expectOneAfterAnother(retried);
    // Nothing failed in the retry: nothing to retry again.
    expectProblem(await h.http.post(`/v1/runs/${again.id}/retry`).set(auth), 409);
  }, 240_000);

  it('runs steps that are splits, one after another, each over its shards', async () => {
    const pipeline = await created({
      inventory_id: inventoryId,
      steps: [
        { name: 'first', playbook: say('first'), shards: 2 },
        { name: 'second', playbook: say('second'), shards: 4 },
      ],
    });
    const done = await finished(pipeline.id);
    expect(done.conclusion).toBe('succeeded');
    const all = await steps(pipeline.id);
    expect(all.map((s) => [s.kind, s.shard_count, s.conclusion])).toEqual([
      ['step', 2, 'succeeded'],
      ['step', 4, 'succeeded'],
    ]);
    const first = (await h.http.get(`/v1/runs/${all[0]!.id}/shards`).set(auth)).body as Run[];
    const second = (await h.http.get(`/v1/runs/${all[1]!.id}/shards`).set(auth)).body as Run[];
    expect(first.map((s) => s.hosts)).toEqual([
      ['alpha', 'delta'],
      ['beta', 'gamma'],
    ]);
    expect(second.map((s) => s.conclusion)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    // No shard of the second step started before every shard of the first had finished.
    const lastOfFirst = first
      .map((s) => s.finished_at!)
      .sort()
      .at(-1)!;
    expect(second.every((s) => s.started_at! >= lastOfFirst)).toBe(true);
    expect(done.host_summary).toMatchObject({ total: 4, ok: 4 });
  }, 240_000);

  it('cancels mid-pipeline: the running step stops, the rest are skipped, the pipeline concludes canceled', async () => {
    const pipeline = await created({
      inventory_id: inventoryId,
      steps: [
        { name: 'slow', playbook: SLEEP },
        { name: 'after', playbook: say('after') },
        { name: 'always', playbook: say('always'), run_if: 'always' },
      ],
    });
    const first = (await steps(pipeline.id))[0]!;
    await until(first.id, (r) => r.status === 'running', 'running');
    const cancel = await h.http.post(`/v1/runs/${pipeline.id}/cancel`).set(auth);
    expect(cancel.status).toBe(202);
    expect(cancel.body.cancel_requested_at).toEqual(expect.any(String));
    const done = await finished(pipeline.id);
    expect(done.conclusion).toBe('canceled');
    expect((await steps(pipeline.id)).map(outcome)).toEqual([
      ['slow', 'finished', 'canceled', 'canceled'],
      ['after', 'finished', 'canceled', 'skipped'],
      ['always', 'finished', 'canceled', 'skipped'],
    ]);
    expectProblem(await h.http.post(`/v1/runs/${pipeline.id}/cancel`).set(auth), 409);
    // A canceled pipeline has no failed step: nothing to retry.
    expectProblem(await h.http.post(`/v1/runs/${pipeline.id}/retry`).set(auth), 409);
  }, 120_000);

  it('a first step whose run_if does not hold is skipped at once; the legacy path answers too', async () => {
    const res = await h.http
      .post('/pipelines')
      .set(auth)
      .send({
        inventory_id: inventoryId,
        steps: [
          { name: 'only on failure', playbook: say('never'), run_if: 'failure' },
          { name: 'then', playbook: say('then') },
        ],
      });
    expect(res.status).toBe(201);
    expect(res.headers.deprecation).toEqual(expect.any(String));
    const done = await finished(res.body.id as string);
    expect(done.conclusion).toBe('succeeded');
    expect((await steps(done.id)).map(outcome)).toEqual([
      ['only on failure', 'finished', 'canceled', 'skipped'],
      ['then', 'finished', 'succeeded', null],
    ]);
    // Any other run lists no steps; an unknown one is a 404.
    expect(await steps((await steps(done.id))[1]!.id)).toEqual([]);
    expectProblem(await h.http.get('/v1/runs/run_01ARZ3NDEKTSV4RRFFQ69G5FAV/steps').set(auth), 404);
  }, 120_000);

  /** A pipeline of `steps` on `idle`'s own local inventory, submitted to a server whose executors never run it. */
  const submitIdle = async (idle: Harness, steps: Array<Record<string, unknown>>) => {
    const inv = await idle.http
      .post('/v1/inventories')
      .set(bearer(idle.admin.token))
      .send({ name: 'local', content: INVENTORY });
    return idle.http.post('/v1/pipelines').set(bearer(idle.admin.token)).send({ inventory_id: inv.body.id, steps });
  };

  it('survives a restart between two steps: the next server starts the step the last one never ran', async () => {
    // A server without executors: the steps are made pending and enqueued in its (in-process) queue, never run.
    const idle = await createHarness(dialect);
    try {
      const res = await submitIdle(idle, [
        { name: 'one', playbook: say('one') },
        { name: 'two', playbook: say('two') },
        { name: 'three', playbook: say('three') },
      ]);
      expect(res.status).toBe(201);
      const repos = idle.tdb.db.repos;
      const [one, two] = await repos.runs.children(res.body.id as string);
      // Step one runs to its end through the ingester, as an executor would report it: step two becomes pending.
      expect(await idle.services.runIngest.claim(one!.id, 'gone-worker')).toBe(true);
      await idle.services.runIngest.ingestBatch([
        { run_id: one!.id, seq: 1, ts: new Date().toISOString(), kind: 'status', data: { status: 'running' } },
        {
          run_id: one!.id,
          seq: 2,
          ts: new Date().toISOString(),
          kind: 'status',
          data: { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} },
        },
      ]);
      expect((await repos.runs.findById(two!.id))!.status).toBe('pending');
      // The server stops before running it; its in-process queue is gone with it.
      await idle.services.closeRuns();

      // The next server on the same database: its start-up reconcile requeues step two, its executor runs it, and the
      // pipeline goes on to step three and concludes.
      const next = createServices(idle.tdb.db, { keyring: idle.keyring, clock: systemClock, tokenTtlSeconds: 3600 });
      const mode = await startEmbeddedMode(next, {
        executors: 1,
        sandbox: { mode: 'off', hidden: [] },
        logger: createLogger('error', { silent: true }),
        leaseMs: DEFAULT_LEASE_MS,
        name: `restart-${dialect}`,
      });
      try {
        const deadline = Date.now() + 120_000;
        let pipeline = (await repos.runs.findById(res.body.id as string))!;
        while (pipeline.status !== 'finished' && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 150));
          pipeline = (await repos.runs.findById(res.body.id as string))!;
        }
        expect(pipeline.conclusion).toBe('succeeded');
        const after = await repos.runs.children(pipeline.id);
        expect(after.map((s) => [s.step_name, s.conclusion])).toEqual([
          ['one', 'succeeded'],
          ['two', 'succeeded'],
          ['three', 'succeeded'],
        ]);
        expect(after[1]!.worker).toContain(`restart-${dialect}`);
      } finally {
        await mode.stop(0);
      }
    } finally {
      await idle.tdb.drop();
    }
  }, 180_000);

  it('the recovery sweep moves on a pipeline whose step finished without advancing it', async () => {
    const idle = await createHarness(dialect);
    try {
      const res = await submitIdle(idle, [
        { name: 'one', playbook: say('one') },
        { name: 'cleanup', playbook: say('two'), run_if: 'failure' },
        { name: 'last', playbook: say('three'), run_if: 'always' },
      ]);
      expect(res.status).toBe(201);
      const repos = idle.tdb.db.repos;
      const [one, cleanup, last] = await repos.runs.children(res.body.id as string);
      // Finished behind the ingester's back (as a crash between the two would leave it): nothing advanced.
      expect(
        await repos.runs.transition(one!.id, ['pending'], {
          status: 'finished',
          conclusion: 'failed',
          finished_at: new Date().toISOString(),
        }),
      ).toBe(true);
      expect((await repos.runs.findById(cleanup!.id))!.status).toBe('waiting');
      await idle.services.runRecovery.reconcile();
      expect((await repos.runs.findById(cleanup!.id))!.status).toBe('pending');
      expect((await repos.runs.findById(last!.id))!.status).toBe('waiting');
      expect(await idle.services.runQueue.pendingIds()).toContain(cleanup!.id);
    } finally {
      await idle.close();
    }
  }, 60_000);
});
