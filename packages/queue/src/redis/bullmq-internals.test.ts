// Pins the BullMQ key layout bullmq-internals.ts reads against a real Redis: a job added by BullMQ's Queue and
// taken by its Worker must sit in exactly the keys, of exactly the types, the module expects. A bullmq upgrade
// that moves any of them fails here, not as a lease nobody reports.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { deleteKeys, TEST_REDIS_URL, testPrefix } from '../testing/redis-test-support.js';
import { BULLMQ_LAYOUT_VERSION, bullmqQueueKeys, createBullmqInternals, HOLDER_FIELD } from './bullmq-internals.js';
import { closeRedis, openRedis } from './redis-connection.js';

const QUEUE = 'runs';
const OTHER_QUEUE = 'runs.gpu';
const LOCK_MS = 30_000;

describe('BullMQ internals (the layout of the pinned bullmq)', () => {
  const prefix = testPrefix();
  const keys = bullmqQueueKeys(prefix, QUEUE);
  let redis: Redis;
  let queue: Queue;
  let worker: Worker;

  beforeAll(() => {
    redis = openRedis(TEST_REDIS_URL, 'bullmq-internals-test');
    queue = new Queue(QUEUE, { connection: redis, prefix });
    // Fetched by hand, as the run queue's leasing does: no processor, no lock renewal, no stalled checker.
    worker = new Worker(QUEUE, null, {
      connection: redis,
      prefix,
      autorun: false,
      lockDuration: LOCK_MS,
      skipLockRenewal: true,
      skipStalledCheck: true,
    });
  });
  afterAll(async () => {
    await worker.close(true);
    await queue.close();
    await deleteKeys(redis, prefix);
    await closeRedis(redis);
  });

  it('is the bullmq version the layout was pinned for (re-check this file after an upgrade)', () => {
    const installed = (createRequire(import.meta.url)('bullmq/package.json') as { version: string }).version;
    expect(installed).toBe(BULLMQ_LAYOUT_VERSION);
  });

  it('names the keys ${prefix}:${queue}:wait | active | <job id> | <job id>:lock', () => {
    expect(keys).toMatchObject({ wait: `${prefix}:runs:wait`, active: `${prefix}:runs:active` });
    expect(keys.job('run_a')).toBe(`${prefix}:runs:run_a`);
    expect(keys.lock('run_a')).toBe(`${prefix}:runs:run_a:lock`);
  });

  it('finds added jobs where it reads them: a wait list (newest on the left) and a job hash with its creation time', async () => {
    const internals = createBullmqInternals(redis, prefix);
    const a = await queue.add('run', { runId: 'run_a' }, { jobId: 'run_a' });
    const b = await queue.add('run', { runId: 'run_b' }, { jobId: 'run_b' });

    expect(await redis.type(keys.wait)).toBe('list');
    expect(await redis.lrange(keys.wait, 0, -1)).toEqual(['run_b', 'run_a']);
    expect(await redis.type(keys.job('run_a'))).toBe('hash');
    expect(await redis.hget(keys.job('run_a'), 'timestamp')).toBe(String(a.timestamp));

    expect(await internals.listedOldestFirst([OTHER_QUEUE, QUEUE], 'wait')).toEqual([
      [],
      [
        { queueName: QUEUE, jobId: 'run_a' },
        { queueName: QUEUE, jobId: 'run_b' },
      ],
    ]);
    expect(await internals.oldestWaiting([QUEUE, OTHER_QUEUE])).toEqual(['run_a', undefined]);
    expect(
      await internals.createdAt([
        { queueName: QUEUE, jobId: 'run_b' },
        { queueName: QUEUE, jobId: 'run_gone' },
      ]),
    ).toEqual([b.timestamp, Number.MAX_SAFE_INTEGER]);
    expect(await internals.queueHolding([OTHER_QUEUE, QUEUE], 'run_a')).toBe(QUEUE);
    expect(await internals.queueHolding([OTHER_QUEUE, QUEUE], 'run_gone')).toBeUndefined();
  });

  it('finds a taken job where it reads it: the active list, a lock string holding the token with the lease as TTL, and its holder', async () => {
    const internals = createBullmqInternals(redis, prefix);
    const token = 'token-1';
    const job = await worker.getNextJob(token, { block: false });
    expect(job?.id).toBe('run_a');

    expect(await redis.type(keys.active)).toBe('list');
    expect(await redis.lrange(keys.active, 0, -1)).toEqual(['run_a']);
    expect(await redis.lrange(keys.wait, 0, -1)).toEqual(['run_b']);
    expect(await redis.type(keys.lock('run_a'))).toBe('string');
    expect(await redis.get(keys.lock('run_a'))).toBe(token);
    const ttl = await redis.pttl(keys.lock('run_a'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(LOCK_MS);

    const { owner, ttlMs } = await internals.lockOwnerAndTtl(QUEUE, 'run_a');
    expect(owner).toBe(token);
    expect(ttlMs).toBeGreaterThan(0);
    expect(await internals.lockOwner(QUEUE, 'run_a')).toBe(token);
    expect(await internals.lockTtlMs(QUEUE, 'run_a')).toBeGreaterThan(0);
    expect(await internals.listedOldestFirst([QUEUE], 'active')).toEqual([[{ queueName: QUEUE, jobId: 'run_a' }]]);
    expect(await internals.activeWithoutLock(QUEUE)).toEqual([]);

    await internals.recordHolder(redis.pipeline(), QUEUE, 'run_a', 'worker-1').exec();
    expect(await redis.hget(keys.job('run_a'), HOLDER_FIELD)).toBe('worker-1');
    expect(await internals.holderOf(QUEUE, 'run_a')).toBe('worker-1');
    const [state] = await internals.leaseStates([{ queueName: QUEUE, jobId: 'run_a' }]);
    expect(state?.holder).toBe('worker-1');
    expect(state?.ttlMs).toBeGreaterThan(0);
  });

  it('claims a lost lease once per enqueue, and fails the job without its lock out of the active list', async () => {
    const internals = createBullmqInternals(redis, prefix);
    const marker = `${prefix}:lost:run_a`;
    // A lock still held is no loss.
    expect(await internals.claimLostReport(QUEUE, 'run_a', marker, 60)).toBe(false);
    // The lease runs out: BullMQ's lock key disappears.
    await redis.del(keys.lock('run_a'));
    expect(await internals.activeWithoutLock(QUEUE)).toEqual(['run_a']);
    expect(await internals.leaseStates([{ queueName: QUEUE, jobId: 'run_a' }])).toEqual([
      { ttlMs: -2, holder: 'worker-1' },
    ]);
    expect(await internals.lockOwnerAndTtl(QUEUE, 'run_a')).toEqual({ owner: null, ttlMs: -2 });

    expect(await internals.claimLostReport(QUEUE, 'run_a', marker, 60)).toBe(true);
    expect(await redis.get(marker)).toBe(await redis.hget(keys.job('run_a'), 'timestamp'));
    expect(await internals.claimLostReport(QUEUE, 'run_a', marker, 60)).toBe(false);

    const job = await queue.getJob('run_a');
    await internals.failUnlocked(job!, new Error('lease expired'));
    expect(await queue.getJobState('run_a')).toBe('failed');
    expect(await redis.lrange(keys.active, 0, -1)).toEqual([]);
    // Failed is not active: nothing left to claim.
    expect(await internals.claimLostReport(QUEUE, 'run_a', `${prefix}:lost:other`, 60)).toBe(false);
  });
});
