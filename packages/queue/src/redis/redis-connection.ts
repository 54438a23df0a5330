import { Redis, type RedisOptions } from 'ioredis';

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
 */
export function openRedis(url: string, name: string, { onError = () => {}, overrides = {} }: OpenRedisOptions = {}): Redis {
  const redis = new Redis(url, {
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
