import crypto from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  createWorkerRegistry,
  type WorkerHeartbeat,
  WorkerHeartbeatError,
  type WorkerRegistry,
} from './worker-registry.js';

const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

// One admin connection for the test's own look at the keys and the clean-up.
const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });

async function deleteKeys(prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 200);
    if (keys.length) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const beatOf = (name: string, extra: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat => ({
  name,
  host: 'host-a',
  pid: 4242,
  labels: ['linux'],
  capacity: 2,
  running: ['run_1'],
  last_heartbeat: '2030-01-02T03:04:05.000Z',
  lease_expires_at: '2030-01-02T03:04:35.000Z',
  started_at: '2030-01-02T03:00:00.000Z',
  ...extra,
});

describe('createWorkerRegistry (real Redis)', () => {
  let prefix: string;
  let registry: WorkerRegistry;

  beforeEach(() => {
    prefix = `baton_t_${Date.now()}_${crypto.randomBytes(4).toString('hex')}`;
    registry = createWorkerRegistry({ redisUrl: REDIS_URL, prefix });
  });

  afterEach(async () => {
    await registry.close();
    await deleteKeys(prefix);
  });

  afterAll(async () => {
    await admin.quit();
  });

  it('stores each beat under ${prefix}:workers, one field per worker name, the latest beat winning', async () => {
    await registry.beat(beatOf('w1'));
    await registry.beat(beatOf('w2', { labels: [], running: [], lease_expires_at: null }));
    await registry.beat(beatOf('w1', { running: [], last_heartbeat: '2030-01-02T03:04:10.000Z', stopped: true }));

    expect((await admin.hkeys(`${prefix}:workers`)).sort()).toEqual(['w1', 'w2']);
    expect(await registry.list()).toEqual([
      beatOf('w1', { running: [], last_heartbeat: '2030-01-02T03:04:10.000Z', stopped: true }),
      beatOf('w2', { labels: [], running: [], lease_expires_at: null }),
    ]);
  });

  it('keeps installations apart by prefix', async () => {
    const other = createWorkerRegistry({ redisUrl: REDIS_URL, prefix: `${prefix}_other` });
    try {
      await other.beat(beatOf('elsewhere'));
      await registry.beat(beatOf('here'));
      expect((await registry.list()).map((b) => b.name)).toEqual(['here']);
      expect((await other.list()).map((b) => b.name)).toEqual(['elsewhere']);
    } finally {
      await other.close();
      await deleteKeys(`${prefix}_other`);
    }
  });

  it('skips malformed entries and entries whose JSON names another worker', async () => {
    await registry.beat(beatOf('good'));
    await admin.hset(`${prefix}:workers`, 'not-json', '{oops');
    await admin.hset(`${prefix}:workers`, 'array', '[]');
    await admin.hset(`${prefix}:workers`, 'no-pid', JSON.stringify({ ...beatOf('no-pid'), pid: 'x' }));
    await admin.hset(
      `${prefix}:workers`,
      'bad-time',
      JSON.stringify(beatOf('bad-time', { last_heartbeat: 'yesterday' })),
    );
    await admin.hset(`${prefix}:workers`, 'impostor', JSON.stringify(beatOf('good')));
    await admin.hset(`${prefix}:workers`, 'extra', JSON.stringify({ ...beatOf('extra'), secret: 'dropped' }));

    const listed = await registry.list();
    expect(listed.map((b) => b.name)).toEqual(['extra', 'good']);
    expect(listed[0]).not.toHaveProperty('secret');
  });

  it('refuses a heartbeat that is not one with a named error and stores nothing', async () => {
    await expect(registry.beat(beatOf(''))).rejects.toThrow(WorkerHeartbeatError);
    await expect(registry.beat({ ...beatOf('w'), running: 'run_1' } as unknown as WorkerHeartbeat)).rejects.toThrow(
      /running/,
    );
    await expect(registry.beat(beatOf('w', { started_at: 'never' }))).rejects.toThrow(/started_at/);
    expect(await admin.exists(`${prefix}:workers`)).toBe(0);
  });

  it('lists nothing when no worker ever beat', async () => {
    expect(await registry.list()).toEqual([]);
  });
});
