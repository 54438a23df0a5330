// The scheduler with a fake clock, on both databases: due times come from cron-parser in the schedule's zone (DST
// gaps and repeats included), a missed slot fires once, disabled schedules never fire, a schedule deleted mid-fire
// breaks nothing, a fire that cannot submit is recorded and audited and the schedule goes on.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { LaunchTarget, Run, SubmitPipelineBody, SubmitRunBody } from '@baton/contracts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { CronExpressionParser } from 'cron-parser';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { generateMasterKey, Keyring } from '../crypto/secret-box.js';
import { createLauncher } from '../launching/launcher.js';
import type { LaunchContext } from '../runs/run-launch.js';
import { cronTimesFrom, localTimestamp, nextCronTime, timingProblem } from './schedule.cron.js';
import { createScheduleScheduler, type ScheduleSchedulerDeps } from './schedule.scheduler.js';
import { createScheduleService, type ScheduleService } from './schedule.service.js';

const RUN_TARGET: LaunchTarget = { run: { playbook: '- hosts: all\n', inventory: 'localhost\n' } };
const TEMPLATE = 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const MINUTE = 60_000;

/** What cron-parser itself gives: the expectation every fire is compared with. */
function cronParserTimes(cron: string, tz: string, from: string, until: string): string[] {
  const it = CronExpressionParser.parse(cron, { currentDate: new Date(from), tz });
  const out: string[] = [];
  for (;;) {
    const d = it.next().toDate();
    if (d.getTime() > new Date(until).getTime()) return out;
    out.push(d.toISOString());
  }
}

describe('schedule timing', () => {
  it.each([
    ['', 'cron'],
    ['* * *', 'cron'],
    ['* * * * * * *', 'cron'],
    ['60 * * * *', 'cron'],
    ['* 24 * * *', 'cron'],
    ['* * 32 * *', 'cron'],
    ['* * 0 * *', 'cron'],
    ['* * * 13 *', 'cron'],
    ['* * * * 8', 'cron'],
    ['61 * * * * *', 'cron'],
    ['garbage', 'cron'],
    ['a b c d e', 'cron'],
    ['0 0 30 2 *', 'cron'],
    ['@daily', 'cron'],
    ['H * * * *', 'cron'],
    ['*/0 * * * *', 'cron'],
    ['1-0 * * * *', 'cron'],
    ['0 0 * * 1#6', 'cron'],
    ['1,,2 * * * *', 'cron'],
    ['\u0000 * * * *', 'cron'],
    [`${'1,'.repeat(150)}1 * * * *`, 'cron'],
    ['-1 * * * *', 'cron'],
    ['* * * * * ?x', 'cron'],
  ])('refuses %j at %s, without throwing', (cron, field) => {
    expect(() => timingProblem(cron, 'UTC')).not.toThrow();
    expect(timingProblem(cron, 'UTC')).toEqual({ field, message: expect.any(String) });
  });

  it.each(['Not/AZone', '', 'Europe/Berlin ', '../etc/passwd', 'Mars/Olympus_Mons', 'x'.repeat(65)])(
    'refuses the zone %j at timezone',
    (tz) => {
      expect(timingProblem('* * * * *', tz)).toEqual({ field: 'timezone', message: expect.any(String) });
    },
  );

  it.each([
    ['30 2 * * 1-5', 'Europe/Berlin'],
    ['*/5 * * * * *', 'UTC'],
    ['0 0 L * *', 'America/New_York'],
    ['0 9 * * MON-FRI', 'Asia/Kolkata'],
    ['0 0 * * THU', 'UTC'],
    ['  0  12 * * *  ', 'Australia/Lord_Howe'],
  ])('accepts %j in %s', (cron, tz) => {
    expect(timingProblem(cron, tz)).toBeUndefined();
  });

  it('shows an instant in a zone as RFC 3339 with that zone’s offset at that instant', () => {
    expect(localTimestamp(new Date('2026-03-29T01:30:00Z'), 'Europe/Berlin')).toBe('2026-03-29T03:30:00+02:00');
    expect(localTimestamp(new Date('2026-03-28T01:30:00Z'), 'Europe/Berlin')).toBe('2026-03-28T02:30:00+01:00');
    expect(localTimestamp(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00+02:00');
    expect(localTimestamp(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00+01:00');
    expect(localTimestamp(new Date('2026-06-01T00:00:00.250Z'), 'UTC')).toBe('2026-06-01T00:00:00.250+00:00');
    expect(localTimestamp(new Date('2026-06-01T12:00:00Z'), 'Asia/Kolkata')).toBe('2026-06-01T17:30:00+05:30');
    expect(localTimestamp(new Date('2026-06-01T00:00:00Z'), 'America/New_York')).toBe('2026-05-31T20:00:00-04:00');
    expect(localTimestamp(new Date('2026-06-01T00:00:00Z'), 'Not/AZone')).toBeNull();
  });

  it('lists a due time and the ones after it as cron-parser reaches them, across a DST change', () => {
    const first = new Date('2026-03-27T01:30:00.000Z');
    expect(cronTimesFrom('30 2 * * *', 'Europe/Berlin', first, 5).map((d) => d.toISOString())).toEqual([
      first.toISOString(),
      ...cronParserTimes('30 2 * * *', 'Europe/Berlin', first.toISOString(), '2026-03-31T12:00:00Z'),
    ]);
    // The gap on 2026-03-29 moves 02:30 CET to 03:30 CEST (01:30 UTC); from then on 02:30 CEST is 00:30 UTC.
    expect(cronTimesFrom('30 2 * * *', 'Europe/Berlin', first, 5).map((d) => d.toISOString())).toEqual([
      '2026-03-27T01:30:00.000Z',
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
    expect(
      cronTimesFrom('*/20 * * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), 3).map((d) => d.toISOString()),
    ).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:20.000Z', '2026-01-01T00:00:40.000Z']);
    // An expression the parser cannot read has only the time given.
    expect(cronTimesFrom('* * * * *', 'Not/AZone', first, 5)).toEqual([first]);
  });

  it('gives the first time strictly after the given one, and null rather than throwing', () => {
    expect(nextCronTime('* * * * * *', 'UTC', new Date('2026-01-01T00:00:00.000Z'))?.toISOString()).toBe(
      '2026-01-01T00:00:01.000Z',
    );
    expect(nextCronTime('0 0 30 2 *', 'UTC', new Date())).toBeNull();
    expect(nextCronTime('* * * * *', 'Not/AZone', new Date())).toBeNull();
  });
});

describe.each(DIALECTS)('scheduler on %s', (dialect) => {
  let tdb: TestDatabase;
  let now = new Date('2026-01-01T00:00:00Z');
  const clock = () => now;
  const keyring = new Keyring(generateMasterKey());
  const owner: Principal = { id: newId('usr'), username: 'owner', role: 'operator' };
  /** every launch the scheduler or the service asked for */
  const launches: Array<{ p: Principal; body: SubmitRunBody | SubmitPipelineBody; ctx: LaunchContext | undefined }> =
    [];
  let failWith: (() => Error) | undefined;
  let duringLaunch: (() => Promise<void>) | undefined;
  const reported: unknown[] = [];
  let service: ScheduleService;
  let depsOf: (over?: Partial<ScheduleSchedulerDeps>) => ScheduleSchedulerDeps;

  const fakeSubmit = async (
    p: Principal,
    body: SubmitRunBody | SubmitPipelineBody,
    ctx?: LaunchContext,
  ): Promise<Run> => {
    if (!ctx?.validateOnly) {
      await duringLaunch?.();
      if (failWith) throw failWith();
    }
    launches.push({ p, body, ctx });
    return { id: newId('run', clock().getTime()) } as Run;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    const { repos, transaction } = tdb.db;
    await repos.users.insert({
      id: owner.id,
      username: owner.username,
      email: null,
      role: owner.role,
      password_hash: 'x',
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    // A template row, so a template target's foreign key holds.
    await tdb.db.kysely
      .insertInto('templates')
      .values({
        id: TEMPLATE,
        name: 'tpl',
        description: null,
        kind: 'run',
        spec: '{}',
        survey: null,
        secret_defaults_enc: null,
        allow_overrides: '[]',
        created_by: owner.id,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .execute();
    const launcher = createLauncher({
      runs: { submit: fakeSubmit },
      pipelines: { submit: fakeSubmit },
      templates: {
        launch: async (p, _id, body, ctx) => fakeSubmit(p, body as SubmitRunBody, ctx as LaunchContext),
        passwordVariables: async () => ['db_password'],
        projectIdsOf: async () => [],
      },
    });
    service = createScheduleService({
      schedules: repos.schedules,
      transaction,
      authz: createAuthorizer({ grants: repos.grants, teams: repos.teams }),
      clock,
      keyring,
      launcher,
    });
    depsOf = (over = {}) => ({
      schedules: repos.schedules,
      users: repos.users,
      transaction,
      keyring,
      launcher,
      clock,
      replica: 'test',
      reportError: (err) => reported.push(err),
      ...over,
    });
  });
  afterAll(() => tdb.drop());
  beforeEach(async () => {
    // Each test watches only its own schedules.
    await tdb.db.kysely.updateTable('schedules').set({ enabled: 0, next_run_at: null }).execute();
    launches.length = 0;
    reported.length = 0;
    failWith = undefined;
    duringLaunch = undefined;
  });

  let n = 0;
  const create = (cron: string, timezone = 'UTC', over: { enabled?: boolean; target?: LaunchTarget } = {}) =>
    service.create(owner, {
      name: `schedule ${++n}`,
      cron,
      timezone,
      enabled: over.enabled ?? true,
      target: over.target ?? RUN_TARGET,
    });
  const fired = () => launches.filter((l) => !l.ctx?.validateOnly);
  const firesOf = async (id: string) => (await tdb.db.repos.schedules.fires(id)).map((f) => f.due_at);
  /** Ticks every `stepMs` from now (exclusive) through `until` (inclusive). */
  async function tickThrough(scheduler: { tick(at: Date): Promise<unknown> }, until: string, stepMs: number) {
    const end = new Date(until).getTime();
    for (let t = now.getTime() + stepMs; t <= end; t += stepMs) {
      now = new Date(t);
      await scheduler.tick(now);
    }
  }

  it('spring forward in Europe/Berlin: 02:30 does not exist on 2026-03-29; fires at cron-parser’s time, once', async () => {
    now = new Date('2026-03-27T12:00:00Z');
    const s = await create('30 2 * * *', 'Europe/Berlin');
    expect(s.next_run_at).toBe('2026-03-28T01:30:00.000Z');
    expect(s.next_run_at_local).toBe('2026-03-28T02:30:00+01:00');
    const scheduler = createScheduleScheduler(depsOf());
    await tickThrough(scheduler, '2026-03-31T12:00:00Z', 15 * MINUTE);

    const expected = cronParserTimes('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z');
    // What cron-parser does with the gap: the missing 02:30 CET becomes 03:30 CEST (01:30 UTC), once.
    expect(expected).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
    expect(await firesOf(s.id)).toEqual(expected);
    expect(fired().map((l) => l.ctx?.scheduleId)).toEqual(expected.map(() => s.id));
    expect(fired().every((l) => l.ctx?.origin === 'schedule' && l.p.id === owner.id)).toBe(true);
    const after = await service.get(owner, s.id);
    expect(after.next_run_at).toBe('2026-04-01T00:30:00.000Z');
    expect(after.next_run_at_local).toBe('2026-04-01T02:30:00+02:00');
    expect(after.last_error).toBeNull();
    expect(after.last_fired_at).toBe('2026-03-31T00:30:00.000Z');
  });

  it('fall back in Europe/Berlin: 02:30 happens twice on 2026-10-25; fires the times cron-parser gives, once each', async () => {
    now = new Date('2026-10-23T12:00:00Z');
    const daily = await create('30 2 * * *', 'Europe/Berlin');
    const halfHourly = await create('*/30 2 * * *', 'Europe/Berlin');
    const scheduler = createScheduleScheduler(depsOf());
    await tickThrough(scheduler, '2026-10-26T12:00:00Z', 15 * MINUTE);

    const expectedDaily = cronParserTimes(
      '30 2 * * *',
      'Europe/Berlin',
      '2026-10-23T12:00:00Z',
      '2026-10-26T12:00:00Z',
    );
    // cron-parser fires 02:30 once on the day the hour repeats: at its first occurrence (CEST, 00:30 UTC).
    expect(expectedDaily).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    expect(await firesOf(daily.id)).toEqual(expectedDaily);

    const expectedHalf = cronParserTimes(
      '*/30 2 * * *',
      'Europe/Berlin',
      '2026-10-23T12:00:00Z',
      '2026-10-26T12:00:00Z',
    );
    // …and the repeated hour's minutes once too: 02:00 and 02:30 CEST, not again in CET.
    expect(expectedHalf).toEqual([
      '2026-10-24T00:00:00.000Z',
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:00:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
    expect(await firesOf(halfHourly.id)).toEqual(expectedHalf);
    // each fired once: as many launches as due times, over both schedules
    expect(fired()).toHaveLength(expectedDaily.length + expectedHalf.length);
  });

  it('fires a slot missed while nothing ticked once, then moves past now; the same instant again fires nothing', async () => {
    now = new Date('2026-02-01T10:00:30Z');
    const s = await create('* * * * *');
    expect(s.next_run_at).toBe('2026-02-01T10:01:00.000Z');
    const scheduler = createScheduleScheduler(depsOf());
    now = new Date('2026-02-01T10:42:10Z'); // 41 slots missed
    const results = await scheduler.tick(now);
    expect(results).toEqual([
      { scheduleId: s.id, dueAt: '2026-02-01T10:01:00.000Z', claimed: true, runId: expect.any(String), error: null },
    ]);
    expect(await scheduler.tick(now)).toEqual([]);
    expect(fired()).toHaveLength(1);
    expect((await service.get(owner, s.id)).next_run_at).toBe('2026-02-01T10:43:00.000Z');
    expect(await firesOf(s.id)).toEqual(['2026-02-01T10:01:00.000Z']);
    const stored = await tdb.db.repos.schedules.findById(s.id);
    expect(stored?.last_run_id).toBe(results[0]!.runId);
  });

  it('never fires a disabled schedule; re-enabling computes the next time from now', async () => {
    now = new Date('2026-02-02T00:00:00Z');
    const off = await create('*/5 * * * *', 'UTC', { enabled: false });
    expect(off.next_run_at).toBeNull();
    expect(off.next_run_at_local).toBeNull();
    const on = await create('*/5 * * * *');
    const scheduler = createScheduleScheduler(depsOf());
    await tickThrough(scheduler, '2026-02-02T00:20:00Z', MINUTE);
    expect(await firesOf(off.id)).toEqual([]);
    expect(await firesOf(on.id)).toHaveLength(4);

    // Disabled while due: not fired.
    now = new Date('2026-02-02T00:40:00Z');
    await service.update(owner, on.id, { enabled: false });
    await scheduler.tick(now);
    expect(await firesOf(on.id)).toHaveLength(4);

    // Re-enabled an hour later: the next due time is after now, not the slot it had.
    now = new Date('2026-02-02T01:42:00Z');
    const again = await service.update(owner, on.id, { enabled: true });
    expect(again.next_run_at).toBe('2026-02-02T01:45:00.000Z');
    await scheduler.tick(now);
    expect(await firesOf(on.id)).toHaveLength(4);
    now = new Date('2026-02-02T01:45:00Z');
    await scheduler.tick(now);
    expect((await firesOf(on.id)).at(-1)).toBe('2026-02-02T01:45:00.000Z');
    expect(fired().filter((l) => l.ctx?.scheduleId === off.id)).toEqual([]);
  });

  it('a schedule deleted mid-fire breaks nothing; one deleted before its claim is not fired', async () => {
    now = new Date('2026-02-03T00:00:00Z');
    const s = await create('* * * * *');
    duringLaunch = () => service.remove(owner, s.id);
    const scheduler = createScheduleScheduler(depsOf());
    now = new Date('2026-02-03T00:01:00Z');
    const results = await scheduler.tick(now);
    expect(results).toEqual([expect.objectContaining({ scheduleId: s.id, claimed: true, runId: expect.any(String) })]);
    expect(await tdb.db.repos.schedules.findById(s.id)).toBeUndefined();
    expect(await firesOf(s.id)).toEqual([]);
    expect(reported).toEqual([]);
    duringLaunch = undefined;

    // Listed as due, deleted before the claim: no claim, no launch.
    const t = await create('* * * * *');
    const repos = tdb.db.repos;
    const racing = createScheduleScheduler(
      depsOf({
        schedules: {
          ...repos.schedules,
          due: async (at, limit) => {
            const rows = await repos.schedules.due(at, limit);
            await service.remove(owner, t.id);
            return rows;
          },
        },
      }),
    );
    launches.length = 0;
    now = new Date('2026-02-03T00:02:00Z');
    const raced = await racing.tick(now);
    expect(raced.find((r) => r.scheduleId === t.id)).toEqual(expect.objectContaining({ claimed: false }));
    expect(fired().filter((l) => l.ctx?.scheduleId === t.id)).toEqual([]);
    expect(reported).toEqual([]);
  });

  it('a fire that cannot submit records last_error and an audit entry, and the schedule keeps firing', async () => {
    now = new Date('2026-02-04T00:00:00Z');
    const s = await create('*/10 * * * *');
    const scheduler = createScheduleScheduler(depsOf());
    failWith = () => new ForbiddenError('no grant on inv_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    now = new Date('2026-02-04T00:10:00Z');
    expect(await scheduler.tick(now)).toEqual([
      expect.objectContaining({ claimed: true, runId: null, error: 'no grant on inv_01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
    ]);
    const failed = await service.get(owner, s.id);
    expect(failed).toMatchObject({
      enabled: true,
      last_error: 'no grant on inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      last_run_id: null,
      last_fired_at: '2026-02-04T00:10:00.000Z',
      next_run_at: '2026-02-04T00:20:00.000Z',
    });
    const fires = await tdb.db.repos.schedules.fires(s.id);
    expect(fires).toEqual([
      expect.objectContaining({ due_at: '2026-02-04T00:10:00.000Z', run_id: null, error: failed.last_error }),
    ]);
    const audit = await tdb.db.repos.audit.list({ object: s.id, action: 'schedule.fire_failed' }, { limit: 5 });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.summary).toContain('no grant on inv_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(audit[0]!.actor).toBe(owner.id);

    // Field errors name the field; the next slot fires normally and clears last_error.
    failWith = () => new ValidationError('bad', [{ path: 'body.limit', message: 'no host matches' }]);
    now = new Date('2026-02-04T00:20:00Z');
    await scheduler.tick(now);
    expect((await service.get(owner, s.id)).last_error).toBe('bad (body.limit: no host matches)');
    failWith = undefined;
    now = new Date('2026-02-04T00:30:00Z');
    const ok = await scheduler.tick(now);
    expect(ok).toEqual([expect.objectContaining({ runId: expect.any(String), error: null })]);
    expect(await service.get(owner, s.id)).toMatchObject({ last_error: null, last_run_id: ok[0]!.runId });

    // An unexpected failure is reported to the server log and recorded without its internals.
    failWith = () => new Error('connection reset by peer 10.1.2.3');
    now = new Date('2026-02-04T00:40:00Z');
    await scheduler.tick(now);
    expect((await service.get(owner, s.id)).last_error).toBe('internal error while submitting (see the server log)');
    expect(reported).toHaveLength(1);
    expect(await tdb.db.repos.audit.list({ object: s.id, action: 'schedule.fire_failed' }, { limit: 5 })).toHaveLength(
      3,
    );
  });

  it('a schedule whose owner is gone records that and moves on', async () => {
    now = new Date('2026-02-05T00:00:00Z');
    const s = await create('* * * * *');
    const scheduler = createScheduleScheduler(depsOf({ users: { findById: async () => undefined } }));
    now = new Date('2026-02-05T00:01:00Z');
    await scheduler.tick(now);
    const after = await service.get(owner, s.id);
    expect(after.last_error).toBe(`the schedule's owner ${owner.id} no longer exists`);
    expect(after.next_run_at).toBe('2026-02-05T00:02:00.000Z');
    expect(fired()).toEqual([]);
  });

  it('a slot claimed by a replica that died before moving on does not stall the schedule', async () => {
    now = new Date('2026-02-06T00:00:00Z');
    const s = await create('* * * * *');
    const due = '2026-02-06T00:01:00.000Z';
    expect(
      await tdb.db.repos.schedules.claimFire({
        schedule_id: s.id,
        due_at: due,
        claimed_at: due,
        claimed_by: 'dead replica',
      }),
    ).toBe(true);
    const scheduler = createScheduleScheduler(depsOf());
    now = new Date('2026-02-06T00:01:05Z');
    expect(await scheduler.tick(now)).toEqual([expect.objectContaining({ claimed: false })]);
    expect(fired()).toEqual([]);
    expect((await service.get(owner, s.id)).next_run_at).toBe('2026-02-06T00:02:00.000Z');
    now = new Date('2026-02-06T00:02:00Z');
    expect(await scheduler.tick(now)).toEqual([expect.objectContaining({ claimed: true, error: null })]);
  });

  it('seals a template target’s password answers apart, shows them masked, and launches with them', async () => {
    now = new Date('2026-02-07T00:00:00Z');
    const s = await create('* * * * *', 'UTC', {
      target: { template_id: TEMPLATE, survey_answers: { db_password: 'hunter2', region: 'eu' } },
    });
    expect(s.target).toEqual({ template_id: TEMPLATE, survey_answers: { db_password: '$encrypted$', region: 'eu' } });
    const stored = await tdb.db.repos.schedules.findById(s.id);
    expect(stored?.template_id).toBe(TEMPLATE);
    expect(stored?.target_secrets_enc).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain('hunter2');
    const scheduler = createScheduleScheduler(depsOf());
    now = new Date('2026-02-07T00:01:00Z');
    await scheduler.tick(now);
    expect(fired()).toEqual([
      expect.objectContaining({ body: { survey_answers: { db_password: 'hunter2', region: 'eu' } } }),
    ]);
  });

  it('a failure the database reports is told to reportError and the tick still resolves', async () => {
    const scheduler = createScheduleScheduler(
      depsOf({
        schedules: {
          ...tdb.db.repos.schedules,
          due: () => Promise.reject(new Error('database away')),
        },
      }),
    );
    await expect(scheduler.tick(new Date())).resolves.toEqual([]);
    expect(reported).toEqual([new Error('database away')]);
  });

  it('an owner whose use is refused at creation gets the submission’s error, not a schedule', async () => {
    failWith = undefined;
    const refusing = createScheduleService({
      schedules: tdb.db.repos.schedules,
      transaction: tdb.db.transaction,
      authz: createAuthorizer({ grants: tdb.db.repos.grants, teams: tdb.db.repos.teams }),
      clock,
      keyring,
      launcher: {
        launch: () => Promise.reject(new NotFoundError('inventory inv_01ARZ3NDEKTSV4RRFFQ69G5FAV not found')),
        splitSecrets: async (_p, target) => ({ target, secrets: null }),
        referencedIds: () => [],
      },
    });
    await expect(
      refusing.create(owner, {
        name: 'refused',
        cron: '* * * * *',
        timezone: 'UTC',
        enabled: true,
        target: RUN_TARGET,
      }),
    ).rejects.toThrow(NotFoundError);
    expect((await tdb.db.repos.schedules.list({ limit: 500 })).find((r) => r.name === 'refused')).toBeUndefined();
  });
});
