import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobHandler, Lease, RunJob, WorkerSpec, WorkerSubscription } from '../run-queue.js';
import { closeRedis } from './redis-connection.js';
import type { RunQueueContext } from './redis-run-queue-context.js';
import { LeaseExpiredError, RunCanceledError } from '../run-queue-errors.js';
import { withTimeout } from '../timers.js';
import { hasRoom, leastLoaded, mayServe, newWorkerSlot, release, whenIdle, type WorkerSlot } from '../worker-slots.js';

/** The fallback when a pub/sub notice was missed (a reconnect): how often idle workers look for jobs anyway. */
export const POLL_MS = 1_000;

/** The longest a lease check may wait for Redis once the local deadline has passed (it must not queue for an outage). */
const MAX_CHECK_WAIT_MS = 2_000;

type Subscription = WorkerSlot;

/** A job this instance fetched and whose handler has not settled yet. */
interface Holding {
  runId: string;
  queueName: string;
  job: Job<RunJob>;
  token: string;
  subscription: Subscription;
  controller: AbortController;
  /**
   * Epoch ms (Date.now) by which the lock has surely run out unless extended: the send time of the last successful
   * extend (or of the fetch that took the lock) plus leaseMs. Send times are used because Redis sets the expiry a
   * little later, so this deadline never falls after Redis's own.
   */
  deadline: number;
  timer?: NodeJS.Timeout;
  expired: boolean;
  canceled: boolean;
  settled: boolean;
}

export interface Leasing {
  lease(spec: WorkerSpec, handler: JobHandler): WorkerSubscription;
  /** Aborts a run held here (the cancel's fast path in the instance that received it); false if not held here. */
  cancelLocal(runId: string): boolean;
  /** Stops fetching, lease timers and the subscriber; handlers in flight finish without touching Redis. */
  stop(): Promise<void>;
}

/**
 * The worker side of one RunQueue instance: fetches jobs by hand (`Worker.getNextJob`) from every label-set
 * queue a registered worker may serve, holds their BullMQ locks as leases and reports what happens to them.
 * Woken by the enqueue channel, a freed slot, or a slow poll.
 */
export function createLeasing(ctx: RunQueueContext, openSubscriber: () => Redis): Leasing {
  const subscriptions: Subscription[] = [];
  const holdings = new Map<string, Holding>();
  const instanceId = randomUUID();
  let subscriber: Redis | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let pumping: Promise<void> | undefined;
  let again = false;
  let assignments = 0;
  let tokens = 0;

  const pickSubscription = (labels: string[]): Subscription | undefined => leastLoaded(subscriptions, labels);

  /** The given queues that have a waiting job, the one with the oldest head first (one queue: no round trip). */
  const oldestFirst = async (queueNames: string[]): Promise<string[]> => {
    if (queueNames.length <= 1) return queueNames;
    const heads = await ctx.bullmq.oldestWaiting(queueNames);
    const waiting = queueNames.flatMap((queueName, i) =>
      heads[i] === undefined ? [] : [{ queueName, jobId: heads[i] }],
    );
    if (waiting.length <= 1) return waiting.map((entry) => entry.queueName);
    const stamps = await ctx.bullmq.createdAt(waiting);
    return waiting
      .map((entry, i) => ({ name: entry.queueName, at: stamps[i]! }))
      .sort((a, b) => a.at - b.at)
      .map((entry) => entry.name);
  };

  /** One pass: takes at most one job, then asks for another pass so the queue heads are read afresh. */
  const fillOnce = async (): Promise<void> => {
    // While disconnected a fetch would wait in the offline queue for the whole outage: the poll tries again.
    if (ctx.commands.status !== 'ready') return;
    const servable = [...ctx.labelSets].filter(([, labels]) =>
      subscriptions.some((sub) => hasRoom(sub) && mayServe(sub, labels)),
    );
    for (const queueName of await oldestFirst(servable.map(([name]) => name))) {
      const labels = ctx.labelSets.get(queueName) ?? [];
      if (!pickSubscription(labels) || stopped) continue;
      const token = `${instanceId}:${++tokens}`;
      const fetchedAt = Date.now();
      const job = await ctx.fetcher(queueName).getNextJob(token, { block: false });
      if (!job) continue;
      // Chosen after the fetch: a worker may have closed, or the queue stopped, while it was in flight.
      const sub = stopped ? undefined : pickSubscription(labels);
      if (!sub) {
        await job.moveToWait(token);
        return;
      }
      await start(job, sub, queueName, token, fetchedAt);
      again = true;
      return;
    }
  };

  const pump = (): void => {
    if (stopped) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = (async () => {
      try {
        do {
          again = false;
          await fillOnce();
        } while (again && !stopped);
      } catch (error) {
        // Redis down: the poll tries again.
        ctx.onError(error);
      } finally {
        pumping = undefined;
      }
    })();
  };

  const ready = (): boolean => ctx.commands.status === 'ready';
  const checkWaitMs = Math.max(1, Math.min(MAX_CHECK_WAIT_MS, Math.floor(ctx.leaseMs / 3)));

  /** Looks at the lease again just after its local deadline. */
  const armDeadline = (holding: Holding): void => {
    clearTimeout(holding.timer);
    if (stopped || holding.settled || holding.expired) return;
    holding.timer = setTimeout(() => void checkLease(holding), Math.max(0, holding.deadline - Date.now()) + 1);
  };

  const markCanceled = (holding: Holding): void => {
    if (holding.settled || holding.expired || holding.canceled) return;
    holding.canceled = true;
    holding.controller.abort(new RunCanceledError(holding.runId));
  };

  /** Redis says the lock is gone: claim the report (once across all instances) and report it. */
  const leaseLost = async (holding: Holding): Promise<void> => {
    if (holding.expired) return;
    holding.expired = true;
    clearTimeout(holding.timer);
    holding.controller.abort(new LeaseExpiredError(holding.runId));
    if (await ctx.claimLost(holding.queueName, holding.job))
      ctx.onLost(holding.runId, holding.subscription.spec.name, 'expired');
  };

  /**
   * The local deadline passed without a successful extend and Redis cannot tell us otherwise: the lock has run out
   * (or will before any extend of ours could land), and the API may already have finished the run worker_lost, so
   * the playbook must stop now rather than run on for the whole outage. Not reported from here: this instance
   * cannot reach Redis to claim the report, and an API replica's watcher reports the run once.
   */
  const expireLocally = (holding: Holding): void => {
    if (holding.settled || holding.expired) return;
    holding.expired = true;
    clearTimeout(holding.timer);
    holding.controller.abort(new LeaseExpiredError(holding.runId));
  };

  /** Is the lock still ours? Re-arms for what is left of it, reports it lost, or gives it up locally past the deadline. */
  const checkLease = async (holding: Holding): Promise<void> => {
    if (stopped || holding.settled || holding.expired) return;
    const pastDeadline = (): boolean => Date.now() >= holding.deadline;
    if (!ready()) {
      // A command sent now would wait in ioredis's offline queue for as long as the outage lasts.
      if (pastDeadline()) expireLocally(holding);
      else armDeadline(holding);
      return;
    }
    const sentAt = Date.now();
    try {
      const { owner, ttlMs } = await withTimeout(
        ctx.bullmq.lockOwnerAndTtl(holding.queueName, holding.runId),
        checkWaitMs,
        () => new Error(`Redis did not answer within ${checkWaitMs} ms`),
      );
      if (holding.settled || holding.expired) return;
      if (owner === holding.token && ttlMs > 0) {
        holding.deadline = Math.max(holding.deadline, sentAt + ttlMs);
        armDeadline(holding);
      } else {
        await leaseLost(holding);
      }
    } catch (error) {
      ctx.onError(error);
      if (pastDeadline()) expireLocally(holding);
      else armDeadline(holding);
    }
  };

  /** A cancel whose PUBLISH this instance missed (its subscriber was reconnecting) still left the marker. */
  const checkCancelMarkers = async (held: Holding[]): Promise<void> => {
    const live = held.filter((holding) => !holding.settled && !holding.expired && !holding.canceled);
    if (live.length === 0) return;
    const replies = await ctx.commands
      .pipeline(live.map((holding) => ['exists', ctx.keys.canceled(holding.runId)]))
      .exec();
    live.forEach((holding, i) => {
      if (replies?.[i]?.[1] === 1) markCanceled(holding);
    });
  };

  const heartbeat = (holding: Holding): void => {
    if (stopped || ctx.isClosed() || holding.settled || holding.expired) return;
    // Not queued while disconnected: an extend replayed after a long outage could revive a lock the API already
    // counts as lost. The deadline timer decides what a missed heartbeat means.
    if (!ready()) return;
    const sentAt = Date.now();
    holding.job.extendLock(holding.token, ctx.leaseMs).then(
      (extended) => {
        if (holding.settled || holding.expired) return;
        if (Number(extended) === 1) {
          holding.deadline = Math.max(holding.deadline, sentAt + ctx.leaseMs);
          armDeadline(holding);
        } else {
          void checkLease(holding);
        }
      },
      (error: unknown) => ctx.onError(error),
    );
    checkCancelMarkers([holding]).catch(ctx.onError);
  };

  const finish = async (holding: Holding, failure?: { error: unknown }): Promise<void> => {
    holding.settled = true;
    clearTimeout(holding.timer);
    // After queue.close() the connections are gone: the lock runs out and a watcher reports the run.
    if (!ctx.isClosed() && !holding.expired) {
      try {
        if (failure) {
          const error = failure.error instanceof Error ? failure.error : new Error(String(failure.error));
          await holding.job.moveToFailed(error, holding.token, false);
          // After a cancel the handler is expected to end early, possibly by throwing: not a lost worker.
          if (!holding.canceled)
            ctx.onLost(holding.runId, holding.subscription.spec.name, 'handler_failed', failure.error);
        } else {
          // fetchNext false: BullMQ would otherwise move the next waiting job to active, outside this queue's bookkeeping.
          await holding.job.moveToCompleted('done', holding.token, false);
        }
      } catch (error) {
        // The move needs our lock: if it is gone, the lease expired under a handler that did not heartbeat.
        try {
          const owner = await ctx.bullmq.lockOwner(holding.queueName, holding.runId);
          if (owner !== holding.token) await leaseLost(holding);
          else ctx.onError(error);
        } catch (checkError) {
          ctx.onError(checkError);
        }
      }
      if (holding.canceled) ctx.commands.del(ctx.keys.canceled(holding.runId)).catch(ctx.onError);
    }
    if (holdings.get(holding.runId) === holding) holdings.delete(holding.runId);
    release(holding.subscription);
    pump();
  };

  const start = async (
    job: Job<RunJob>,
    sub: Subscription,
    queueName: string,
    token: string,
    fetchedAt: number,
  ): Promise<void> => {
    const runId = job.id!;
    sub.active += 1;
    sub.lastAssigned = ++assignments;
    const holding: Holding = {
      runId,
      queueName,
      job,
      token,
      subscription: sub,
      controller: new AbortController(),
      deadline: fetchedAt + ctx.leaseMs,
      expired: false,
      canceled: false,
      settled: false,
    };
    holdings.set(runId, holding);
    armDeadline(holding);
    try {
      // Record the holder for leasedIds() and watchers, and catch a cancel sent between the fetch and now. Not
      // waited for past a local expiry: the handler then starts with its signal aborted instead of after the outage.
      const replies = await Promise.race([
        ctx.bullmq
          .recordHolder(ctx.commands.pipeline(), queueName, runId, sub.spec.name)
          .exists(ctx.keys.canceled(runId))
          .exec(),
        whenAborted(holding.controller.signal),
      ]);
      if (replies?.[1]?.[1] === 1) markCanceled(holding);
    } catch (error) {
      ctx.onError(error);
    }
    const data = job.data ?? { runId };
    const runJob: RunJob = {
      runId,
      ...(Array.isArray(data.labels) ? { labels: [...data.labels] } : {}),
      ...(typeof data.bundle === 'string' ? { bundle: data.bundle } : {}),
    };
    const lease: Lease = { signal: holding.controller.signal, heartbeat: () => heartbeat(holding) };
    Promise.resolve()
      .then(() => sub.handler(runJob, lease))
      .then(
        () => finish(holding),
        (error: unknown) => finish(holding, { error }),
      )
      .catch(ctx.onError);
  };

  const onMessage = (channel: string, message: string): void => {
    if (channel === ctx.keys.cancelChannel) {
      const holding = holdings.get(message);
      if (holding) markCanceled(holding);
      return;
    }
    if (channel === ctx.keys.enqueuedChannel) {
      try {
        const { queue, labels } = JSON.parse(message) as { queue?: unknown; labels?: unknown };
        if (typeof queue === 'string' && Array.isArray(labels) && labels.every((label) => typeof label === 'string')) {
          ctx.labelSets.set(queue, labels);
        }
      } catch (error) {
        ctx.onError(error);
      }
      pump();
    }
  };

  const poll = async (): Promise<void> => {
    try {
      await ctx.refreshLabelSets();
    } catch (error) {
      ctx.onError(error);
    }
    pump();
  };

  /**
   * After a (re)connect of the subscriber: cancels published while it was away were missed, so look at the markers
   * of every held run. Subscribing again first (Redis confirms an existing subscription too) orders the look after
   * the subscription is live: a cancel is then either already marked or will be heard.
   */
  const onSubscriberReady = (): void => {
    if (holdings.size === 0 || !subscriber) return;
    subscriber
      .subscribe(ctx.keys.cancelChannel)
      .then(() => checkCancelMarkers([...holdings.values()]))
      .catch(ctx.onError);
  };

  const startOnce = (): void => {
    if (subscriber) return;
    subscriber = openSubscriber();
    subscriber.on('message', onMessage);
    subscriber.on('ready', onSubscriberReady);
    subscriber.subscribe(ctx.keys.cancelChannel, ctx.keys.enqueuedChannel).catch(ctx.onError);
    const schedule = (): void => {
      pollTimer = setTimeout(() => {
        void poll().finally(() => {
          if (!stopped) schedule();
        });
      }, POLL_MS);
    };
    schedule();
    void poll();
  };

  return {
    lease(spec, handler) {
      const sub = newWorkerSlot(spec, handler);
      subscriptions.push(sub);
      startOnce();
      pump();
      return {
        close() {
          sub.closed = true;
          const index = subscriptions.indexOf(sub);
          if (index >= 0) subscriptions.splice(index, 1);
          return whenIdle(sub);
        },
        pause() {
          sub.paused = true;
        },
        resume() {
          sub.paused = false;
          pump();
        },
      };
    },

    cancelLocal(runId) {
      const holding = holdings.get(runId);
      if (!holding || holding.settled || holding.expired) return false;
      markCanceled(holding);
      return true;
    },

    async stop() {
      stopped = true;
      clearTimeout(pollTimer);
      for (const holding of holdings.values()) clearTimeout(holding.timer);
      // A fetch in flight is finished (a job it took goes back to wait), but not waited for through an outage: the
      // owner closes the connection next, which fails whatever still waits on it.
      if (pumping && ctx.commands.status === 'ready')
        await ctx.whileConnected(() => pumping ?? Promise.resolve()).catch(ctx.onError);
      if (subscriber) await closeRedis(subscriber);
    },
  };
}

/** Resolves (to undefined) once `signal` aborts; never rejects. */
function whenAborted(signal: AbortSignal): Promise<undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true }));
}
