import crypto from 'node:crypto';
import {
  checkThrottleLimits,
  type LoginThrottle,
  type LoginThrottleLimits,
  secondsUntilExpiry,
} from '../login-throttle.js';

/** Keys tracked at most: under a spray of random usernames the oldest key is forgotten first. */
const MAX_TRACKED_KEYS = 50_000;

interface Failure {
  at: number;
  id: string;
}

/**
 * Embedded mode's LoginThrottle: failures per key in a Map, in this process only (each call runs to completion
 * before another starts, which makes `begin` atomic). Each key keeps at most its limit's newest failures: only those
 * decide the wait.
 */
export function createInProcessLoginThrottle(limits: LoginThrottleLimits, clock: () => Date): LoginThrottle {
  checkThrottleLimits(limits);
  const failures = new Map<string, Failure[]>();
  const windowMs = limits.windowSeconds * 1000;

  function recent(key: string, now: number): Failure[] {
    const list = (failures.get(key) ?? []).filter((f) => now - f.at < windowMs);
    if (list.length) failures.set(key, list);
    else failures.delete(key);
    return list;
  }

  function waitFor(key: string, max: number, now: number): number {
    const list = recent(key, now);
    if (list.length < max) return 0;
    return secondsUntilExpiry(list[list.length - max]!.at, windowMs, now);
  }

  function record(key: string, keep: number, failure: Failure): void {
    if (!failures.has(key) && failures.size >= MAX_TRACKED_KEYS) {
      const oldest = failures.keys().next().value;
      if (oldest !== undefined) failures.delete(oldest);
    }
    failures.set(key, [...recent(key, failure.at), failure].slice(-keep));
  }

  const userKey = (u: string) => `u:${u.toLowerCase()}`;
  const addrKey = (a: string) => `a:${a}`;
  const waitNow = (username: string, address: string, now: number) =>
    Math.max(waitFor(userKey(username), limits.perUsername, now), waitFor(addrKey(address), limits.perAddress, now));
  const recordNow = (username: string, address: string, failure: Failure) => {
    record(userKey(username), limits.perUsername, failure);
    record(addrKey(address), limits.perAddress, failure);
  };

  return {
    async retryAfter(username, address) {
      return waitNow(username, address, clock().getTime());
    },
    async begin(username, address) {
      const now = clock().getTime();
      const wait = waitNow(username, address, now);
      if (wait > 0) return { retryAfter: wait };
      const attempt = crypto.randomUUID();
      recordNow(username, address, { at: now, id: attempt });
      return { retryAfter: 0, attempt };
    },
    async recordFailure(username, address) {
      const now = clock().getTime();
      recordNow(username, address, { at: now, id: crypto.randomUUID() });
    },
    async recordSuccess(username, begun) {
      failures.delete(userKey(username));
      if (!begun) return;
      const list = failures.get(addrKey(begun.address));
      const rest = list?.filter((f) => f.id !== begun.attempt);
      if (rest?.length) failures.set(addrKey(begun.address), rest);
      else if (list) failures.delete(addrKey(begun.address));
    },
    async close() {
      failures.clear();
    },
  };
}
