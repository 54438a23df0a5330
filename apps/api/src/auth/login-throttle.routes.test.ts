// Sign-in throttling as replicas see it: in queue mode every replica counts failures into the same Redis sets, so
// failures on replica A lock the account on replica B; embedded processes each count their own; and a throttle that
// cannot be reached makes sign-in a 503, never a silent pass.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Clock, Keyring, generateMasterKey } from '@baton/core';
import { type Database, openDatabase } from '@baton/db';
import { DIALECTS } from '@baton/db/testing';
import * as queueRedis from '@baton/queue/redis';
import type { Express } from 'express';
import supertest from 'supertest';
import { createApp } from '../app.js';
import { createLogger } from '../logger.js';
import type { QueueModeSettings } from '../runs/run.wiring.js';
import { databaseGauges } from '../system/metrics.js';
import { bearer, createHarness, expectProblem, type Harness, PASSWORD } from '../testing/harness.js';
import { createServices, type Services, type ServiceOptions } from '../wiring.js';

const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LIMITS = { perUsername: 3, perAddress: 1000, windowSeconds: 60 };

/** A second API process over the same database: its own services (and Redis connections) and its own app. */
function replica(db: Database, opts: ServiceOptions): { services: Services; app: Express } {
  const services = createServices(db, opts);
  const { app } = createApp({
    services,
    ping: () => db.ping(),
    gauges: databaseGauges(db),
    logger: createLogger('error', { silent: true }),
    bodyLimitBytes: 1024 * 1024,
    trustProxy: false,
  });
  return { services, app };
}

describe.each(DIALECTS)('sign-in throttling across replicas on %s', (dialect) => {
  const prefix = `baton_t_${Date.now()}_${crypto.randomBytes(3).toString('hex')}_${dialect}`;
  const queueMode: QueueModeSettings = {
    redisUrl: REDIS_URL,
    prefix,
    workerKey: crypto.randomBytes(32),
    redis: queueRedis,
  };
  let now = Date.now();
  const clock: Clock = () => new Date(now);
  let a: Harness;
  let db2: Database;
  let b: { services: Services; app: Express };
  const others: Services[] = [];

  const login = (app: Express, username: string, password: string) =>
    supertest(app).post('/v1/auth/login').send({ username, password });

  beforeAll(async () => {
    a = await createHarness(dialect, { queueMode, throttle: LIMITS, clock });
    db2 = openDatabase(a.tdb.url);
    b = replica(db2, {
      keyring: a.keyring,
      clock,
      tokenTtlSeconds: 3600,
      throttle: LIMITS,
      queueMode,
      reportError: () => {},
    });
  });
  afterAll(async () => {
    for (const s of others) await s.closeRuns();
    await b.services.closeRuns();
    await db2.close();
    await a.close();
    const redis = queueRedis.openRedis(REDIS_URL, 'login-throttle-test-cleanup');
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await queueRedis.closeRedis(redis);
  });

  it('counts failures on replica A against sign-ins on replica B: 429 with Retry-After there too', async () => {
    const u = await a.user('operator');
    expect((await login(a.app, u.username, 'wrong 1')).status).toBe(401);
    now += 5_000;
    expect((await login(b.app, u.username, 'wrong 2')).status).toBe(401);
    expect((await login(a.app, u.username.toUpperCase(), 'wrong 3')).status).toBe(401);

    // Three failures across both replicas: the right password is refused on either until the first ages out.
    const onB = await login(b.app, u.username, PASSWORD);
    expectProblem(onB, 429);
    expect(onB.headers['retry-after']).toBe('55');
    expect(onB.body.token).toBeUndefined();
    const onA = await login(a.app, u.username, PASSWORD);
    expectProblem(onA, 429);
    expect(onA.headers['retry-after']).toBe('55');

    now += 55_000;
    const ok = await login(b.app, u.username, PASSWORD);
    expect(ok.status).toBe(200);
    // The token B issued works on A: one database.
    expect((await a.http.post('/v1/auth/check').set(bearer(ok.body.token as string))).status).toBe(200);
  });

  it('forgets the username’s failures on every replica after a good sign-in on one', async () => {
    const u = await a.user('viewer');
    expect((await login(a.app, u.username, 'wrong')).status).toBe(401);
    expect((await login(b.app, u.username, 'wrong')).status).toBe(401);
    expect((await login(b.app, u.username, PASSWORD)).status).toBe(200);
    expect((await login(a.app, u.username, 'wrong')).status).toBe(401);
    expect((await login(b.app, u.username, 'wrong')).status).toBe(401);
    // Two failures since the good sign-in: under the limit of three.
    expect((await login(a.app, u.username, PASSWORD)).status).toBe(200);
  });

  it('lets no more guesses than the limit reach the password check, however many arrive at once on both replicas', async () => {
    const u = await a.user('operator');
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => login(i % 2 ? a.app : b.app, u.username, `parallel guess ${i}`)),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(3).fill(401), ...Array(9).fill(429)]);
    for (const r of answers.filter((x) => x.status === 429)) expect(r.headers['retry-after']).toBe('60');
    // Only the three that were checked are in the audit trail as failed sign-ins.
    const failed = await a.tdb.db.kysely
      .selectFrom('audit_entries')
      .select('seq')
      .where('action', '=', 'auth.login_failed')
      .where('object', '=', u.id)
      .execute();
    expect(failed).toHaveLength(3);
    now += 60_000;
  });

  it('keeps the lock of a user that does not exist too, on both replicas', async () => {
    const ghost = `ghost-${crypto.randomBytes(4).toString('hex')}`;
    for (const app of [a.app, b.app, b.app]) expect((await login(app, ghost, 'guess')).status).toBe(401);
    for (const app of [a.app, b.app]) expectProblem(await login(app, ghost, 'guess'), 429);
  });

  it('counts per process in embedded mode: two embedded processes do not share failures', async () => {
    const embedded = () => {
      const r = replica(a.tdb.db, {
        keyring: new Keyring(generateMasterKey()),
        clock,
        tokenTtlSeconds: 3600,
        throttle: LIMITS,
      });
      others.push(r.services);
      return r.app;
    };
    const [one, two] = [embedded(), embedded()];
    const u = await a.user('operator');
    for (let i = 0; i < 3; i++) expect((await login(one, u.username, 'wrong')).status).toBe(401);
    expectProblem(await login(one, u.username, PASSWORD), 429);
    expect((await login(two, u.username, PASSWORD)).status).toBe(200);
  });
});

describe('sign-in in queue mode with Redis unreachable', () => {
  let h: Harness;
  beforeAll(async () => {
    // Nothing listens on port 1: the throttle cannot be consulted.
    h = await createHarness('sqlite', {
      queueMode: {
        redisUrl: 'redis://127.0.0.1:1',
        prefix: `baton_t_away_${Date.now()}`,
        workerKey: crypto.randomBytes(32),
      },
    });
  });
  afterAll(() => h.close());

  it('answers 503 problem+json, for a right and for a wrong password alike, and issues no token', async () => {
    const tokensBefore = await h.tdb.db.kysely.selectFrom('api_tokens').select('id').execute();
    for (const password of [PASSWORD, 'not the password']) {
      const res = await h.http.post('/v1/auth/login').send({ username: 'root', password });
      expectProblem(res, 503);
      expect(res.body.detail).toBe('sign-in is unavailable: its rate limiter cannot be reached; try again shortly');
      expect(res.body.token).toBeUndefined();
    }
    expect(await h.tdb.db.kysely.selectFrom('api_tokens').select('id').execute()).toEqual(tokensBefore);
  });
});
