// Composes the runs domain: the RunQueue and EventBus seams (in-process in embedded mode), the ingester that
// persists executor events before publishing them, the runs service, and the recovery sweep.
import { type Authorizer, type Clock, createRunAccess } from '@baton/core';
import type { Database } from '@baton/db';
import { createInProcessEventBus, createInProcessRunQueue, type EventBus, type OnLeaseLost, type RunQueue } from '@baton/queue';

export interface RunWiringOptions {
  authz: Authorizer;
  clock: Clock;
  /** lease length of the in-process queue (tests shorten it) */
  leaseMs?: number | undefined;
}

export function createRunServices(db: Database, opts: RunWiringOptions) {
  const { repos } = db;
  // The queue reports lost leases before the ingester exists; the callback is bound once it does.
  let onLost: OnLeaseLost = () => {};
  const runQueue: RunQueue = createInProcessRunQueue({ onLost: (...args) => onLost(...args), ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}) });
  const eventBus: EventBus = createInProcessEventBus();
  const runAccess = createRunAccess({ runs: repos.runs, authz: opts.authz });
  // [ingest] the run ingester is created here and `onLost` bound to finish lost runs (error / worker_lost).
  // [runs] the runs service and the run bundle builder are created here.
  // [output] the run output service (logs, events) is created here.
  // [workers] the worker registry service is created here.
  void onLost;
  return {
    runQueue,
    eventBus,
    runAccess,
    /** Ends the seams; executors must have stopped first. */
    async closeRuns(): Promise<void> {
      await runQueue.close();
      await eventBus.close();
    },
  };
}
