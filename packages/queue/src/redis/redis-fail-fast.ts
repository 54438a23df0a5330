// Calls on one Redis connection that fail fast as RedisUnavailableError: a request must answer 503 at once while
// Redis is away, not wait behind a reconnect. Shared by the sign-in throttle and the rate limiter.
import type { Redis } from 'ioredis';
import { withTimeout } from '../timers.js';
import { closeRedis, whenFirstReady } from './redis-connection.js';
import { RedisUnavailableError } from './redis-run-queue-errors.js';

export function createFailFastCalls(redis: Redis, opts: { timeoutMs: number; closedMessage: string }) {
  const { timeoutMs } = opts;
  let closed = false;
  // One wait for the first connection, shared by the calls that arrive meanwhile; forgotten if it fails.
  let firstReady: Promise<void> | undefined;
  const connected = (): Promise<void> =>
    (firstReady ??= whenFirstReady(redis, timeoutMs).catch((err: unknown) => {
      firstReady = undefined;
      throw err;
    }));

  return {
    /** Runs `work` (described by `what` in errors) within the timeout; every failure is a RedisUnavailableError. */
    async call<T>(what: string, work: () => Promise<T>): Promise<T> {
      if (closed) throw new RedisUnavailableError(opts.closedMessage);
      try {
        // At start-up, wait for the first connection; after that a connection that is down fails at once.
        await connected();
        if (redis.status !== 'ready') throw new RedisUnavailableError(`connection is ${redis.status}`);
        return await withTimeout(
          work(),
          timeoutMs,
          () => new RedisUnavailableError(`no answer within ${timeoutMs} ms while ${what}`),
        );
      } catch (err) {
        if (err instanceof RedisUnavailableError) throw err;
        throw new RedisUnavailableError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    /** Idempotent. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await closeRedis(redis);
    },
  };
}
