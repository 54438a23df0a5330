import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { RateLimiter, RateLimits } from '../rate-limit.js';
import { InvalidRateLimitsError } from '../rate-limit.js';
import { rateLimiterContract } from '../testing/rate-limiter.contract.js';
import { deleteKeys, eventually, startRedisProxy, TEST_REDIS_URL, testPrefix } from '../testing/redis-test-support.js';
import { createRedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
import { RedisUnavailableError } from './redis-run-queue-errors.js';

const prefixes: string[] = [];
const newPrefix = (): string => {
  const prefix = testPrefix();
  prefixes.push(prefix);
  return prefix;
};
let admin: Redis;
beforeAll(() => {
  admin = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(admin, prefix);
  await admin.quit();
});

// Two limiters with one prefix and name, each with its own connection, stand for two API replicas.
rateLimiterContract('redis', async (limits, clock) => {
  const prefix = newPrefix();
  return {
    a: createRedisRateLimiter({ redisUrl: TEST_REDIS_URL, prefix, name: 'ai-ask', limits, clock }),
    b: createRedisRateLimiter({ redisUrl: TEST_REDIS_URL, prefix, name: 'ai-ask', limits, clock }),
  };
});

describe('Redis RateLimiter', () => {
  const limits: RateLimits = { perWindow: 3, windowSeconds: 60 };
  const open: RateLimiter[] = [];
  const limiter = (o: Partial<RedisRateLimiterOptions> & { prefix: string }): RateLimiter => {
    const l = createRedisRateLimiter({
      redisUrl: TEST_REDIS_URL,
      name: 'ai-ask',
      limits,
      clock: () => new Date(),
      ...o,
    });
    open.push(l);
    return l;
  };
  afterAll(async () => {
    for (const l of open) await l.close();
  });

  it('refuses limits that are not positive integers', () => {
    expect(() =>
      createRedisRateLimiter({
        redisUrl: TEST_REDIS_URL,
        prefix: 'unused',
        name: 'ai-ask',
        limits: { perWindow: 0, windowSeconds: 60 },
        clock: () => new Date(),
      }),
    ).toThrow(InvalidRateLimitsError);
  });

  it('keeps one sorted set per key under <prefix>:rate:<name>:, bounded by the limit, expiring after the window', async () => {
    const prefix = newPrefix();
    const l = limiter({ prefix });
    for (let i = 0; i < 10; i++) await l.take('user-1');
    await l.take('user-2');
    const keys = (await admin.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}:rate:ai-ask:user-1`, `${prefix}:rate:ai-ask:user-2`]);
    // Refused takes are not stored: the set holds at most the limit.
    expect(await admin.zcard(`${prefix}:rate:ai-ask:user-1`)).toBe(3);
    expect(await admin.zcard(`${prefix}:rate:ai-ask:user-2`)).toBe(1);
    for (const key of keys) {
      const ttl = await admin.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
  });

  it('drops takes that aged out when it next counts', async () => {
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const prefix = newPrefix();
    const l = limiter({ prefix, clock: () => new Date(now) });
    for (let i = 0; i < 3; i++) await l.take('user-1');
    now += 60_000;
    expect(await l.take('user-1')).toBe(0);
    expect(await admin.zcard(`${prefix}:rate:ai-ask:user-1`)).toBe(1);
  });

  it('counts apart under other prefixes and other names', async () => {
    const prefix = newPrefix();
    const mine = limiter({ prefix });
    const otherName = limiter({ prefix, name: 'other' });
    const otherDeployment = limiter({ prefix: newPrefix() });
    for (let i = 0; i < 3; i++) await mine.take('ivan');
    expect(await mine.take('ivan')).toBeGreaterThan(0);
    expect(await otherName.take('ivan')).toBe(0);
    expect(await otherDeployment.take('ivan')).toBe(0);
  });

  it('fails with RedisUnavailableError while Redis is unreachable, and works again when it is back', async () => {
    const proxy = await startRedisProxy();
    try {
      const prefix = newPrefix();
      const l = limiter({ prefix, redisUrl: proxy.url, timeoutMs: 1_000 });
      expect(await l.take('judy')).toBe(0);
      await proxy.down();
      await expect(l.take('judy')).rejects.toBeInstanceOf(RedisUnavailableError);
      await proxy.up();
      await eventually(
        () =>
          l.take('probe').then(
            () => true,
            () => false,
          ),
        'the limiter to reconnect',
      );
      // The take counted before the outage is still there (one in flight as the connection dropped may be too: an
      // error from Redis does not say the script did not run), so the limit of 3 is reached within two more takes.
      const waits = [await l.take('judy'), await l.take('judy'), await l.take('judy')];
      expect(waits[0]).toBe(0);
      expect(waits[2]).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('fails with RedisUnavailableError when Redis never answered', async () => {
    const proxy = await startRedisProxy();
    const url = proxy.url;
    await proxy.close();
    const l = limiter({ prefix: newPrefix(), redisUrl: url, timeoutMs: 300 });
    await expect(l.take('kim')).rejects.toBeInstanceOf(RedisUnavailableError);
  });

  it('refuses takes once closed', async () => {
    const l = limiter({ prefix: newPrefix() });
    await l.take('lee');
    await l.close();
    await l.close();
    await expect(l.take('lee')).rejects.toBeInstanceOf(RedisUnavailableError);
  });
});
