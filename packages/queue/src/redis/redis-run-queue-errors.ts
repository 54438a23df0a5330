/** Errors only the Redis RunQueue throws, so callers (routes, the worker daemon) can tell bad input from an outage. */

/** Redis cannot be reached right now: the caller may retry later (the recovery sweep re-enqueues pending runs). */
export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
  constructor(detail: string) {
    super(`Redis is unavailable: ${detail}`);
  }
}

export class InvalidRunQueueOptionsError extends Error {
  override readonly name = 'InvalidRunQueueOptionsError';
  constructor(detail: string) {
    super(`invalid run queue options: ${detail}`);
  }
}
