// BullMQ's private Redis layout, read and written in this one module. The run queue needs a few things BullMQ's
// API does not offer (which label-set queue holds a run, whose lock has run out, who holds a lease, one atomic
// "report this lost lease once"), so it reads BullMQ's keys directly; everything else goes through BullMQ's API.
// bullmq-internals.test.ts pins this layout against a real Redis for BULLMQ_LAYOUT_VERSION: an upgrade that moves
// a key fails there, in one spot, instead of as a lost lease nobody reports.
import type { Job } from 'bullmq';
import type { ChainableCommander, Redis } from 'ioredis';

/** The bullmq version (package.json pins it exactly) whose key layout this module reads. */
export const BULLMQ_LAYOUT_VERSION = '6.7.0';

/** The job hash field holding the job's creation time (ms since epoch), set by Queue.add. */
const TIMESTAMP_FIELD = 'timestamp';

/** The field this queue adds to a BullMQ job hash: the WorkerSpec name of the holder (gone with the job). */
export const HOLDER_FIELD = 'batonWorker';

/**
 * The token BullMQ's move scripts take as "skip the lock check" (removeLock.lua: `if token ~= "0"`): the only
 * way to fail a job whose lock has already expired.
 */
const NO_LOCK_TOKEN = '0';

/** Where BullMQ keeps one queue's jobs: `${prefix}:${queueName}:…`. */
export interface BullmqQueueKeys {
  /** List of waiting job ids, newest on the left (LPUSH), so the oldest is at index -1. */
  wait: string;
  /** List of job ids a worker has taken, newest on the left. */
  active: string;
  /** Hash of one job (data, opts, `timestamp`…, and HOLDER_FIELD once leased). */
  job(jobId: string): string;
  /** String holding the lock token of a taken job; its TTL is the lease. */
  lock(jobId: string): string;
}

export function bullmqQueueKeys(prefix: string, queueName: string): BullmqQueueKeys {
  const base = `${prefix}:${queueName}`;
  return {
    wait: `${base}:wait`,
    active: `${base}:active`,
    job: (jobId) => `${base}:${jobId}`,
    lock: (jobId) => `${base}:${jobId}:lock`,
  };
}

/** A job id in the label-set queue that holds it. */
export interface QueuedJob {
  queueName: string;
  jobId: string;
}

/** What Redis says about a taken job's lease. */
export interface LeaseState {
  /** PTTL of the lock: > 0 while held; -2 when the lock is gone */
  ttlMs: number;
  /** HOLDER_FIELD of the job hash, if the holder recorded itself */
  holder: string | undefined;
}

/**
 * Claims the report of a lost lease: only for a job still in the active list whose lock is gone (a lock never
 * comes back once expired: BullMQ re-locks only when it moves a waiting job to active), and only once per
 * enqueue of the run (the marker holds the job's creation timestamp, so a later re-enqueue can be reported again).
 * KEYS: active list, lock, job hash, marker. ARGV: job id, marker TTL in seconds, timestamp field. Returns 1 to
 * the one winner.
 */
const CLAIM_LOST_SCRIPT = `
if not redis.call('LPOS', KEYS[1], ARGV[1]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local enqueuedAt = redis.call('HGET', KEYS[3], ARGV[3]) or ''
if redis.call('GET', KEYS[4]) == enqueuedAt then return 0 end
redis.call('SET', KEYS[4], enqueuedAt, 'EX', ARGV[2])
return 1
`;

type PipelineReplies = Array<[Error | null, unknown]> | null;
const replyAt = (replies: PipelineReplies, i: number): unknown => (replies?.[i]?.[0] ? undefined : replies?.[i]?.[1]);
const asNumber = (value: unknown, fallback: number): number =>
  value === undefined || value === null ? fallback : Number(value);

export type BullmqInternals = ReturnType<typeof createBullmqInternals>;

/** The reads and writes of BullMQ's keys under `prefix`, on the caller's command connection. */
export function createBullmqInternals(commands: Redis, prefix: string) {
  const keysOf = (queueName: string): BullmqQueueKeys => bullmqQueueKeys(prefix, queueName);

  return {
    keysOf,

    /** The first of `queueNames` with a job hash for `jobId` (waiting, taken, or finished and still retained). */
    async queueHolding(queueNames: readonly string[], jobId: string): Promise<string | undefined> {
      const replies = await commands.pipeline(queueNames.map((name) => ['exists', keysOf(name).job(jobId)])).exec();
      return queueNames.find((_, i) => replyAt(replies, i) === 1);
    },

    /** Per queue, the ids in its wait or active list, oldest first. */
    async listedOldestFirst(queueNames: readonly string[], list: 'wait' | 'active'): Promise<QueuedJob[][]> {
      const replies = await commands
        .pipeline(queueNames.map((name) => ['lrange', keysOf(name)[list], '0', '-1']))
        .exec();
      return queueNames.map((queueName, i) =>
        ((replyAt(replies, i) as string[] | undefined) ?? []).reverse().map((jobId) => ({ queueName, jobId })),
      );
    },

    /** Per queue, the id of its oldest waiting job, or undefined when nothing waits. */
    async oldestWaiting(queueNames: readonly string[]): Promise<Array<string | undefined>> {
      const replies = await commands.pipeline(queueNames.map((name) => ['lindex', keysOf(name).wait, '-1'])).exec();
      return queueNames.map((_, i) => {
        const id = replyAt(replies, i);
        return typeof id === 'string' ? id : undefined;
      });
    },

    /** Each job's creation time (ms since epoch); a job gone meanwhile sorts last (MAX_SAFE_INTEGER). */
    async createdAt(jobs: readonly QueuedJob[]): Promise<number[]> {
      const replies = await commands
        .pipeline(jobs.map(({ queueName, jobId }) => ['hget', keysOf(queueName).job(jobId), TIMESTAMP_FIELD]))
        .exec();
      return jobs.map((_, i) => asNumber(replyAt(replies, i), Number.MAX_SAFE_INTEGER));
    },

    /** The ids in a queue's active list whose lock is gone: their lease expired (their worker died or lost Redis). */
    async activeWithoutLock(queueName: string): Promise<string[]> {
      const active = await commands.lrange(keysOf(queueName).active, 0, -1);
      if (active.length === 0) return [];
      const replies = await commands.pipeline(active.map((jobId) => ['exists', keysOf(queueName).lock(jobId)])).exec();
      return active.filter((_, i) => replies?.[i]?.[0] === null && replies[i]?.[1] === 0);
    },

    /** PTTL of a job's lock: > 0 while the lease holds. */
    lockTtlMs(queueName: string, jobId: string): Promise<number> {
      return commands.pttl(keysOf(queueName).lock(jobId));
    },

    /** The token a job's lock holds, or null once it is gone. */
    lockOwner(queueName: string, jobId: string): Promise<string | null> {
      return commands.get(keysOf(queueName).lock(jobId));
    },

    /** Lock token and PTTL in one round trip. */
    async lockOwnerAndTtl(queueName: string, jobId: string): Promise<{ owner: string | null; ttlMs: number }> {
      const lock = keysOf(queueName).lock(jobId);
      const replies = await commands.pipeline().get(lock).pttl(lock).exec();
      const owner = replyAt(replies, 0);
      return { owner: typeof owner === 'string' ? owner : null, ttlMs: asNumber(replyAt(replies, 1), -2) };
    },

    /** The lock TTL and recorded holder of each job, in one round trip. */
    async leaseStates(jobs: readonly QueuedJob[]): Promise<LeaseState[]> {
      if (jobs.length === 0) return [];
      const replies = await commands
        .pipeline(
          jobs.flatMap(({ queueName, jobId }) => [
            ['pttl', keysOf(queueName).lock(jobId)],
            ['hget', keysOf(queueName).job(jobId), HOLDER_FIELD],
          ]),
        )
        .exec();
      return jobs.map((_, i) => {
        const holder = replyAt(replies, 2 * i + 1);
        return {
          ttlMs: asNumber(replyAt(replies, 2 * i), -2),
          holder: typeof holder === 'string' ? holder : undefined,
        };
      });
    },

    /** The holder recorded on a job, or null (none recorded, or the job is gone). */
    holderOf(queueName: string, jobId: string): Promise<string | null> {
      return commands.hget(keysOf(queueName).job(jobId), HOLDER_FIELD);
    },

    /** Adds "record `worker` as the holder" to the caller's pipeline, so it shares a round trip. */
    recordHolder(pipeline: ChainableCommander, queueName: string, jobId: string, worker: string): ChainableCommander {
      return pipeline.hset(keysOf(queueName).job(jobId), HOLDER_FIELD, worker);
    },

    /** CLAIM_LOST_SCRIPT: true to the one caller that must report this job's lost lease. */
    async claimLostReport(
      queueName: string,
      jobId: string,
      markerKey: string,
      markerTtlSeconds: number,
    ): Promise<boolean> {
      const keys = keysOf(queueName);
      const claimed = await commands.eval(
        CLAIM_LOST_SCRIPT,
        4,
        keys.active,
        keys.lock(jobId),
        keys.job(jobId),
        markerKey,
        jobId,
        markerTtlSeconds,
        TIMESTAMP_FIELD,
      );
      return Number(claimed) === 1;
    },

    /** Moves a taken job whose lock is gone from active to failed (BullMQ's own move needs the lock otherwise). */
    async failUnlocked<T>(job: Job<T>, error: Error): Promise<void> {
      await job.moveToFailed(error, NO_LOCK_TOKEN, false);
    },
  };
}
