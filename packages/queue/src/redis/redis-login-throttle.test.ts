import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { LoginThrottle, LoginThrottleLimits } from '../login-throttle.js';
import { loginThrottleContract } from '../testing/index.js';
import { deleteKeys, eventually, startRedisProxy, TEST_REDIS_URL, testPrefix } from '../testing/redis-test-support.js';
import { createRedisLoginThrottle, type RedisLoginThrottleOptions } from './redis-login-throttle.js';
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

// Two throttles with one prefix, each with its own connection, stand for two API replicas.
loginThrottleContract('redis', async (limits, clock) => {
  const prefix = newPrefix();
  return {
    a: createRedisLoginThrottle({ redisUrl: TEST_REDIS_URL, prefix, limits, clock }),
    b: createRedisLoginThrottle({ redisUrl: TEST_REDIS_URL, prefix, limits, clock }),
  };
});

describe('Redis LoginThrottle', () => {
  const limits: LoginThrottleLimits = { perUsername: 3, perAddress: 4, windowSeconds: 900 };
  const open: LoginThrottle[] = [];
  const throttle = (o: Partial<RedisLoginThrottleOptions> & { prefix: string }): LoginThrottle => {
    const t = createRedisLoginThrottle({ redisUrl: TEST_REDIS_URL, limits, clock: () => new Date(), ...o });
    open.push(t);
    return t;
  };
  afterAll(async () => {
    for (const t of open) await t.close();
  });

  it('keeps its keys under <prefix>:login:, hashes usernames, bounds each key by its limit and lets it expire', async () => {
    const prefix = newPrefix();
    const t = throttle({ prefix });
    for (let i = 0; i < 10; i++) await t.recordFailure('Secret-Looking-Name', '192.0.2.7');
    const keys = (await admin.keys(`${prefix}*`)).sort();
    const hashed = crypto.createHash('sha256').update('secret-looking-name').digest('hex');
    expect(keys).toEqual([`${prefix}:login:a:192.0.2.7`, `${prefix}:login:u:${hashed}`].sort());
    expect(keys.join(' ').toLowerCase()).not.toContain('secret-looking-name');
    // Only the newest `limit` failures can decide a wait: older ones are dropped as new ones come.
    expect(await admin.zcard(`${prefix}:login:u:${hashed}`)).toBe(3);
    expect(await admin.zcard(`${prefix}:login:a:192.0.2.7`)).toBe(4);
    for (const key of keys) {
      const ttl = await admin.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(900_000);
    }
    await t.recordSuccess('SECRET-looking-name');
    expect(await admin.exists(`${prefix}:login:u:${hashed}`)).toBe(0);
    expect(await admin.exists(`${prefix}:login:a:192.0.2.7`)).toBe(1);
  });

  it('keeps prefixes apart: another deployment on the same Redis counts on its own', async () => {
    const mine = throttle({ prefix: newPrefix() });
    const theirs = throttle({ prefix: newPrefix() });
    for (let i = 0; i < 3; i++) await mine.recordFailure('heidi', '10.1.0.1');
    expect(await mine.retryAfter('heidi', '10.1.0.2')).toBeGreaterThan(0);
    expect(await theirs.retryAfter('heidi', '10.1.0.2')).toBe(0);
  });

  it('fails with RedisUnavailableError while Redis is unreachable, and works again when it is back', async () => {
    const proxy = await startRedisProxy();
    try {
      const prefix = newPrefix();
      const t = throttle({ prefix, redisUrl: proxy.url, timeoutMs: 1_000 });
      await t.recordFailure('ivan', '10.2.0.1');
      await proxy.down();
      await expect(t.retryAfter('ivan', '10.2.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(t.recordFailure('ivan', '10.2.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(t.recordSuccess('ivan')).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(t.begin('ivan', '10.2.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
      await proxy.up();
      await eventually(
        () =>
          t.retryAfter('ivan', '10.2.0.1').then(
            () => true,
            () => false,
          ),
        'the throttle to reconnect',
      );
      // The failure recorded before the outage is still there.
      await t.recordFailure('ivan', '10.2.0.1');
      await t.recordFailure('ivan', '10.2.0.1');
      expect(await t.retryAfter('ivan', '10.2.0.9')).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('fails with RedisUnavailableError when Redis never answered', async () => {
    const proxy = await startRedisProxy();
    const url = proxy.url;
    await proxy.close();
    const t = throttle({ prefix: newPrefix(), redisUrl: url, timeoutMs: 300 });
    await expect(t.retryAfter('judy', '10.3.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(t.recordFailure('judy', '10.3.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(t.begin('judy', '10.3.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
  });

  it('refuses calls once closed', async () => {
    const t = throttle({ prefix: newPrefix() });
    await t.retryAfter('kim', '10.4.0.1');
    await t.close();
    await t.close();
    await expect(t.retryAfter('kim', '10.4.0.1')).rejects.toBeInstanceOf(RedisUnavailableError);
  });
});
