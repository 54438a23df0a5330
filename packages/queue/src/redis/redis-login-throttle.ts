// Queue mode's LoginThrottle: every API replica counts failed sign-ins into the same Redis sorted sets, so a limit
// of 5 means 5 across the deployment, not 5 per replica.
import crypto from 'node:crypto';
import {
  checkThrottleLimits,
  type LoginThrottle,
  type LoginThrottleLimits,
  secondsUntilExpiry,
} from '../login-throttle.js';
import { openRedis } from './redis-connection.js';
import { createFailFastCalls } from './redis-fail-fast.js';

export interface RedisLoginThrottleOptions {
  redisUrl: string;
  /** BATON_QUEUE_PREFIX: keys are `<prefix>:login:u:<sha256 of the username>` and `<prefix>:login:a:<address>` */
  prefix: string;
  limits: LoginThrottleLimits;
  /** Failure times come from here (not Redis TIME), so tests can move time; replicas' clocks should agree (NTP). */
  clock: () => Date;
  /** How long a sign-in waits for Redis, and at start-up for the first connection; default 3 s. */
  timeoutMs?: number;
  /** Connection errors (Redis restarting…): they reach the sign-ins as RedisUnavailableError, this is for the log. */
  onError?: (error: unknown) => void;
  /** The connection's CLIENT SETNAME; default `baton-login-throttle` */
  connectionName?: string;
}

/** The score of the failure whose expiry ends the wait (the `max`-th newest that still counts), or nil: no wait. */
const CHECK = `
local max = tonumber(ARGV[2])
local n = redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf')
if n < max then return nil end
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', n - max, 1)[2]`;

/**
 * `begin` in one step over the username's and the address's key (KEYS[1], KEYS[2]): the scores of the failures
 * whose expiry ends a wait (nothing counted), or an empty list after counting this sign-in in both (as RECORD does).
 * ARGV: count-from (exclusive), now, member, user limit, address limit, window ms, drop-up-to (inclusive).
 */
const BEGIN = `
local ends = {}
for i = 1, 2 do
  local max = tonumber(ARGV[3 + i])
  local n = redis.call('ZCOUNT', KEYS[i], ARGV[1], '+inf')
  if n >= max then
    ends[#ends + 1] = redis.call('ZRANGEBYSCORE', KEYS[i], ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', n - max, 1)[2]
  end
end
if #ends > 0 then return ends end
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[7])
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -(tonumber(ARGV[3 + i]) + 1))
  redis.call('PEXPIRE', KEYS[i], ARGV[6])
end
return ends`;

/**
 * Drops failures that no longer count, adds this one, keeps only the newest `keep` (only they decide a wait, so a
 * key's size is bounded by its limit) and lets the whole key expire one window after its newest failure.
 */
const RECORD = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export function createRedisLoginThrottle(opts: RedisLoginThrottleOptions): LoginThrottle {
  checkThrottleLimits(opts.limits);
  const { limits, clock } = opts;
  const windowMs = limits.windowSeconds * 1000;
  const timeoutMs = opts.timeoutMs ?? 3_000;
  // No offline queue: while Redis is away a sign-in fails at once (503) instead of piling up behind a reconnect.
  const redis = openRedis(opts.redisUrl, opts.connectionName ?? 'baton-login-throttle', {
    onError: opts.onError,
    overrides: { enableOfflineQueue: false },
  });
  const { call, close } = createFailFastCalls(redis, { timeoutMs, closedMessage: 'the sign-in throttle is closed' });

  // Usernames are hashed: a mistyped username may be someone's password, and it should not sit in Redis in clear.
  const userKey = (u: string) =>
    `${opts.prefix}:login:u:${crypto.createHash('sha256').update(u.toLowerCase(), 'utf8').digest('hex')}`;
  const addrKey = (a: string) => `${opts.prefix}:login:a:${a}`;

  async function waitFor(key: string, max: number, now: number): Promise<number> {
    const score = (await redis.eval(CHECK, 1, key, `(${now - windowMs}`, String(max))) as string | null;
    return score === null ? 0 : secondsUntilExpiry(Number(score), windowMs, now);
  }

  const record = (key: string, keep: number, now: number) =>
    redis.eval(RECORD, 1, key, String(now - windowMs), String(now), failureId(now), String(keep), String(windowMs));

  return {
    retryAfter: (username, address) =>
      call('checking the sign-in throttle', async () => {
        const now = clock().getTime();
        const waits = await Promise.all([
          waitFor(userKey(username), limits.perUsername, now),
          waitFor(addrKey(address), limits.perAddress, now),
        ]);
        return Math.max(...waits);
      }),
    begin: (username, address) =>
      call('checking the sign-in throttle', async () => {
        const now = clock().getTime();
        const attempt = failureId(now);
        const ends = (await redis.eval(
          BEGIN,
          2,
          userKey(username),
          addrKey(address),
          `(${now - windowMs}`,
          String(now),
          attempt,
          String(limits.perUsername),
          String(limits.perAddress),
          String(windowMs),
          String(now - windowMs),
        )) as string[];
        if (ends.length === 0) return { retryAfter: 0, attempt };
        return { retryAfter: Math.max(...ends.map((score) => secondsUntilExpiry(Number(score), windowMs, now))) };
      }),
    recordFailure: (username, address) =>
      call('recording a failed sign-in', async () => {
        const now = clock().getTime();
        await Promise.all([
          record(userKey(username), limits.perUsername, now),
          record(addrKey(address), limits.perAddress, now),
        ]);
      }),
    recordSuccess: (username, begun) =>
      call('clearing the sign-in throttle', async () => {
        await redis.del(userKey(username));
        if (begun) await redis.zrem(addrKey(begun.address), begun.attempt);
      }),
    close,
  };
}

/** A sorted-set member unique to this failure: two failures in the same millisecond are two entries. */
const failureId = (now: number) => `${now}-${crypto.randomBytes(8).toString('hex')}`;
