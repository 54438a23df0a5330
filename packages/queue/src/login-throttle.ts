/**
 * The LoginThrottle seam (ARCHITECTURE.md, "Security": sign-in is rate limited per account and address): a
 * sliding window of failed sign-ins per username and per client address. Two implementations share one contract
 * suite (src/testing/login-throttle.contract.ts): in-process for embedded mode (one process counts), Redis for queue
 * mode (every API replica counts into the same sorted sets, so the limit holds across replicas, not per replica).
 */

export interface LoginThrottleLimits {
  /** failed sign-ins allowed per username (compared without case) within the window */
  perUsername: number;
  /** failed sign-ins allowed per client address within the window */
  perAddress: number;
  windowSeconds: number;
}

/** What {@link LoginThrottle.begin} answers: a wait (nothing counted), or the id of the failure counted up front. */
export type SignInAttempt = { retryAfter: number; attempt?: undefined } | { retryAfter: 0; attempt: string };

export interface LoginThrottle {
  /**
   * Seconds the caller must wait before trying this username from this address (the longer of the two waits),
   * or 0. A failure counts while `now - failedAt < window`; the wait ends when enough of them have aged out.
   */
  retryAfter(username: string, address: string): Promise<number>;
  /**
   * Checks and counts in one atomic step, for a sign-in about to verify a password: at a limit, answers the wait and
   * counts nothing; otherwise counts this sign-in as a failure up front and answers its id. So however many
   * sign-ins run at once (on however many replicas), no more than the limit get past the check in a window:
   * checking first and counting after the password check would let every guess in flight through.
   */
  begin(username: string, address: string): Promise<SignInAttempt>;
  /** Counts one failed sign-in against the username and against the address. */
  recordFailure(username: string, address: string): Promise<void>;
  /**
   * Forgets the username's failures (the address keeps its count: one good sign-in does not excuse a spray), and
   * takes back the failure {@link begin} counted up front for this sign-in, when given.
   */
  recordSuccess(username: string, begun?: { address: string; attempt: string }): Promise<void>;
  /** Releases what the throttle holds (a Redis connection); idempotent. */
  close(): Promise<void>;
}

/** The wait, in whole seconds (at least 1), until the failure at `failedAtMs` stops counting. */
export function secondsUntilExpiry(failedAtMs: number, windowMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((failedAtMs + windowMs - nowMs) / 1000));
}

export class InvalidThrottleLimitsError extends Error {
  override readonly name = 'InvalidThrottleLimitsError';
  constructor(detail: string) {
    super(`invalid sign-in throttle limits: ${detail}`);
  }
}

export function checkThrottleLimits(limits: LoginThrottleLimits): void {
  for (const key of ['perUsername', 'perAddress', 'windowSeconds'] as const) {
    if (!Number.isInteger(limits[key]) || limits[key] < 1)
      throw new InvalidThrottleLimitsError(`${key} must be a positive integer`);
  }
}
