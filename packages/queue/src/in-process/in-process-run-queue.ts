import {
  DEFAULT_LEASE_MS,
  type LeasedRun,
  type OnLeaseLost,
  type RunJob,
  type RunQueue,
  type WorkerSubscription,
} from '../run-queue.js';
import { LeaseExpiredError, RunCanceledError, RunQueueClosedError } from '../run-queue-errors.js';
import { systemTimers, type Timers } from '../timers.js';
import { leastLoaded, newWorkerSlot, release, whenIdle, type WorkerSlot } from '../worker-slots.js';

export interface InProcessRunQueueDeps {
  onLost: OnLeaseLost;
  leaseMs?: number;
  timers?: Timers;
}

/** A job whose handler has not settled yet, including one whose lease already expired. */
interface Holding {
  job: RunJob;
  worker: WorkerSlot;
  controller: AbortController;
  expiresAt: number;
  timer: unknown;
  expired: boolean;
  canceled: boolean;
}

/**
 * Embedded mode's RunQueue: the same lease rules as BullMQ in queue mode (one attempt, lease renewed by
 * heartbeat, cancel aborts the holder), kept in memory of the one `baton serve` process.
 */
export function createInProcessRunQueue({
  onLost,
  leaseMs = DEFAULT_LEASE_MS,
  timers = systemTimers,
}: InProcessRunQueueDeps): RunQueue {
  const pending: RunJob[] = [];
  // Every run whose handler has not settled: it keeps enqueue idempotent even after its lease expired,
  // because the handler may still be running and a second start would run the playbook twice.
  const holdings = new Map<string, Holding>();
  const workers: WorkerSlot[] = [];
  let assignments = 0;
  let closed = false;

  const pickWorker = (job: RunJob): WorkerSlot | undefined => leastLoaded(workers, job.labels ?? []);

  const armExpiry = (holding: Holding): void => {
    timers.clearTimeout(holding.timer);
    holding.expiresAt = timers.now() + leaseMs;
    holding.timer = timers.setTimeout(() => expire(holding), leaseMs);
  };

  const expire = (holding: Holding): void => {
    holding.expired = true;
    holding.controller.abort(new LeaseExpiredError(holding.job.runId));
    onLost(holding.job.runId, holding.worker.spec.name, 'expired');
  };

  const settle = (holding: Holding, error?: unknown, failed = false): void => {
    timers.clearTimeout(holding.timer);
    holdings.delete(holding.job.runId);
    const { worker } = holding;
    release(worker);
    // After a cancel the handler is expected to end early, possibly by throwing; an expiry was reported already.
    if (failed && !holding.expired && !holding.canceled)
      onLost(holding.job.runId, worker.spec.name, 'handler_failed', error);
    dispatch();
  };

  const start = (job: RunJob, worker: WorkerSlot): void => {
    worker.active += 1;
    worker.lastAssigned = ++assignments;
    const holding: Holding = {
      job,
      worker,
      controller: new AbortController(),
      expiresAt: 0,
      timer: undefined,
      expired: false,
      canceled: false,
    };
    holdings.set(job.runId, holding);
    armExpiry(holding);
    const lease = {
      signal: holding.controller.signal,
      heartbeat: () => {
        if (!closed && !holding.expired && holdings.get(job.runId) === holding) armExpiry(holding);
      },
    };
    // Started from a microtask so enqueue() and lease() never run a handler inside the caller's stack.
    Promise.resolve()
      .then(() => worker.handler({ ...job }, lease))
      .then(
        () => settle(holding),
        (error: unknown) => settle(holding, error, true),
      );
  };

  const dispatch = (): void => {
    if (closed) return;
    for (let i = 0; i < pending.length;) {
      const job = pending[i]!;
      const worker = pickWorker(job);
      if (!worker) {
        i += 1;
        continue;
      }
      pending.splice(i, 1);
      start(job, worker);
    }
  };

  return {
    async enqueue(job) {
      if (closed) throw new RunQueueClosedError();
      if (holdings.has(job.runId) || pending.some((queued) => queued.runId === job.runId)) return;
      pending.push({
        runId: job.runId,
        ...(job.labels ? { labels: [...job.labels] } : {}),
        ...(job.bundle !== undefined ? { bundle: job.bundle } : {}),
      });
      dispatch();
    },

    lease(spec, handler): WorkerSubscription {
      if (closed) throw new RunQueueClosedError();
      const worker = newWorkerSlot(spec, handler);
      workers.push(worker);
      dispatch();
      return {
        close() {
          worker.closed = true;
          const index = workers.indexOf(worker);
          if (index >= 0) workers.splice(index, 1);
          return whenIdle(worker);
        },
        pause() {
          worker.paused = true;
        },
        resume() {
          worker.paused = false;
          dispatch();
        },
      };
    },

    async cancel(runId) {
      const index = pending.findIndex((job) => job.runId === runId);
      if (index >= 0) {
        pending.splice(index, 1);
        return true;
      }
      const holding = holdings.get(runId);
      if (!holding || holding.expired) return false;
      holding.canceled = true;
      holding.controller.abort(new RunCanceledError(runId));
      return true;
    },

    async pendingIds() {
      return pending.map((job) => job.runId);
    },

    async leasedIds(): Promise<LeasedRun[]> {
      return [...holdings.values()]
        .filter((holding) => !holding.expired)
        .map((holding) => ({
          runId: holding.job.runId,
          worker: holding.worker.spec.name,
          expiresAt: holding.expiresAt,
        }));
    },

    async close() {
      closed = true;
      for (const holding of holdings.values()) timers.clearTimeout(holding.timer);
    },
  };
}
