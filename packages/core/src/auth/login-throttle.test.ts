import { describe, expect, it } from '@jest/globals';
import { createLoginThrottle } from './login-throttle.js';

describe('login throttle', () => {
  const limits = { perUsername: 3, perAddress: 5, windowSeconds: 60 };

  it('blocks a username after its failures and frees it when the window slides past', () => {
    let now = 1_000_000;
    const t = createLoginThrottle(limits, () => new Date(now));
    for (let i = 0; i < 3; i++) {
      expect(t.retryAfter('alice', '10.0.0.1')).toBe(0);
      t.recordFailure('alice', '10.0.0.1');
      now += 1000;
    }
    expect(t.retryAfter('alice', '10.0.0.2')).toBe(57);
    expect(t.retryAfter('ALICE', '10.0.0.2')).toBeGreaterThan(0);
    expect(t.retryAfter('bob', '10.0.0.2')).toBe(0);
    now += 57_000;
    expect(t.retryAfter('alice', '10.0.0.2')).toBe(0);
  });

  it('blocks an address that sprays many usernames', () => {
    const t = createLoginThrottle(limits, () => new Date(0));
    for (let i = 0; i < 5; i++) t.recordFailure(`user${i}`, '10.0.0.9');
    expect(t.retryAfter('someone-new', '10.0.0.9')).toBeGreaterThan(0);
    expect(t.retryAfter('someone-new', '10.0.0.10')).toBe(0);
  });

  it('forgets a username’s failures after a successful sign-in', () => {
    const t = createLoginThrottle(limits, () => new Date(0));
    t.recordFailure('carol', 'a');
    t.recordFailure('carol', 'b');
    t.recordSuccess('carol');
    t.recordFailure('carol', 'c');
    t.recordFailure('carol', 'd');
    expect(t.retryAfter('carol', 'e')).toBe(0);
  });
});
