/**
 * The RunQueue seam (ARCHITECTURE.md, "A run's path" steps 1, 3 and 6): the API enqueues a run id after its
 * transaction commits, a worker leases it and runs it. Two implementations share one contract suite
 * (src/testing/run-queue.contract.ts): in-process for embedded mode, BullMQ for queue mode.
 *
 * One attempt only: a handler that throws, or a lease that is not renewed in time, is reported through the
 * `onLost` callback given at construction and the job is never delivered again. A playbook is never
 * silently run twice; the runs domain finishes a lost run with conclusion `error`, reason `worker_lost`.
 */

export interface RunJob {
  runId: string;
  /** The job goes only to a worker whose labels include all of these; none means any worker. */
  labels?: string[];
  /**
   * Queue mode: the run bundle sealed under BATON_WORKER_KEY (`sealBundle` in @baton/executor), so a worker that
   * never opens the database can run the job. Embedded mode leaves it out and builds the bundle at dispatch.
   */
  bundle?: string;
}

export interface WorkerSpec {
  /** Reported in `leasedIds()` and to `onLost`, so an operator can tell which worker lost a run. */
  name: string;
  labels: string[];
  /** The most jobs this worker holds at once. */
  capacity: number;
}

export interface Lease {
  /** Aborted when the run is canceled or the lease expires: the handler must stop the playbook. */
  readonly signal: AbortSignal;
  /** Renews the lease for another `leaseMs`; a no-op once the lease has ended. */
  heartbeat(): void;
}

export type JobHandler = (job: Readonly<RunJob>, lease: Lease) => Promise<void>;

export interface WorkerSubscription {
  /** Stops leasing new jobs to this worker; resolves once its handlers in flight have settled. */
  close(): Promise<void>;
  /** Leases no new job to this worker until resume(); the runs it holds go on (e.g. its event buffer is full). */
  pause(): void;
  /** Leases again after a pause(). */
  resume(): void;
}

export interface LeasedRun {
  runId: string;
  worker: string;
  /** Epoch milliseconds (by the queue's clock) after which the lease is lost unless renewed. */
  expiresAt: number;
}

/** Why a leased run was lost: its lease ran out, or its handler threw while the run was neither canceled nor expired. */
export type LeaseLossReason = 'expired' | 'handler_failed';

export type OnLeaseLost = (runId: string, worker: string, reason: LeaseLossReason, error?: unknown) => void;

export const DEFAULT_LEASE_MS = 30_000;

export interface RunQueue {
  /** Idempotent per run id: a run already pending or leased is left as it is. */
  enqueue(job: RunJob): Promise<void>;
  /** Registers a worker: each job goes to exactly one worker, in enqueue order among the jobs it may take. */
  lease(worker: WorkerSpec, handler: JobHandler): WorkerSubscription;
  /** Pending: removed, true. Leased: its lease's signal aborts, true. Otherwise false. */
  cancel(runId: string): Promise<boolean>;
  /** Runs waiting for a worker, oldest first (the recovery sweep re-enqueues runs pending in the DB but absent here). */
  pendingIds(): Promise<string[]>;
  /** Runs held by a live lease. */
  leasedIds(): Promise<LeasedRun[]>;
  /** Stops all delivery and lease timers; idempotent. Handlers in flight are left to finish. */
  close(): Promise<void>;
}
