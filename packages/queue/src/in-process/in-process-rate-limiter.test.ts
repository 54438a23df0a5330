import { describe, expect, it } from '@jest/globals';
import { InvalidRateLimitsError } from '../rate-limit.js';
import { rateLimiterContract } from '../testing/rate-limiter.contract.js';
import { createInProcessRateLimiter } from './in-process-rate-limiter.js';

// One process, one limiter: both "replicas" are the same instance.
rateLimiterContract('in-process', async (limits, clock) => {
  const limiter = createInProcessRateLimiter({ limits, clock });
  return { a: limiter, b: limiter };
});

describe('in-process RateLimiter', () => {
  it('refuses limits that are not positive integers', () => {
    for (const bad of [
      { perWindow: 0, windowSeconds: 1 },
      { perWindow: 1.5, windowSeconds: 1 },
      { perWindow: 1, windowSeconds: -1 },
      { perWindow: 1, windowSeconds: Number.NaN },
    ])
      expect(() => createInProcessRateLimiter({ limits: bad, clock: () => new Date() })).toThrow(
        InvalidRateLimitsError,
      );
  });

  it('forgets keys whose takes have all aged out', async () => {
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const limiter = createInProcessRateLimiter({
      limits: { perWindow: 2, windowSeconds: 60 },
      clock: () => new Date(now),
    });
    for (let i = 0; i < 1000; i++) await limiter.take(`user-${i}`);
    now += 30_000;
    await limiter.take('user-0');
    expect(limiter.trackedKeys()).toBe(1000);
    // One window after the first thousand, only user-0 (taken again at 30 s) and the new key still count.
    now += 30_000;
    await limiter.take('someone-new');
    expect(limiter.trackedKeys()).toBe(2);
    expect(await limiter.take('user-0')).toBe(0);
    expect(await limiter.take('user-0')).toBe(30);
    now += 60_000;
    await limiter.take('last');
    expect(limiter.trackedKeys()).toBe(1);
    await limiter.close();
    expect(limiter.trackedKeys()).toBe(0);
  });
});
