import { Redis, type RedisOptions } from 'ioredis';
import { redisOptionsFor } from './redis-endpoint.js';
import { RedisUnavailableError } from './redis-run-queue-errors.js';

/** Connections that have been ready at least once (a WeakSet: no state kept for closed connections). */
const everReady = new WeakSet<Redis>();

export interface OpenRedisOptions {
  /**
   * Receives connection errors (refused, reset, killed). ioredis reports them as 'error' events, and an
   * EventEmitter 'error' without a listener crashes the process: every connection gets one here.
   */
  onError?: (error: unknown) => void;
  /** Extra ioredis options, e.g. `{ enableOfflineQueue: false }`; they win over the defaults below. */
  overrides?: Partial<RedisOptions>;
}

/**
 * Opens one named ioredis connection. The name shows in `CLIENT LIST` (one role per connection: publisher,
 * subscriber, stream reader…), so an operator or a test can find and kill a given connection.
 * Commands wait through reconnects instead of failing after 20 retries (`maxRetriesPerRequest: null`, which
 * BullMQ also requires); callers that must not wait use their own timeouts.
 * `connectionString` is a Redis URL, with Sentinel and TLS settings when redisConnectionString put them there;
 * BullMQ's extra connections are duplicates of these, so they inherit both.
 */
export function openRedis(
  connectionString: string,
  name: string,
  { onError = () => {}, overrides = {} }: OpenRedisOptions = {},
): Redis {
  const { url, options } = redisOptionsFor(connectionString);
  const redis = new Redis(url, {
    ...options,
    connectionName: name.replace(/\s+/g, '_'),
    maxRetriesPerRequest: null,
    // Reconnect quickly at first, then at most every 2 s: a restarted Redis is picked up soon.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    // A socket still connecting when we disconnect is destroyed after this (ioredis waits 2 s by default,
    // which keeps a closing process or a finished test run alive).
    disconnectTimeout: 200,
    ...overrides,
  });
  redis.on('error', (error: unknown) => onError(error));
  redis.once('ready', () => everReady.add(redis));
  return redis;
}

/**
 * Closes a connection without hanging: QUIT waits for pending replies when connected; a connection that is
 * reconnecting or never came up is simply disconnected (QUIT would wait for a server that may not come back).
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // Fall through: the connection broke while quitting.
    }
  }
  redis.disconnect();
}

/**
 * Resolves once `redis` has been ready at least once; at once if it already was (even if it is down now: callers
 * that must not wait for a *re*connect check `status` themselves). Rejects with RedisUnavailableError on the first
 * connection error, on end, or after `timeoutMs`.
 */
export function whenFirstReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') everReady.add(redis);
  if (everReady.has(redis)) return Promise.resolve();
  if (redis.status === 'end' || redis.status === 'close')
    return Promise.reject(new RedisUnavailableError(`connection is ${redis.status}`));
  return new Promise<void>((resolve, reject) => {
    const settle = (error?: unknown): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onFailure);
      redis.off('end', onEnd);
      if (error === undefined) {
        everReady.add(redis);
        resolve();
      } else {
        reject(new RedisUnavailableError(error instanceof Error ? error.message : String(error)));
      }
    };
    const onReady = (): void => settle();
    const onFailure = (error: unknown): void => settle(error ?? new Error('connection failed'));
    const onEnd = (): void => settle(new Error('connection ended'));
    const timer = setTimeout(() => settle(new Error(`not connected within ${timeoutMs} ms`)), timeoutMs);
    redis.once('ready', onReady);
    redis.once('error', onFailure);
    redis.once('end', onEnd);
  });
}
