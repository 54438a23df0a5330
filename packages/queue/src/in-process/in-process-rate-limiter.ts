import { checkRateLimits, type RateLimiter, type RateLimits, secondsUntilTakeExpires } from '../rate-limit.js';

export interface InProcessRateLimiterOptions {
  limits: RateLimits;
  /** Take times come from here, so tests can move time. */
  clock: () => Date;
}

export interface InProcessRateLimiter extends RateLimiter {
  /** Keys holding takes that may still count (for tests of the memory bound). */
  trackedKeys(): number;
}

/**
 * Embedded mode's RateLimiter: each key's take times (oldest first, at most the limit) in a Map, in this process
 * only; each call runs to completion before another starts, which makes check-and-count atomic.
 *
 * Memory stays bounded by the keys that took something within the last window: a key is re-inserted whenever it
 * counts a take, so the Map is ordered by each key's newest take, and every take first drops the keys at the front
 * whose newest take has aged out (amortised constant work, no timer).
 */
export function createInProcessRateLimiter(opts: InProcessRateLimiterOptions): InProcessRateLimiter {
  checkRateLimits(opts.limits);
  const { perWindow, windowSeconds } = opts.limits;
  const windowMs = windowSeconds * 1000;
  const takes = new Map<string, number[]>();

  function dropExpiredKeys(now: number): void {
    for (const [key, list] of takes) {
      if (now - list[list.length - 1]! < windowMs) break;
      takes.delete(key);
    }
  }

  return {
    async take(key) {
      const now = opts.clock().getTime();
      dropExpiredKeys(now);
      const live = (takes.get(key) ?? []).filter((at) => now - at < windowMs);
      if (live.length >= perWindow) {
        takes.set(key, live);
        return secondsUntilTakeExpires(live[live.length - perWindow]!, windowSeconds, now);
      }
      takes.delete(key);
      takes.set(key, [...live, now]);
      return 0;
    },
    trackedKeys: () => takes.size,
    async close() {
      takes.clear();
    },
  };
}
