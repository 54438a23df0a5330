// Queue mode's RateLimiter: every API replica counts takes into the same Redis sorted set per key, so a limit of 10
// a minute means 10 across the deployment, not 10 per replica.
import crypto from 'node:crypto';
import { checkRateLimits, type RateLimiter, type RateLimits, secondsUntilTakeExpires } from '../rate-limit.js';
import { openRedis } from './redis-connection.js';
import { createFailFastCalls } from './redis-fail-fast.js';

export interface RedisRateLimiterOptions {
  redisUrl: string;
  /** BATON_QUEUE_PREFIX: keys are `<prefix>:rate:<name>:<key>` */
  prefix: string;
  /** What is limited (`ai-ask`): limiters with different names count apart under one prefix. */
  name: string;
  limits: RateLimits;
  /** Take times come from here (not Redis TIME), so tests can move time; replicas' clocks should agree (NTP). */
  clock: () => Date;
  /** How long a take waits for Redis, and at start-up for the first connection; default 3 s. */
  timeoutMs?: number;
  /** Connection errors (Redis restarting…): they reach the callers as RedisUnavailableError, this is for the log. */
  onError?: (error: unknown) => void;
  /** The connection's CLIENT SETNAME; default `baton-rate-<name>` */
  connectionName?: string;
}

/**
 * Check and count in one step, so takes racing on any number of replicas cannot all pass one check. Drops the takes
 * that no longer count, then either answers the score of the take whose expiry ends the wait (the `limit`-th newest;
 * nothing counted), or counts this take and answers nil. The set never holds more than `limit` members, and the key
 * expires one window after its newest take.
 * ARGV: drop-up-to (inclusive), now, member, limit, window ms.
 */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local limit = tonumber(ARGV[4])
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  return redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')[2]
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return false`;

export function createRedisRateLimiter(opts: RedisRateLimiterOptions): RateLimiter {
  checkRateLimits(opts.limits);
  const { perWindow, windowSeconds } = opts.limits;
  const windowMs = windowSeconds * 1000;
  const timeoutMs = opts.timeoutMs ?? 3_000;
  // No offline queue: while Redis is away a take fails at once (503) instead of piling up behind a reconnect.
  const redis = openRedis(opts.redisUrl, opts.connectionName ?? `baton-rate-${opts.name}`, {
    onError: opts.onError,
    overrides: { enableOfflineQueue: false },
  });
  const calls = createFailFastCalls(redis, { timeoutMs, closedMessage: `the ${opts.name} rate limiter is closed` });
  const what = `checking the ${opts.name} rate limit`;

  return {
    take: (key) =>
      calls.call(what, async () => {
        const now = opts.clock().getTime();
        const score = (await redis.eval(
          TAKE,
          1,
          `${opts.prefix}:rate:${opts.name}:${key}`,
          String(now - windowMs),
          String(now),
          takeId(now),
          String(perWindow),
          String(windowMs),
        )) as string | null;
        return score === null ? 0 : secondsUntilTakeExpires(Number(score), windowSeconds, now);
      }),
    close: () => calls.close(),
  };
}

/** A sorted-set member unique to this take: two takes in the same millisecond are two entries. */
const takeId = (now: number) => `${now}-${crypto.randomBytes(8).toString('hex')}`;
