// Runs held by approval policies (issue 12): held at submit from every origin, approve and reject with four eyes,
// min_approvals through a team, expiry by the recovery sweep, a split and a pipeline released as one unit, awaiting=me,
// and each decision on the run, its stream and the audit trail. Real ansible-playbook, both databases.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScheduleScheduler, type Principal } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: approved\n';
const LOCAL = 'localhost ansible_connection=local\n';
const TWO_HOSTS = 'web1 ansible_connection=local\ndb-1 ansible_connection=local\n';
const ZERO = '0'.repeat(40);
/**
 * Worker labels no embedded executor holds: a run with them waits in the queue once released and never starts, so only
 * the tests that follow a run to its end (the first one, the split, the pipeline) spend time in ansible-playbook.
 */
const PARKED = ['parked'];
let seq = 0;
const unique = (stem: string) => `${stem}-${++seq}-${Date.now().toString(36)}`;
const hmac = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');

type User = { id: string; token: string; username: string };
interface RunView {
  id: string;
  kind: string;
  status: string;
  conclusion: string | null;
  reason: string | null;
  origin: string;
  submitted_by: string;
  created_at: string;
  held_by: string[] | null;
  hold_expires_at: string | null;
  approvals_needed: Array<{ policy_id: string; name: string; min_approvals: number; approved: number }> | null;
  approvals: Array<{ user_id: string; username: string; decision: string; comment: string | null; at: string }>;
}

describe.each(DIALECTS)('runs held for approval on %s', (dialect) => {
  let h: Harness;
  let offsetMs = 0;
  let op1: User; // submits
  let op2: User; // a named approver
  let op3: User; // an operator no policy names
  let viewer: User;
  let admin2: User;
  const root = tempDir(`baton-approvals-${dialect}`);

  beforeAll(async () => {
    h = await createHarness(dialect, {
      clock: () => new Date(Date.now() + offsetMs),
      executors: { count: 2 },
    });
    op1 = await h.user('operator');
    op2 = await h.user('operator');
    op3 = await h.user('operator');
    viewer = await h.user('viewer');
    admin2 = await h.user('admin');
  }, 60_000);
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const principal = (u: User, role: Principal['role'] = 'operator'): Principal => ({
    id: u.id,
    username: u.username,
    role,
  });
  /** A stored inventory op1 owns: each test matches its policies on its own inventory, so tests never meet. */
  const inventory = async (content = LOCAL) => {
    const res = await h.http
      .post('/v1/inventories')
      .set(bearer(op1.token))
      .send({ name: unique('inv'), content });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const policy = async (body: Record<string, unknown>) => {
    const res = await h.http
      .post('/v1/policies')
      .set(bearer(h.admin.token))
      .send({ name: unique('pol'), ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const submit = async (body: Record<string, unknown>, token = op1.token) => {
    const res = await h.http
      .post('/v1/runs')
      .set(bearer(token))
      .send({ playbook: PLAYBOOK, ...body });
    expect(res.status).toBe(201);
    return res.body as RunView;
  };
  const get = async (id: string, token = h.admin.token) => {
    const res = await h.http.get(`/v1/runs/${id}`).set(bearer(token));
    expect(res.status).toBe(200);
    return res.body as RunView;
  };
  const decide = (id: string, decision: 'approve' | 'reject', token: string, body?: unknown) => {
    const req = h.http.post(`/v1/runs/${id}/${decision}`).set(bearer(token));
    return body === undefined ? req : req.send(body as object);
  };
  const finished = async (id: string): Promise<RunView> => {
    for (let i = 0; i < 600; i++) {
      const run = await get(id);
      if (run.status === 'finished') return run;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`run ${id} did not finish`);
  };
  /** Released: no longer held but pending, in the queue (a PARKED run no executor takes), its decision on its stream. */
  const released = async (id: string) => {
    const run = await get(id);
    expect(run.status).toBe('pending');
    expect((await queued()).has(id)).toBe(true);
    const events = await statusEvents(id);
    expect(events).toContainEqual(
      expect.objectContaining({ status: 'pending', decision: expect.objectContaining({ decision: 'approve' }) }),
    );
    return run;
  };
  const statusEvents = async (id: string) => {
    const res = await h.http.get(`/v1/runs/${id}/events?kind=status`).set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    return (res.body as Array<{ seq: number; data: Record<string, unknown> }>).map((e) => e.data);
  };
  const audited = async (id: string, action: string) =>
    h.tdb.db.repos.audit.list({ object: id, action }, { limit: 10 });
  const queued = async () => new Set(await h.services.runQueue.pendingIds());
  const awaiting = async (token: string) => {
    const res = await h.http.get('/v1/runs?awaiting=me&limit=500').set(bearer(token));
    expect(res.status).toBe(200);
    return (res.body as RunView[]).map((r) => r.id);
  };

  it('holds a matching run (not queued, not run) and lets a named approver release it; a run no policy matches runs at once', async () => {
    const inv = await inventory();
    const other = await inventory();
    const pol = await policy({ match: { inventories: [inv] }, approvers: { users: [op2.id] } });

    const held = await submit({ inventory_id: inv });
    expect(held).toMatchObject({
      status: 'held',
      held_by: [pol],
      hold_expires_at: null,
      approvals: [],
      approvals_needed: [{ policy_id: pol, min_approvals: 1, approved: 0 }],
    });
    const free = await submit({ inventory_id: other });
    expect(free.held_by).toBeNull();
    expect(['pending', 'running']).toContain(free.status);
    expect((await finished(free.id)).conclusion).toBe('succeeded');
    // Still held while the other ran: never queued, never claimed.
    expect((await get(held.id)).status).toBe('held');
    expect((await queued()).has(held.id)).toBe(false);
    expect(await awaiting(op2.token)).toContain(held.id);
    for (const filter of ['host=localhost', 'conclusion=succeeded', `inventory=${other}`]) {
      const filtered = await h.http.get(`/v1/runs?awaiting=me&${filter}`).set(bearer(op2.token));
      expect(filtered.status).toBe(200);
      expect(filtered.body).toEqual([]);
    }
    expect(await awaiting(op1.token)).not.toContain(held.id);
    expect(await awaiting(op3.token)).not.toContain(held.id);
    expect(await awaiting(h.admin.token)).toContain(held.id);

    // The submitter is no approver (403: they see their run); an operator the policy does not name cannot see it (404).
    expectProblem(await decide(held.id, 'approve', op1.token), 403);
    expectProblem(await decide(held.id, 'approve', op3.token), 404);
    expectProblem(await decide(held.id, 'approve', viewer.token), 404);
    // The approver sees the run only because the policy names them.
    expect((await get(held.id, op2.token)).id).toBe(held.id);

    const res = await decide(held.id, 'approve', op2.token, { comment: 'ok to go — ünïcode too' });
    expect(res.status).toBe(200);
    expect(['pending', 'running']).toContain(res.body.status);
    expect(res.body.approvals).toEqual([
      {
        user_id: op2.id,
        username: op2.username,
        decision: 'approve',
        comment: 'ok to go — ünïcode too',
        at: expect.any(String),
      },
    ]);
    expect(res.body.approvals_needed).toEqual([expect.objectContaining({ policy_id: pol, approved: 1 })]);
    const done = await finished(held.id);
    expect(done.conclusion).toBe('succeeded');
    expect(done.held_by).toEqual([pol]);

    expectProblem(await decide(held.id, 'approve', op2.token), 409);
    expectProblem(await decide(held.id, 'reject', h.admin.token), 409);
    const events = await statusEvents(held.id);
    expect(events[0]).toMatchObject({
      status: 'pending',
      decision: { user_id: op2.id, username: op2.username, decision: 'approve', comment: 'ok to go — ünïcode too' },
    });
    expect(events.at(-1)).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
    const entries = await audited(held.id, 'run.approve');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: op2.id });
    expect((await audited(held.id, 'run.submit'))[0]!.summary).toContain(`held for approval by ${pol}`);
    // Every decision is listed on the run for anyone who may see it.
    expect((await get(held.id, op1.token)).approvals).toHaveLength(1);
  });

  it('four eyes: the submitter never approves their own run, admins included, even when a policy names them', async () => {
    const inv = await inventory();
    const pol = await policy({ match: { inventories: [inv] }, approvers: { roles: ['admin'], users: [op1.id] } });
    const mine = await submit({ inventory_id: inv, labels: PARKED });
    const res = await decide(mine.id, 'approve', op1.token);
    expectProblem(res, 403);
    expect(res.body.detail).toMatch(/four eyes/);

    const admins = await submit({ inventory_id: inv, labels: PARKED }, h.admin.token);
    expect(admins.held_by).toEqual([pol]);
    expectProblem(await decide(admins.id, 'approve', h.admin.token), 403);
    expect((await get(admins.id)).status).toBe('held');
    // Another admin may; so may op1, whom the policy names, on a run someone else submitted.
    expect((await decide(admins.id, 'approve', admin2.token)).status).toBe(200);
    await released(admins.id);
    expect((await decide(mine.id, 'approve', admin2.token)).status).toBe(200);
    await released(mine.id);
  });

  it('min_approvals 2 through a team: one person counts once; a policy edited after the hold does not change it', async () => {
    const team = await h.http
      .post('/v1/teams')
      .set(bearer(h.admin.token))
      .send({ name: unique('approvers') });
    expect(team.status).toBe(201);
    for (const u of [op2, op3])
      expect(
        (await h.http.post(`/v1/teams/${team.body.id}/members`).set(bearer(h.admin.token)).send({ user_id: u.id }))
          .status,
      ).toBe(201);
    const inv = await inventory();
    const pol = await policy({ match: { inventories: [inv] }, approvers: { teams: [team.body.id] }, min_approvals: 2 });
    const run = await submit({ inventory_id: inv, labels: PARKED });
    expect(await awaiting(op2.token)).toContain(run.id);
    expect(await awaiting(op3.token)).toContain(run.id);

    const first = await decide(run.id, 'approve', op2.token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 'held',
      approvals_needed: [{ policy_id: pol, approved: 1, min_approvals: 2 }],
    });
    expectProblem(await decide(run.id, 'approve', op2.token), 409);
    expectProblem(await decide(run.id, 'reject', op2.token), 409);
    expect(await awaiting(op2.token)).not.toContain(run.id);
    expect(await awaiting(op3.token)).toContain(run.id);
    expect((await statusEvents(run.id))[0]).toMatchObject({ status: 'held', decision: { username: op2.username } });

    // Raising the bar now changes nothing for the run already held.
    const edit = await h.http.put(`/v1/policies/${pol}`).set(bearer(h.admin.token)).send({ min_approvals: 3 });
    expect(edit.status).toBe(200);
    const second = await decide(run.id, 'approve', op3.token, {});
    expect(second.status).toBe(200);
    expect(second.body.approvals.map((a: { username: string }) => a.username)).toEqual([op2.username, op3.username]);
    await released(run.id);
    expect(await audited(run.id, 'run.approve')).toHaveLength(2);
  });

  it('one reject finishes the run rejected, on its stream and in the audit trail', async () => {
    const inv = await inventory();
    await policy({ match: { inventories: [inv] }, approvers: { users: [op2.id, op3.id] }, min_approvals: 2 });
    const run = await submit({ inventory_id: inv, labels: PARKED });
    expect((await decide(run.id, 'approve', op3.token)).body.status).toBe('held');
    const res = await decide(run.id, 'reject', op2.token, { comment: 'not during the freeze' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'finished', conclusion: 'rejected', reason: 'rejected' });
    expect(res.body.approvals.map((a: { decision: string }) => a.decision)).toEqual(['approve', 'reject']);
    expectProblem(await decide(run.id, 'approve', h.admin.token), 409);
    expect((await statusEvents(run.id)).at(-1)).toMatchObject({
      status: 'finished',
      conclusion: 'rejected',
      decision: { username: op2.username, decision: 'reject', comment: 'not during the freeze' },
    });
    const entries = await audited(run.id, 'run.reject');
    expect(entries).toHaveLength(1);
    expect(entries[0]!.summary).toContain('not during the freeze');
    // A rejected run is not retried: resubmit it.
    expectProblem(await h.http.post(`/v1/runs/${run.id}/retry`).set(bearer(op1.token)), 409);
  });

  it('a held run whose policy’s expiry passes finishes rejected/expired at the next sweep', async () => {
    const inv = await inventory();
    await policy({ match: { inventories: [inv] }, approvers: { users: [op2.id] }, expires_after_s: 60 });
    const run = await submit({ inventory_id: inv, labels: PARKED });
    const holdFor = Date.parse(run.hold_expires_at!) - Date.parse(run.created_at);
    expect(holdFor).toBeGreaterThanOrEqual(60_000);
    expect(holdFor).toBeLessThan(70_000);
    expect((await h.services.runRecovery.reconcile()).expired).not.toContain(run.id);
    offsetMs += 61_000;
    const swept = await h.services.runRecovery.reconcile();
    expect(swept.expired).toContain(run.id);
    expect(await get(run.id)).toMatchObject({ status: 'finished', conclusion: 'rejected', reason: 'expired' });
    expect((await audited(run.id, 'run.expire'))[0]).toMatchObject({ actor: 'system' });
    expectProblem(await decide(run.id, 'approve', op2.token), 409);
    expect((await statusEvents(run.id)).at(-1)).toMatchObject({
      status: 'finished',
      conclusion: 'rejected',
      reason: 'expired',
    });
  });

  it('holds a split as one unit: its shards wait with it and run once it is approved', async () => {
    const inv = await inventory(TWO_HOSTS);
    await policy({ match: { inventories: [inv] }, approvers: { users: [op2.id] } });
    const split = await submit({ inventory_id: inv, shards: 2 });
    expect(split).toMatchObject({ kind: 'split', status: 'held' });
    const shards = (await h.http.get(`/v1/runs/${split.id}/shards`).set(bearer(op1.token))).body as RunView[];
    expect(shards.map((s) => s.status)).toEqual(['held', 'held']);
    const q = await queued();
    expect(shards.some((s) => q.has(s.id))).toBe(false);
    expectProblem(await decide(shards[0]!.id, 'approve', op2.token), 409);
    expect((await decide(split.id, 'approve', op2.token)).status).toBe(200);
    expect((await finished(split.id)).conclusion).toBe('succeeded');
    for (const s of shards) expect((await get(s.id)).conclusion).toBe('succeeded');
  });

  it('holds a pipeline as one unit (steps waiting), runs its steps in order once approved, and cancels one held', async () => {
    const inv = await inventory();
    await policy({ match: { inventories: [inv] }, approvers: { users: [op2.id] } });
    const submitPipeline = async () => {
      const res = await h.http
        .post('/v1/pipelines')
        .set(bearer(op1.token))
        .send({
          inventory_id: inv,
          steps: [
            { playbook: PLAYBOOK, name: 'one' },
            { playbook: PLAYBOOK, name: 'two' },
          ],
        });
      expect(res.status).toBe(201);
      return res.body as RunView;
    };
    const pipeline = await submitPipeline();
    expect(pipeline).toMatchObject({ kind: 'pipeline', status: 'held' });
    const steps = async (id: string) =>
      ((await h.http.get(`/v1/runs/${id}/steps`).set(bearer(op1.token))).body as RunView[]).map((s) => [
        s.status,
        s.conclusion,
      ]);
    // The ingester's advance (as after any submit) does not start a held pipeline.
    await h.services.runIngest.advance(pipeline.id);
    expect(await steps(pipeline.id)).toEqual([
      ['waiting', null],
      ['waiting', null],
    ]);
    expect((await decide(pipeline.id, 'approve', op2.token)).status).toBe(200);
    expect((await finished(pipeline.id)).conclusion).toBe('succeeded');
    expect(await steps(pipeline.id)).toEqual([
      ['finished', 'succeeded'],
      ['finished', 'succeeded'],
    ]);

    const canceled = await submitPipeline();
    const res = await h.http.post(`/v1/runs/${canceled.id}/cancel`).set(bearer(op1.token));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'finished', conclusion: 'canceled' });
    expect(await steps(canceled.id)).toEqual([
      ['finished', 'canceled'],
      ['finished', 'canceled'],
    ]);
  });

  it('host globs hold a run when any host it targets after limit matches', async () => {
    const inv = await inventory(TWO_HOSTS);
    await policy({ match: { inventories: [inv], hosts: ['db-*'] }, approvers: { users: [op2.id] } });
    const webOnly = await submit({ inventory_id: inv, limit: 'web1', labels: PARKED });
    expect(webOnly.held_by).toBeNull();
    const all = await submit({ inventory_id: inv, labels: PARKED });
    expect(all.status).toBe('held');
    const inline = await submit({ inventory: TWO_HOSTS, limit: 'db-1', labels: PARKED });
    expect(inline.held_by).toBeNull(); // the policy names a stored inventory; inline content is not it
    const res = await h.http.post(`/v1/runs/${all.id}/cancel`).set(bearer(op1.token));
    expect(res.body).toMatchObject({ status: 'finished', conclusion: 'canceled' });
    expect((await get(webOnly.id)).status).toBe('pending');
    expect((await get(inline.id)).status).toBe('pending');
  });

  it('holds runs from templates, schedules and triggers by origin; the schedule’s and trigger’s owner cannot approve', async () => {
    const inv = await inventory();
    await policy({ match: { inventories: [inv], origins: ['template', 'schedule'] }, approvers: { users: [op2.id] } });
    // Direct submission: origin api, not held.
    const direct = await submit({ inventory_id: inv, labels: PARKED });
    expect(direct.held_by).toBeNull();

    const tpl = await h.http
      .post('/v1/templates')
      .set(bearer(op1.token))
      .send({ name: unique('tpl'), kind: 'run', spec: { playbook: PLAYBOOK, inventory_id: inv, labels: PARKED } });
    expect(tpl.status).toBe(201);
    const launched = await h.http.post(`/v1/templates/${tpl.body.id}/launch`).set(bearer(op1.token));
    expect(launched.status).toBe(201);
    expect(launched.body).toMatchObject({ origin: 'template', status: 'held' });

    const sch = await h.http
      .post('/v1/schedules')
      .set(bearer(op1.token))
      .send({
        name: unique('sch'),
        cron: '0 3 * * *',
        target: { run: { playbook: PLAYBOOK, inventory_id: inv, labels: PARKED } },
      });
    expect(sch.status).toBe(201);
    const scheduler = createScheduleScheduler({
      schedules: h.tdb.db.repos.schedules,
      users: h.tdb.db.repos.users,
      transaction: h.tdb.db.transaction,
      keyring: h.keyring,
      launcher: h.services.launcher,
      clock: () => new Date(Date.now() + offsetMs),
      replica: 'test',
      reportError: (err) => {
        throw err;
      },
    });
    const fired = (await scheduler.tick(new Date(Date.now() + offsetMs + 2 * 86_400_000))).find(
      (f) => f.scheduleId === sch.body.id,
    );
    expect(fired).toMatchObject({ claimed: true, error: null, runId: expect.any(String) });
    const scheduled = await get(fired!.runId!);
    expect(scheduled).toMatchObject({ origin: 'schedule', status: 'held', submitted_by: op1.id });
    expectProblem(await decide(scheduled.id, 'approve', op1.token), 403);
    expect((await decide(scheduled.id, 'approve', op2.token)).status).toBe(200);
    await released(scheduled.id);
    expect((await decide(launched.body.id, 'reject', op2.token)).body.conclusion).toBe('rejected');

    // A webhook trigger: a real git repository, a GitHub-signed push.
    const repo = createRepo(root, unique('site'));
    const prj = await h.http
      .post('/v1/projects')
      .set(bearer(op1.token))
      .send({ name: unique('prj'), git_url: repo.url });
    expect(prj.status).toBe(201);
    await policy({ match: { projects: [prj.body.id], origins: ['trigger'] }, approvers: { users: [op2.id] } });
    const trg = await h.http
      .post('/v1/triggers')
      .set(bearer(op1.token))
      .send({
        name: unique('trg'),
        target: { run: { project_id: prj.body.id, playbook: 'site.yml', inventory: LOCAL, labels: PARKED } },
      });
    expect(trg.status).toBe(201);
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      before: ZERO,
      after: repo.head(),
      repository: { full_name: 'ops/site', clone_url: repo.url, html_url: repo.url },
      head_commit: { id: repo.head() },
    });
    const hook = await h.http
      .post(`/hooks/${trg.body.token}`)
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', 'push')
      .set('X-GitHub-Delivery', crypto.randomUUID())
      .set('X-Hub-Signature-256', `sha256=${hmac(trg.body.secret, body)}`)
      .send(body);
    expect(hook.status).toBe(202);
    const triggered = await get(hook.body.run_id);
    expect(triggered).toMatchObject({ origin: 'trigger', status: 'held', submitted_by: op1.id });
    expectProblem(await decide(triggered.id, 'approve', op1.token), 403);
    expect((await decide(triggered.id, 'approve', op2.token)).status).toBe(200);
    await released(triggered.id);
  }, 120_000);

  it('always holds runs of the ai and reconcile origins, matched by a policy or not; only an admin may decide then', async () => {
    const inv = await inventory();
    const ai = await h.services.runs.submit(
      principal(op1),
      { playbook: PLAYBOOK, inventory_id: inv, labels: PARKED },
      { origin: 'ai' },
    );
    expect(ai).toMatchObject({ status: 'held', held_by: [], approvals_needed: [] });
    const reconcile = await h.services.pipelines.submit(
      principal(op1),
      { inventory_id: inv, labels: PARKED, steps: [{ playbook: PLAYBOOK }] },
      { origin: 'reconcile' },
    );
    expect(reconcile).toMatchObject({ kind: 'pipeline', status: 'held', held_by: [] });
    const grant = await h.http
      .post('/v1/grants')
      .set(bearer(op1.token))
      .send({ subject: op2.id, object: inv, level: 'use' });
    expect(grant.status).toBe(201);
    const refused = await decide(ai.id, 'approve', op2.token);
    expectProblem(refused, 403);
    expect(refused.body.detail).toMatch(/only an admin/);
    expect(await awaiting(op2.token)).not.toContain(ai.id);
    expect(await awaiting(h.admin.token)).toEqual(expect.arrayContaining([ai.id, reconcile.id]));
    expect((await decide(ai.id, 'approve', h.admin.token)).status).toBe(200);
    await released(ai.id);
    expect((await decide(reconcile.id, 'reject', h.admin.token)).body.conclusion).toBe('rejected');
  });

  it('answers bad decisions with 4xx and changes nothing', async () => {
    const inv = await inventory();
    await policy({ match: { inventories: [inv] }, approvers: { users: [op2.id] } });
    const run = await submit({ inventory_id: inv, labels: PARKED });
    for (const body of [
      { comment: 'x'.repeat(2001) },
      { comment: 5 },
      { comment: null },
      { comment: 'a\ud800b' },
      { comment: 'nul\u0000' },
      { verdict: 'yes' },
      [],
    ])
      expectProblem(await decide(run.id, 'approve', op2.token, body), 400);
    expectProblem(await decide('run_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'approve', op2.token), 404);
    expectProblem(await decide('nope', 'approve', op2.token), 400);
    expectProblem(await h.http.post(`/v1/runs/${run.id}/approve`), 401);
    const text = await h.http
      .post(`/v1/runs/${run.id}/approve`)
      .set(bearer(op2.token))
      .set('Content-Type', 'text/plain')
      .send('yes');
    expectProblem(text, 415);
    expectProblem(
      await h.http.get('/v1/runs?awaiting=me&status=running').set(bearer(op2.token)),
      400,
      'query.awaiting',
    );
    expectProblem(await h.http.get('/v1/runs?awaiting=you').set(bearer(op2.token)), 400, 'query.awaiting');
    const still = await get(run.id);
    expect(still).toMatchObject({ status: 'held', approvals: [] });
    // A comment of exactly 2,000 characters is taken and reads back byte for byte.
    const long = `${'é'.repeat(1998)}😀`;
    expect(long).toHaveLength(2000);
    const ok = await decide(run.id, 'approve', op2.token, { comment: long });
    expect(ok.status).toBe(200);
    expect(ok.body.approvals[0].comment).toBe(long);
    // A run that is not held (any more) cannot be decided on.
    expectProblem(await decide(run.id, 'approve', h.admin.token), 409);
  });
});
