import { describe, expect, it } from '@jest/globals';
import { InvalidThrottleLimitsError } from '../login-throttle.js';
import { loginThrottleContract } from '../testing/index.js';
import { createInProcessLoginThrottle } from './in-process-login-throttle.js';

// One process, one throttle: both "replicas" are the same instance.
loginThrottleContract('in-process', async (limits, clock) => {
  const throttle = createInProcessLoginThrottle(limits, clock);
  return { a: throttle, b: throttle };
});

describe('in-process LoginThrottle', () => {
  it('refuses limits that are not positive integers', () => {
    for (const bad of [
      { perUsername: 0, perAddress: 1, windowSeconds: 1 },
      { perUsername: 1, perAddress: 1.5, windowSeconds: 1 },
      { perUsername: 1, perAddress: 1, windowSeconds: -1 },
    ])
      expect(() => createInProcessLoginThrottle(bad, () => new Date())).toThrow(InvalidThrottleLimitsError);
  });
});
