import { UnavailableError } from '../common/errors.js';

export interface ThrottleLimits {
  /** failed sign-ins allowed per username within the window */
  perUsername: number;
  /** failed sign-ins allowed per client address within the window */
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perUsername: 5, perAddress: 20, windowSeconds: 900 };

/**
 * Sliding-window counter of failed sign-ins, per username and per address, as sign-in uses it: the LoginThrottle
 * seam of @baton/queue, structurally (in-process in embedded mode, Redis in queue mode so replicas share counts).
 * Checked before the password is verified, so a locked account cannot be brute-forced even with the right password.
 */
export interface LoginThrottle {
  /**
   * Checks and counts in one atomic step: at a limit, the wait in seconds (nothing counted); otherwise this sign-in
   * is counted as a failure up front and `attempt` names it, to be taken back by recordSuccess if the password is
   * right. Guesses sent in parallel cannot all pass the check while their passwords are being verified.
   */
  begin(
    username: string,
    address: string,
  ): Promise<{ retryAfter: number; attempt?: undefined } | { retryAfter: 0; attempt: string }>;
  /** Forgets the username's failures and takes back the failure `begin` counted for this sign-in. */
  recordSuccess(username: string, begun: { address: string; attempt: string }): Promise<void>;
}

/**
 * Runs one throttle call. A throttle that cannot answer (Redis unreachable) fails the sign-in closed with 503:
 * skipping the check would open brute force during an outage, and the outage is no fault of the caller.
 */
export async function consultThrottle<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new UnavailableError('sign-in is unavailable: its rate limiter cannot be reached; try again shortly', {
      cause: err,
    });
  }
}
