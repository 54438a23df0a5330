import { DEFAULT_LEASE_MS, type LeasedRun, type OnLeaseLost, type RunJob, type RunQueue } from '../run-queue.js';
import type { QueuedJob } from './bullmq-internals.js';
import { closeRedis, openRedis } from './redis-connection.js';
import { createRunQueueContext } from './redis-run-queue-context.js';
import { InvalidRunJobError, InvalidWorkerSpecError, RunQueueClosedError } from '../run-queue-errors.js';
import { InvalidRunQueueOptionsError } from './redis-run-queue-errors.js';
import {
  assertRunJob,
  assertWorkerSpec,
  MARKER_TTL_SECONDS,
  normalizeLabels,
  runQueueKeys,
} from './redis-run-queue-keys.js';
import { createLeasing } from './redis-run-queue-leasing.js';
import { startLeaseWatch } from './redis-run-queue-watch.js';

export * from './redis-run-queue-errors.js';

export interface RedisRunQueueOptions {
  /** BATON_REDIS_URL; the queue opens its own connections (BullMQ needs maxRetriesPerRequest: null). */
  redisUrl: string;
  /** BATON_QUEUE_PREFIX (default 'baton'): every key this queue touches starts with `${prefix}:` (use it as BullMQ's `prefix`). */
  prefix: string;
  leaseMs?: number; // default DEFAULT_LEASE_MS (30 s): the BullMQ lock duration = the lease
  onLost?: OnLeaseLost; // default: ignore
  /**
   * true on API replicas: periodically (about every leaseMs / 3) find leased jobs whose lock has expired (their
   * worker died or lost Redis), move them to failed, and report each to onLost(runId, worker, 'expired') exactly
   * once across all instances (use an atomic step, e.g. a Lua script or a SET NX marker, so two API replicas
   * do not both report it).
   */
  watchLeases?: boolean;
  /** Receives Redis and BullMQ errors (connection refused, reset…), which never crash the process. Default: ignore. */
  onError?: (error: unknown) => void;
}

/**
 * Queue mode's RunQueue on BullMQ (ARCHITECTURE.md, "A run's path"): job id = run id, one attempt, the BullMQ lock
 * is the lease and only the holder's heartbeat renews it. Labels route through one BullMQ queue per sorted label
 * set (registered in `${prefix}:label-sets`); workers fetch by hand from every queue whose labels they hold.
 * Several instances with one prefix (API replicas, worker daemons) share the queue.
 *
 * close() stops fetching, timers and connections at once; a handler still in flight then finishes without
 * recording its outcome (its lock runs out and a watcher reports it), so a worker daemon closes its
 * subscriptions (which wait for their handlers) before the queue.
 */
/** How long a finished job's record (its run id) stays in Redis, keeping enqueue idempotent after it ran. */
export const FINISHED_JOB_RETENTION_S = 24 * 3600;

export function createRedisRunQueue(options: RedisRunQueueOptions): RunQueue {
  const {
    redisUrl,
    prefix,
    leaseMs = DEFAULT_LEASE_MS,
    onLost = () => {},
    watchLeases = false,
    onError = () => {},
  } = options;
  if (typeof redisUrl !== 'string' || redisUrl.length === 0)
    throw new InvalidRunQueueOptionsError('redisUrl must be a non-empty string');
  if (typeof prefix !== 'string' || !/^[^\s:]+$/.test(prefix))
    throw new InvalidRunQueueOptionsError('prefix must be non-empty, without spaces or ":"');
  if (!Number.isInteger(leaseMs) || leaseMs < 1)
    throw new InvalidRunQueueOptionsError('leaseMs must be a positive integer');

  let closed = false;
  let closing: Promise<void> | undefined;
  const keys = runQueueKeys(prefix);
  const commands = openRedis(redisUrl, `${prefix}-run-queue`, { onError });
  const ctx = createRunQueueContext({ prefix, keys, leaseMs, commands, onLost, onError, isClosed: () => closed });
  const leasing = createLeasing(ctx, () => openRedis(redisUrl, `${prefix}-run-queue-subscriber`, { onError }));
  const watch = watchLeases ? startLeaseWatch(ctx) : undefined;

  /**
   * One API call: refused once closed, rejected with RedisUnavailableError when the command connection is down at
   * call time or drops during the call (the API answers 503), never left waiting for a reconnect.
   */
  const guarded = async <T>(operation: () => Promise<T>): Promise<T> => {
    if (closed) throw new RunQueueClosedError();
    await ctx.ready();
    return ctx.whileConnected(operation);
  };

  const { bullmq } = ctx;

  /** The label-set queue that holds a job for `runId` (waiting or active), if any. */
  const locate = async (runId: string): Promise<string | undefined> =>
    bullmq.queueHolding([...(await ctx.refreshLabelSets()).keys()], runId);

  /** The jobs (job id = run id) in one list of every label-set queue, oldest first. */
  const idsOldestFirst = async (list: 'wait' | 'active'): Promise<QueuedJob[]> => {
    const perQueue = await bullmq.listedOldestFirst([...(await ctx.refreshLabelSets()).keys()], list);
    const nonEmpty = perQueue.filter((jobs) => jobs.length > 0);
    if (nonEmpty.length <= 1) return nonEmpty[0] ?? [];
    // Several queues: merge by enqueue time (a stable sort keeps each queue's own order on ties).
    const all = nonEmpty.flat();
    const stamps = await bullmq.createdAt(all);
    return all
      .map((job, i) => ({ job, at: stamps[i]! }))
      .sort((a, b) => a.at - b.at)
      .map(({ job }) => job);
  };

  return {
    async enqueue(job) {
      if (closed) throw new RunQueueClosedError();
      assertRunJob(job);
      await guarded(() => enqueueReady(job));
    },

    lease(spec, handler) {
      if (closed) throw new RunQueueClosedError();
      assertWorkerSpec(spec);
      if (typeof handler !== 'function') throw new InvalidWorkerSpecError('handler must be a function');
      return leasing.lease(spec, handler);
    },

    async cancel(runId) {
      if (typeof runId !== 'string') throw new InvalidRunJobError('runId must be a string');
      return guarded(() => cancelReady(runId));
    },

    async pendingIds() {
      return guarded(async () => (await idsOldestFirst('wait')).map(({ jobId }) => jobId));
    },

    leasedIds() {
      return guarded(leasedIdsReady);
    },

    close() {
      if (!closing) {
        closed = true;
        closing = (async () => {
          await watch?.stop();
          await leasing.stop();
          await ctx.closeBullmq();
          await closeRedis(commands);
        })();
      }
      return closing;
    },
  };

  async function enqueueReady(job: RunJob): Promise<void> {
    // Idempotent across label sets too: a run id lives in at most one queue.
    if (await locate(job.runId)) return;
    const queueName = await ctx.registerLabelSet(normalizeLabels(job.labels));
    const data: RunJob = {
      runId: job.runId,
      ...(job.labels ? { labels: [...job.labels] } : {}),
      ...(job.bundle !== undefined ? { bundle: job.bundle } : {}),
    };
    // One attempt and no stalled retry: a playbook is never silently run twice. A finished job's record stays for
    // a day, so enqueueing its run id again is a no-op: the API's database lags the queue (a run that ran may
    // still read `pending` until its events are ingested) and the recovery sweep must not start it again. After a
    // Redis restart nothing is left, and the sweep's re-enqueue takes.
    await ctx.queue(queueName).add('run', data, {
      jobId: job.runId,
      attempts: 1,
      removeOnComplete: { age: FINISHED_JOB_RETENTION_S },
      removeOnFail: { age: FINISHED_JOB_RETENTION_S },
    });
    await commands.publish(
      keys.enqueuedChannel,
      JSON.stringify({ queue: queueName, labels: ctx.labelSets.get(queueName) }),
    );
  }

  async function cancelReady(runId: string): Promise<boolean> {
    const queueName = await locate(runId);
    if (!queueName) return false;
    const queue = ctx.queue(queueName);
    let state = await queue.getJobState(runId);
    if (state === 'waiting' || state === 'prioritized' || state === 'delayed') {
      if ((await queue.remove(runId)) === 1) return true;
      // Not removed: a worker locked it meanwhile.
      state = await queue.getJobState(runId);
    }
    if (state !== 'active') return false;
    // A lock that is gone means the lease expired: that run is reported lost, not canceled.
    if ((await bullmq.lockTtlMs(queueName, runId)) <= 0) return false;
    // The marker covers a worker that fetched the job but has not subscribed or looked yet, or missed the PUBLISH
    // while its subscriber reconnected (the holder also looks at the marker on every heartbeat).
    await commands
      .pipeline()
      .set(keys.canceled(runId), '1', 'EX', MARKER_TTL_SECONDS)
      .publish(keys.cancelChannel, runId)
      .exec();
    leasing.cancelLocal(runId);
    return true;
  }

  async function leasedIdsReady(): Promise<LeasedRun[]> {
    const active = await idsOldestFirst('active');
    const states = await bullmq.leaseStates(active);
    const now = Date.now();
    return active.flatMap(({ jobId: runId }, i) => {
      const { ttlMs, holder } = states[i]!;
      // An active job without a lock lost its lease: it is no longer held, whatever BullMQ's list says.
      return ttlMs > 0 ? [{ runId, worker: holder ?? 'unknown', expiresAt: now + ttlMs }] : [];
    });
  }
}
