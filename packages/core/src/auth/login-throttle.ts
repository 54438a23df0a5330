import type { Clock } from '../common/clock.js';

export interface ThrottleLimits {
  /** failed sign-ins allowed per username within the window */
  perUsername: number;
  /** failed sign-ins allowed per client address within the window */
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perUsername: 5, perAddress: 20, windowSeconds: 900 };
const MAX_TRACKED_KEYS = 50_000;

/**
 * Sliding-window counter of failed sign-ins, per username and per address. Checked before the password
 * is verified, so a locked account cannot be brute-forced even with the right password.
 * Per process: with several API replicas each counts on its own (the limit multiplies by the replica count).
 */
export function createLoginThrottle(limits: ThrottleLimits, clock: Clock) {
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
    const oldestThatCounts = list[list.length - max]!;
    return Math.max(1, Math.ceil((oldestThatCounts + windowMs - now) / 1000));
  }

  const userKey = (u: string) => `u:${u.toLowerCase()}`;
  const addrKey = (a: string) => `a:${a}`;

  return {
    /** Seconds the caller must wait, or 0. */
    retryAfter(username: string, address: string): number {
      const now = clock().getTime();
      return Math.max(
        waitFor(userKey(username), limits.perUsername, now),
        waitFor(addrKey(address), limits.perAddress, now),
      );
    },
    recordFailure(username: string, address: string): void {
      const now = clock().getTime();
      for (const key of [userKey(username), addrKey(address)]) {
        if (!failures.has(key) && failures.size >= MAX_TRACKED_KEYS) {
          // Bound memory under a spray of random usernames: forget the oldest key.
          const oldest = failures.keys().next().value;
          if (oldest !== undefined) failures.delete(oldest);
        }
        failures.set(key, [...recent(key, now), now]);
      }
    },
    recordSuccess(username: string): void {
      failures.delete(userKey(username));
    },
  };
}
export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
