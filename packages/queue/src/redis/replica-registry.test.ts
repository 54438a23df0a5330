import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { closeRedis, openRedis } from './redis-connection.js';
import { createLeaderLease } from './redis-leader.js';
import { createReplicaRegistry, ReplicaConflictError } from './replica-registry.js';

const URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `baton_t_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
let redis: Redis;

beforeAll(() => {
  redis = openRedis(URL, 'replica-registry-test');
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await closeRedis(redis);
});

describe('replica registry', () => {
  it('lets PostgreSQL replicas share a prefix, and refuses SQLite beside anyone', async () => {
    const p = `${prefix}:a`;
    const a = createReplicaRegistry({ redis, prefix: p, name: 'a', database: 'postgres' });
    const b = createReplicaRegistry({ redis, prefix: p, name: 'b', database: 'postgres' });
    await a.join();
    await b.join();
    const s = createReplicaRegistry({ redis, prefix: p, name: 's', database: 'sqlite' });
    await expect(s.join()).rejects.toThrow(ReplicaConflictError);
    await expect(s.join()).rejects.toThrow(/already serve\(s\) queue prefix/);
    await a.leave();
    await b.leave();
    await s.join();
    const c = createReplicaRegistry({ redis, prefix: p, name: 'c', database: 'postgres' });
    await expect(c.join()).rejects.toThrow(/\(s\) runs on SQLite with queue prefix/);
    // Another prefix is another installation.
    await createReplicaRegistry({ redis, prefix: `${prefix}:other`, name: 'c', database: 'postgres' }).join();
  });

  it('is not refused by the fresh announcement of a replica known to be gone (a crash, then a quick restart)', async () => {
    const p = `${prefix}:ghost`;
    await createReplicaRegistry({ redis, prefix: p, name: 'box/111', database: 'sqlite' }).join();
    const restarted = { redis, prefix: p, name: 'box/222', database: 'sqlite' as const };
    await expect(createReplicaRegistry(restarted).join()).rejects.toThrow(/box\/111/);
    await createReplicaRegistry({ ...restarted, isGone: (a) => a.name === 'box/111' }).join();
    expect(Object.keys(await redis.hgetall(`${p}:replicas`))).toEqual(['box/222']);
  });

  it('ignores a replica that stopped beating, and forgets one gone for a day', async () => {
    const p = `${prefix}:b`;
    let t = Date.parse('2026-01-01T00:00:00Z');
    const now = () => t;
    await createReplicaRegistry({ redis, prefix: p, name: 'old', database: 'sqlite', now }).join();
    t += 16_000;
    await createReplicaRegistry({ redis, prefix: p, name: 'new', database: 'postgres', now }).join();
    expect(Object.keys(await redis.hgetall(`${p}:replicas`)).sort()).toEqual(['new', 'old']);
    t += 24 * 3600_000 - 10_000;
    const fresh = createReplicaRegistry({ redis, prefix: p, name: 'new', database: 'postgres', now });
    await fresh.beat();
    t += 20_000;
    await createReplicaRegistry({ redis, prefix: p, name: 'third', database: 'postgres', now }).join();
    expect(Object.keys(await redis.hgetall(`${p}:replicas`)).sort()).toEqual(['new', 'third']);
  });
});

describe('leader lease', () => {
  it('has one leader at a time, renews for its holder, and passes on when the holder resigns or goes silent', async () => {
    const p = `${prefix}:l`;
    const a = createLeaderLease({ redis, prefix: p, holder: 'a', ttlMs: 300 });
    const b = createLeaderLease({ redis, prefix: p, holder: 'b', ttlMs: 300 });
    expect(await a.tryLead()).toBe(true);
    expect(await b.tryLead()).toBe(false);
    expect(await a.tryLead()).toBe(true);
    await a.resign();
    expect(await b.tryLead()).toBe(true);
    expect(await a.tryLead()).toBe(false);
    // b goes silent: its key expires and a takes over; b's late renewal does not take it back.
    await new Promise((r) => setTimeout(r, 400));
    expect(await a.tryLead()).toBe(true);
    expect(await b.tryLead()).toBe(false);
    await b.resign();
    expect(await redis.get(`${p}:leader`)).toBe('a');
  });
});
