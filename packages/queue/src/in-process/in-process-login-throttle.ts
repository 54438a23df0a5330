import {
  checkThrottleLimits,
  type LoginThrottle,
  type LoginThrottleLimits,
  secondsUntilExpiry,
} from '../login-throttle.js';

/** Keys tracked at most: under a spray of random usernames the oldest key is forgotten first. */
const MAX_TRACKED_KEYS = 50_000;

/**
 * Embedded mode's LoginThrottle: failure times per key in a Map, in this process only. Each key keeps at most its
 * limit's newest failures: only those decide the wait.
 */
export function createInProcessLoginThrottle(limits: LoginThrottleLimits, clock: () => Date): LoginThrottle {
  checkThrottleLimits(limits);
  const failures = new Map<string, number[]>();
  const windowMs = limits.windowSeconds * 1000;

  function recent(key: string, now: number): number[] {
    const list = (failures.get(key) ?? []).filter((t) => now - t < windowMs);
    if (list.length) failures.set(key, list);
    else failures.delete(key);
    return list;
  }

  function waitFor(key: string, max: number, now: number): number {
    const list = recent(key, now);
    if (list.length < max) return 0;
    return secondsUntilExpiry(list[list.length - max]!, windowMs, now);
  }

  function record(key: string, keep: number, now: number): void {
    if (!failures.has(key) && failures.size >= MAX_TRACKED_KEYS) {
      const oldest = failures.keys().next().value;
      if (oldest !== undefined) failures.delete(oldest);
    }
    failures.set(key, [...recent(key, now), now].slice(-keep));
  }

  const userKey = (u: string) => `u:${u.toLowerCase()}`;
  const addrKey = (a: string) => `a:${a}`;

  return {
    async retryAfter(username, address) {
      const now = clock().getTime();
      return Math.max(
        waitFor(userKey(username), limits.perUsername, now),
        waitFor(addrKey(address), limits.perAddress, now),
      );
    },
    async recordFailure(username, address) {
      const now = clock().getTime();
      record(userKey(username), limits.perUsername, now);
      record(addrKey(address), limits.perAddress, now);
    },
    async recordSuccess(username) {
      failures.delete(userKey(username));
    },
    async close() {
      failures.clear();
    },
  };
}
