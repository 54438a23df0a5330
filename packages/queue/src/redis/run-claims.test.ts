import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { TEST_REDIS_URL, deleteKeys, eventually, testPrefix } from '../testing/redis-test-support.js';
import { closeRedis, openRedis } from './redis-connection.js';
import { createRunClaims, InvalidRunClaimError, runClaimKey } from './run-claims.js';

describe('run claims', () => {
  let admin: Redis;
  const prefix = testPrefix();
  beforeAll(() => {
    admin = openRedis(TEST_REDIS_URL, 'run-claims-test');
  });
  afterAll(async () => {
    await deleteKeys(admin, prefix);
    await closeRedis(admin);
  });

  it('gives each run id + nonce to one claimant, across processes, for the ttl', async () => {
    const one = createRunClaims({ redisUrl: TEST_REDIS_URL, prefix });
    const two = createRunClaims({ redisUrl: TEST_REDIS_URL, prefix });
    try {
      expect(await one.claim('run_c1', 'nonceA', 60_000)).toBe(true);
      expect(await one.claim('run_c1', 'nonceA', 60_000)).toBe(false);
      expect(await two.claim('run_c1', 'nonceA', 60_000)).toBe(false);
      // Another enqueue of the same run (a new nonce) is another claim.
      expect(await two.claim('run_c1', 'nonceB', 60_000)).toBe(true);
      const ttl = await admin.pttl(runClaimKey(prefix, 'run_c1', 'nonceA'));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);

      // Redis forgot the key (an older snapshot restored): the process that claimed it still refuses it.
      await admin.del(runClaimKey(prefix, 'run_c1', 'nonceA'));
      expect(await one.claim('run_c1', 'nonceA', 60_000)).toBe(false);
      expect(await two.claim('run_c1', 'nonceA', 60_000)).toBe(true);

      // After its ttl the pair may be claimed again (the bundle no longer opens by then).
      expect(await one.claim('run_c2', 'nonceA', 50)).toBe(true);
      await eventually(async () => (await admin.exists(runClaimKey(prefix, 'run_c2', 'nonceA'))) === 0, 'the expiry');
      expect(await two.claim('run_c2', 'nonceA', 60_000)).toBe(true);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('counts a claim whose first reply was lost as won (its token is in Redis), and refuses bad input', async () => {
    const claims = createRunClaims({ redisUrl: TEST_REDIS_URL, prefix, timeoutMs: 1, attempts: 50 });
    try {
      // 1 ms per attempt: some attempts time out after their SET reached Redis; a later attempt finds its own token.
      expect(await claims.claim('run_c3', 'nonceA', 60_000)).toBe(true);
      await expect(claims.claim('run:bad', 'nonceA', 1_000)).rejects.toThrow(InvalidRunClaimError);
      await expect(claims.claim('run_c3', '', 1_000)).rejects.toThrow(InvalidRunClaimError);
    } finally {
      await claims.close();
    }
  });
});
