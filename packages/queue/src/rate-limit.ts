/**
 * The RateLimiter seam: at most `perWindow` takes per key within any `windowSeconds` (a sliding window), for limits
 * such as the AI questions a user may ask a minute. Two implementations share one contract suite
 * (src/testing/rate-limiter.contract.ts): in-process for embedded mode, Redis for queue mode (every API replica
 * counts into the same sorted set, so the limit holds across the deployment, not per replica).
 */

export interface RateLimits {
  /** takes allowed per key within the window */
  perWindow: number;
  windowSeconds: number;
}

export interface RateLimiter {
  /**
   * Checks and counts in one atomic step: 0 when this take is allowed (and now counted), else the seconds (at least
   * 1, at most the window) until the oldest take that fills the window ages out; a refused take counts nothing, so
   * retrying early does not push the wait further out.
   */
  take(key: string): Promise<number>;
  /** Releases what the limiter holds (a Redis connection, the counts); idempotent. */
  close(): Promise<void>;
}

export class InvalidRateLimitsError extends Error {
  override readonly name = 'InvalidRateLimitsError';
  constructor(detail: string) {
    super(`invalid rate limits: ${detail}`);
  }
}

export function checkRateLimits(limits: RateLimits): void {
  for (const key of ['perWindow', 'windowSeconds'] as const) {
    if (!Number.isInteger(limits[key]) || limits[key] < 1)
      throw new InvalidRateLimitsError(`${key} must be a positive integer`);
  }
}

/**
 * The wait in whole seconds until the take at `takenAtMs` stops counting: at least 1 (a Retry-After of 0 would invite
 * an immediate retry that is still refused), at most the window (a replica whose clock runs ahead may have counted
 * a take "in the future").
 */
export function secondsUntilTakeExpires(takenAtMs: number, windowSeconds: number, nowMs: number): number {
  const ms = takenAtMs + windowSeconds * 1000 - nowMs;
  return Math.min(windowSeconds, Math.max(1, Math.ceil(ms / 1000)));
}
