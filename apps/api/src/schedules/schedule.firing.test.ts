// Schedules firing for real: one schedule through the whole app (the real scheduler loop, real ansible-playbook on
// both databases), and exactly-once with two replicas (two service stacks over one PostgreSQL database) ticking at
// the same instants.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createScheduleScheduler, nextCronTime, type ScheduleFireResult } from '@baton/core';
import { type Database, openDatabase } from '@baton/db';
import { DIALECTS } from '@baton/db/testing';
import { createLogger } from '../logger.js';
import { bearer, createHarness, type Harness } from '../testing/harness.js';
import { createServices, type Services } from '../wiring.js';
import { startScheduler } from './scheduler.js';

const PLAYBOOK =
  '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: fired by a schedule\n';
const LOCAL = 'localhost ansible_connection=local\n';

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(DIALECTS)('a schedule firing end to end on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('the scheduler loop submits an every-second schedule as its owner; the run succeeds and is listed by schedule', async () => {
    const op = await h.user('operator');
    const created = await h.http
      .post('/v1/schedules')
      .set(bearer(op.token))
      .send({
        name: 'every second',
        cron: '* * * * * *',
        target: { run: { playbook: PLAYBOOK, inventory: LOCAL } },
      });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const loop = startScheduler(h.services, { logger: createLogger('error', { silent: true }), intervalMs: 200 });
    let runs: Array<Record<string, unknown>>;
    try {
      runs = await until('a run of the schedule', async () => {
        const res = await h.http.get(`/v1/runs?schedule=${id}`).set(bearer(op.token));
        return res.body.length > 0 ? (res.body as Array<Record<string, unknown>>) : undefined;
      });
    } finally {
      await loop.stop();
    }
    const off = await h.http.put(`/v1/schedules/${id}`).set(bearer(op.token)).send({ enabled: false });
    expect(off.status).toBe(200);

    const first = runs.at(-1)!;
    expect(first).toMatchObject({ origin: 'schedule', schedule_id: id, submitted_by: op.id, kind: 'run' });
    const finished = await until('the fired run to finish', async () => {
      const res = await h.http.get(`/v1/runs/${first.id as string}`).set(bearer(op.token));
      return res.body.status === 'finished' ? (res.body as Record<string, unknown>) : undefined;
    });
    expect(finished).toMatchObject({ conclusion: 'succeeded', origin: 'schedule', schedule_id: id });
    const log = await h.http.get(`/v1/runs/${first.id as string}/logs`).set(bearer(op.token));
    expect(log.status).toBe(200);
    expect(log.text).toContain('fired by a schedule');

    // Every run the schedule started is one claimed slot, and the schedule shows its last one.
    const all = (await h.http.get(`/v1/runs?schedule=${id}&limit=500`).set(bearer(op.token))).body as Array<{
      id: string;
      origin: string;
    }>;
    const fires = await h.tdb.db.repos.schedules.fires(id);
    expect(fires.map((f) => f.run_id).sort()).toEqual(all.map((r) => r.id).sort());
    expect(new Set(fires.map((f) => f.due_at)).size).toBe(fires.length);
    const shown = (await h.http.get(`/v1/schedules/${id}`).set(bearer(op.token))).body;
    expect(shown).toMatchObject({ last_error: null, enabled: false, next_run_at: null });
    expect(all.map((r) => r.id)).toContain(shown.last_run_id);
    // Other origins are not listed under the schedule, and the origin filter finds these runs.
    const bySchedule = (await h.http.get('/v1/runs?origin=schedule&limit=500').set(bearer(op.token))).body as Array<{
      id: string;
    }>;
    expect(bySchedule.map((r) => r.id)).toEqual(expect.arrayContaining(all.map((r) => r.id)));
  });

  it('a fire whose grant was revoked records last_error and an audit entry, then fires again once granted', async () => {
    let now = new Date('2026-12-01T00:00:00Z');
    const clock = () => now;
    const op = await h.user('operator');
    const inv = (
      await h.http.post('/v1/inventories').set(bearer(h.admin.token)).send({ name: 'shared fleet', content: LOCAL })
    ).body.id as string;
    const granted = await h.http
      .post('/v1/grants')
      .set(bearer(h.admin.token))
      .send({ subject: op.id, object: inv, level: 'use' });
    expect(granted.status).toBe(201);
    const created = await h.http
      .post('/v1/schedules')
      .set(bearer(op.token))
      .send({ name: 'revoked', cron: '*/5 * * * *', target: { run: { playbook: PLAYBOOK, inventory_id: inv } } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // The schedule's next time is from the real clock; put it where the fake clock ticks.
    await h.tdb.db.repos.schedules.update(id, { next_run_at: '2026-12-01T00:05:00.000Z' });

    expect((await h.http.delete(`/v1/grants/${granted.body.id as string}`).set(bearer(h.admin.token))).status).toBe(
      204,
    );
    // A scheduler of its own with the fake clock, over the harness's services.
    const scheduler = fakeClockScheduler(clock);
    now = new Date('2026-12-01T00:05:00Z');
    const [failed] = await scheduler.tick(now);
    expect(failed).toMatchObject({ scheduleId: id, claimed: true, runId: null, error: expect.stringContaining(inv) });
    const shown = (await h.http.get(`/v1/schedules/${id}`).set(bearer(op.token))).body;
    expect(shown).toMatchObject({
      enabled: true,
      last_error: failed!.error,
      last_run_id: null,
      next_run_at: '2026-12-01T00:10:00.000Z',
    });
    const audit = await h.tdb.db.repos.audit.list({ object: id, action: 'schedule.fire_failed' }, { limit: 5 });
    expect(audit).toHaveLength(1);

    // Granted again: the next slot fires as the owner.
    expect(
      (await h.http.post('/v1/grants').set(bearer(h.admin.token)).send({ subject: op.id, object: inv, level: 'use' }))
        .status,
    ).toBe(201);
    now = new Date('2026-12-01T00:10:00Z');
    const [ok] = await scheduler.tick(now);
    expect(ok).toMatchObject({ claimed: true, error: null, runId: expect.any(String) });
    expect((await h.http.get(`/v1/schedules/${id}`).set(bearer(op.token))).body).toMatchObject({
      last_error: null,
      last_run_id: ok!.runId,
    });
    const run = (await h.http.get(`/v1/runs/${ok!.runId!}`).set(bearer(op.token))).body;
    expect(run).toMatchObject({ origin: 'schedule', schedule_id: id, submitted_by: op.id, inventory_id: inv });
    await h.http.put(`/v1/schedules/${id}`).set(bearer(op.token)).send({ enabled: false });
    await until('the run to finish', async () => {
      const res = await h.http.get(`/v1/runs/${ok!.runId!}`).set(bearer(op.token));
      return res.body.status === 'finished' ? true : undefined;
    });
  });
  /** A scheduler over the harness's services whose clock the test moves. */
  const fakeClockScheduler = (clock: () => Date) =>
    createScheduleScheduler({
      schedules: h.tdb.db.repos.schedules,
      users: h.tdb.db.repos.users,
      transaction: h.tdb.db.transaction,
      keyring: h.keyring,
      launcher: h.services.launcher,
      clock,
      replica: 'test',
      reportError: (err) => {
        throw err;
      },
    });
  const finishedRun = (token: string, id: string) =>
    until(`run ${id} to finish`, async () => {
      const res = await h.http.get(`/v1/runs/${id}`).set(bearer(token));
      return res.body.status === 'finished' ? (res.body as Record<string, unknown>) : undefined;
    });

  it('fires a template target with its sealed password answer: masked on the run and in its log', async () => {
    const now = new Date('2027-01-01T00:00:00Z');
    const op = await h.user('operator');
    const tpl = await h.http
      .post('/v1/templates')
      .set(bearer(op.token))
      .send({
        name: 'templated',
        kind: 'run',
        spec: {
          playbook:
            '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: "secret {{ db_password }} in {{ region }}"\n',
          inventory: LOCAL,
        },
        survey: [
          { variable: 'db_password', question: 'Password?', type: 'password', required: true },
          { variable: 'region', question: 'Region?', type: 'choice', choices: ['eu', 'us'], required: true },
        ],
      });
    expect(tpl.status).toBe(201);
    const created = await h.http
      .post('/v1/schedules')
      .set(bearer(op.token))
      .send({
        name: 'templated nightly',
        cron: '0 3 * * *',
        timezone: 'Europe/Berlin',
        target: { template_id: tpl.body.id, survey_answers: { db_password: 'hunter2-very-secret', region: 'eu' } },
      });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await h.tdb.db.repos.schedules.update(id, { next_run_at: '2027-01-01T02:00:00.000Z' });
    const [fired] = await fakeClockScheduler(() => now).tick(new Date('2027-01-01T02:00:00Z'));
    expect(fired).toMatchObject({ scheduleId: id, claimed: true, error: null, runId: expect.any(String) });
    const run = await finishedRun(op.token, fired!.runId!);
    expect(run).toMatchObject({
      conclusion: 'succeeded',
      origin: 'schedule',
      schedule_id: id,
      template_id: tpl.body.id,
      submitted_by: op.id,
      survey_answers: { region: 'eu' },
      extra_vars: { db_password: '$encrypted$', region: 'eu' },
    });
    const log = await h.http.get(`/v1/runs/${fired!.runId!}/logs`).set(bearer(op.token));
    expect(log.text).toContain('in eu');
    expect(log.text).not.toContain('hunter2-very-secret');
    expect((await h.http.get(`/v1/schedules/${id}`).set(bearer(op.token))).body).toMatchObject({
      last_run_id: fired!.runId,
      last_error: null,
      next_run_at: '2027-01-02T02:00:00.000Z',
      next_run_at_local: '2027-01-02T03:00:00+01:00',
    });
    await h.http.put(`/v1/schedules/${id}`).set(bearer(op.token)).send({ enabled: false });
  });

  it('fires a pipeline target: a pipeline run of the schedule whose steps all succeed', async () => {
    const op = await h.user('operator');
    const created = await h.http
      .post('/v1/schedules')
      .set(bearer(op.token))
      .send({
        name: 'pipelined',
        cron: '*/15 * * * *',
        target: {
          pipeline: { inventory: LOCAL, steps: [{ name: 'first', playbook: PLAYBOOK }, { playbook: PLAYBOOK }] },
        },
      });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await h.tdb.db.repos.schedules.update(id, { next_run_at: '2027-02-01T00:15:00.000Z' });
    const at = new Date('2027-02-01T00:15:00Z');
    const [fired] = await fakeClockScheduler(() => at).tick(at);
    expect(fired).toMatchObject({ claimed: true, error: null });
    const run = await finishedRun(op.token, fired!.runId!);
    expect(run).toMatchObject({ kind: 'pipeline', conclusion: 'succeeded', origin: 'schedule', schedule_id: id });
    const steps = (await h.http.get(`/v1/runs/${fired!.runId!}/steps`).set(bearer(op.token))).body as Array<{
      conclusion: string;
    }>;
    expect(steps.map((st) => st.conclusion)).toEqual(['succeeded', 'succeeded']);
    const listed = (await h.http.get(`/v1/runs?schedule=${id}`).set(bearer(op.token))).body as Array<{ id: string }>;
    expect(listed.map((r) => r.id)).toEqual([fired!.runId]);
    await h.http.put(`/v1/schedules/${id}`).set(bearer(op.token)).send({ enabled: false });
  });
});

describe('exactly once with two replicas on one PostgreSQL database', () => {
  let h: Harness;
  let db2: Database;
  let second: Services;
  let now = new Date('2026-12-24T10:00:00.000Z');
  const clock = () => now;

  beforeAll(async () => {
    h = await createHarness('postgres', { clock });
    // The second replica: its own connection pool and its own service stack over the same database and master key.
    db2 = openDatabase(h.tdb.url);
    second = createServices(db2, { keyring: h.keyring, clock, tokenTtlSeconds: 3600 });
  });
  afterAll(async () => {
    await second.closeRuns();
    await db2.close();
    await h.close();
  });

  it('every due time of every schedule is fired by exactly one replica, none missing', async () => {
    const op = await h.user('operator');
    const inv = (
      await h.http.post('/v1/inventories').set(bearer(op.token)).send({ name: 'fleet', content: '[web]\nweb1\nweb2\n' })
    ).body.id as string;
    const start = now;
    const crons = ['* * * * * *', '*/2 * * * * *', '*/3 * * * * *', '0,30 * * * * *'];
    const ids: Record<string, string> = {};
    for (const [i, cron] of crons.entries()) {
      const res = await h.http
        .post('/v1/schedules')
        .set(bearer(op.token))
        .send({ name: `replicated ${i}`, cron, target: { run: { playbook: PLAYBOOK, inventory_id: inv } } });
      expect(res.status).toBe(201);
      ids[cron] = res.body.id as string;
    }
    const replicas = [h.services.scheduler, second.scheduler];
    const ROUNDS = 40;
    const claimsPerRound: number[] = [];
    const dueAtRound: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      now = new Date(start.getTime() + round * 1000);
      // Both replicas tick at the same instant, concurrently; which one starts first alternates.
      const order = round % 2 ? replicas : [...replicas].reverse();
      const results: ScheduleFireResult[][] = await Promise.all(order.map((r) => r.tick(now)));
      claimsPerRound.push(results.flat().filter((r) => r.claimed).length);
      dueAtRound.push(
        crons.filter((c) => {
          const prev = new Date(now.getTime() - 1000);
          return nextCronTime(c, 'UTC', prev)?.getTime() === now.getTime();
        }).length,
      );
      expect(results.flat().every((r) => r.error === null)).toBe(true);
    }
    // One claim per schedule due at each instant, across both replicas.
    expect(claimsPerRound).toEqual(dueAtRound);

    const end = now;
    for (const cron of crons) {
      const expected: string[] = [];
      for (let t = nextCronTime(cron, 'UTC', start); t && t <= end; t = nextCronTime(cron, 'UTC', t))
        expected.push(t.toISOString());
      const fires = await h.tdb.db.repos.schedules.fires(ids[cron]!);
      expect(fires.map((f) => f.due_at)).toEqual(expected);
      expect(fires.every((f) => f.run_id !== null && f.error === null)).toBe(true);
      const runs = (await h.http.get(`/v1/runs?schedule=${ids[cron]!}&limit=500`).set(bearer(op.token))).body as Array<{
        id: string;
        origin: string;
        submitted_by: string;
      }>;
      expect(runs).toHaveLength(expected.length);
      expect(runs.map((r) => r.id).sort()).toEqual(fires.map((f) => f.run_id).sort());
      expect(runs.every((r) => r.origin === 'schedule' && r.submitted_by === op.id)).toBe(true);
    }
  });
});
