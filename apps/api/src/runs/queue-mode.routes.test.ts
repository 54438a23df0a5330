// `baton serve`'s run routes in queue mode: what reaches Redis (a sealed bundle, no secret in clear), what happens
// to a run whose bundle cannot be built, and Redis being away (the submit still answers, a cancel is a 503).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newId } from '@baton/core';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import { openBundle } from '@baton/executor';
import { type RunJob } from '@baton/queue';
import { closeRedis, createRedisRunQueue, openRedis } from '@baton/queue/redis';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n';
const SECRET = `s3cret-${crypto.randomBytes(6).toString('hex')}`;

describe.each(DIALECTS)('runs in queue mode on %s', (dialect) => {
  const prefix = `baton_t_${Date.now()}_${crypto.randomBytes(3).toString('hex')}_${dialect}`;
  const workerKey = crypto.randomBytes(32);
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness(dialect, { queueMode: { redisUrl: REDIS_URL, prefix, workerKey } });
  });
  afterAll(async () => {
    await h.close();
    const redis = openRedis(REDIS_URL, 'queue-mode-test-cleanup');
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await closeRedis(redis);
  });

  /** Everything under the prefix, as a Redis reader would see it. */
  const redisText = async () => {
    const redis = openRedis(REDIS_URL, 'queue-mode-test-reader');
    let dump = '';
    for (const key of await redis.keys(`${prefix}:*`)) {
      const type = await redis.type(key);
      if (type === 'hash') dump += JSON.stringify(await redis.hgetall(key));
      else if (type === 'string') dump += await redis.get(key);
      else if (type === 'list') dump += (await redis.lrange(key, 0, -1)).join(',');
      else if (type === 'zset') dump += (await redis.zrange(key, '0', '-1')).join(',');
    }
    await closeRedis(redis);
    return dump;
  };

  const inventory = async () => {
    const res = await h.http
      .post('/v1/inventories')
      .set(bearer(h.admin.token))
      .send({ name: `inv-${crypto.randomUUID()}`, content: 'localhost ansible_connection=local\n' });
    return res.body.id as string;
  };

  it('enqueues a sealed bundle that only the worker key opens, with no secret in Redis in clear text', async () => {
    const cred = await h.http
      .post('/v1/credentials')
      .set(bearer(h.admin.token))
      .send({ name: `env-${crypto.randomUUID()}`, type: 'env', inputs: { variables: { API_TOKEN: SECRET } } });
    expect(cred.status).toBe(201);
    const res = await h.http
      .post('/v1/runs')
      .set(bearer(h.admin.token))
      .send({ playbook: PLAYBOOK, inventory_id: await inventory(), credential_ids: [cred.body.id], labels: ['gpu'] });
    expect(res.status).toBe(201);
    const runId = res.body.id as string;

    const dump = await redisText();
    expect(dump).toContain(runId);
    expect(dump).not.toContain(SECRET);

    // A worker with the key (and the label) gets the job and opens it.
    const worker = createRedisRunQueue({ redisUrl: REDIS_URL, prefix });
    const job = await new Promise<RunJob>((resolve) =>
      worker.lease({ name: 'test-worker', labels: ['gpu'], capacity: 1 }, async (j) => resolve(j)),
    );
    await worker.close();
    expect(job).toMatchObject({ runId, labels: ['gpu'] });
    const bundle = openBundle(job.bundle!, runId, workerKey);
    expect(bundle.credentials).toEqual([{ type: 'env', inputs: { variables: { API_TOKEN: SECRET } } }]);
    expect(() => openBundle(job.bundle!, runId, crypto.randomBytes(32))).toThrow(/does not open/);
  });

  it('ends a pending run whose inventory is gone error/missing_input when the sweep enqueues it, and goes on with the others', async () => {
    const gone = testRunRow(newId('run'), {
      submitted_by: h.admin.id,
      inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      inventory_content: null,
      created_at: new Date().toISOString(),
    });
    await h.tdb.db.repos.runs.insert(gone);
    const result = await h.services.runRecovery.reconcile();
    expect(result.failed).toEqual([]);
    expect(await h.tdb.db.repos.runs.findById(gone.id)).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'missing_input',
    });
  });

  it('ends a pending run our rules refuse (a token credential) error/executor_error when the sweep enqueues it', async () => {
    const token = await h.http
      .post('/v1/credentials')
      .set(bearer(h.admin.token))
      .send({ name: `tok-${crypto.randomUUID()}`, type: 'token', inputs: { token: SECRET } });
    expect(token.status).toBe(201);
    const refused = testRunRow(newId('run'), {
      submitted_by: h.admin.id,
      credential_ids: [token.body.id as string],
      created_at: new Date().toISOString(),
    });
    await h.tdb.db.repos.runs.insert(refused);
    expect((await h.services.runRecovery.reconcile()).failed).toEqual([]);
    expect(await h.tdb.db.repos.runs.findById(refused.id)).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'executor_error',
    });
  });

  it('keeps a run held for approval out of Redis until it is approved, then enqueues its sealed bundle', async () => {
    const inv = await inventory();
    const pol = await h.http
      .post('/v1/policies')
      .set(bearer(h.admin.token))
      .send({ name: `pol-${crypto.randomUUID()}`, match: { inventories: [inv] }, approvers: { roles: ['admin'] } });
    expect(pol.status).toBe(201);
    const res = await h.http
      .post('/v1/runs')
      .set(bearer(h.admin.token))
      .send({ playbook: PLAYBOOK, inventory_id: inv });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('held');
    const runId = res.body.id as string;
    const redisHolds = async () => (await redisText()).includes(runId);
    expect(await redisHolds()).toBe(false);
    // The recovery sweep (its leader) does not enqueue a held run either.
    await h.services.runRecovery.reconcile();
    expect(await redisHolds()).toBe(false);
    expect(await h.services.runQueue.pendingIds()).not.toContain(runId);

    const other = await h.user('admin');
    const approved = await h.http.post(`/v1/runs/${runId}/approve`).set(bearer(other.token));
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('pending');
    expect(await h.services.runQueue.pendingIds()).toContain(runId);
    expect(await redisHolds()).toBe(true);
  });

  // Last in this suite: the run it leaves pending fails every later sweep on purpose.
  it('never finishes a run whose bundle fails for a reason not ours (a secret this server cannot open): it stays pending for every next sweep', async () => {
    const env = await h.http
      .post('/v1/credentials')
      .set(bearer(h.admin.token))
      .send({ name: `env-${crypto.randomUUID()}`, type: 'env', inputs: { variables: { API_TOKEN: SECRET } } });
    expect(env.status).toBe(201);
    expect(
      await h.tdb.db.repos.credentials.update(env.body.id as string, {
        secret_inputs_enc: 'sealed under a key long gone',
      }),
    ).toBe(true);
    const stuck = testRunRow(newId('run'), {
      submitted_by: h.admin.id,
      credential_ids: [env.body.id as string],
      created_at: new Date().toISOString(),
    });
    await h.tdb.db.repos.runs.insert(stuck);
    for (let sweep = 0; sweep < 2; sweep += 1) {
      const result = await h.services.runRecovery.reconcile();
      expect(result.failed).toEqual([{ runId: stuck.id, error: 'not a sealed value' }]);
      expect(await h.tdb.db.repos.runs.findById(stuck.id)).toMatchObject({ status: 'pending', conclusion: null });
    }
  });
});

describe('runs in queue mode with Redis away', () => {
  let h: Harness;
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails.
    h = await createHarness('sqlite', {
      queueMode: {
        redisUrl: 'redis://127.0.0.1:1',
        prefix: `baton_t_away_${Date.now()}`,
        workerKey: crypto.randomBytes(32),
      },
    });
  });
  afterAll(() => h.close());

  it('still answers a submit (the run is committed; the sweep enqueues it later) and answers a cancel 503, changing nothing', async () => {
    const inv = await h.http
      .post('/v1/inventories')
      .set(bearer(h.admin.token))
      .send({ name: 'here', content: 'localhost\n' });
    const res = await h.http
      .post('/v1/runs')
      .set(bearer(h.admin.token))
      .send({ playbook: PLAYBOOK, inventory_id: inv.body.id });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('pending');
    const cancel = await h.http.post(`/v1/runs/${res.body.id}/cancel`).set(bearer(h.admin.token));
    expectProblem(cancel, 503);
    expect(cancel.body.detail).toMatch(/^the run queue \(Redis\) (is unreachable|did not answer)/);
    expect(await h.tdb.db.repos.runs.findById(res.body.id)).toMatchObject({ status: 'pending' });
    // Live events need the bus: a 503 before anything is streamed; the stored ones stay readable.
    const stream = await h.http.get(`/v1/runs/${res.body.id}/stream`).set(bearer(h.admin.token));
    expectProblem(stream, 503);
    expect(stream.body.detail).toBe('the run queue (Redis) is unreachable; try again');
    expect((await h.http.get(`/v1/runs/${res.body.id}/events`).set(bearer(h.admin.token))).status).toBe(200);
  });
});
