// Leader election for API replicas (the recovery sweep runs on one replica only, as in n8n's queue mode): a Redis
// key held with a TTL and renewed by its holder. A replica that dies lets the key expire and another takes over.
import type { Redis } from 'ioredis';

export interface LeaderLease {
  /** Takes the lease if free, renews it if ours; true while this replica leads. Never throws (Redis down → false). */
  tryLead(): Promise<boolean>;
  /** Gives the lease up if ours (a graceful stop), so another replica leads without waiting for the TTL. */
  resign(): Promise<void>;
}

// Renew or release only while the key still names us: a replica that paused past the TTL must not take back a lease another now holds.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export function createLeaderLease(opts: {
  redis: Redis;
  prefix: string;
  holder: string;
  ttlMs: number;
  onError?: (err: unknown) => void;
}): LeaderLease {
  const key = `${opts.prefix}:leader`;
  const onError = opts.onError ?? (() => {});
  return {
    async tryLead() {
      try {
        if ((await opts.redis.set(key, opts.holder, 'PX', opts.ttlMs, 'NX')) === 'OK') return true;
        return (await opts.redis.eval(RENEW, 1, key, opts.holder, String(opts.ttlMs))) === 1;
      } catch (err) {
        onError(err);
        return false;
      }
    },
    async resign() {
      await opts.redis.eval(RELEASE, 1, key, opts.holder).catch(onError);
    },
  };
}
