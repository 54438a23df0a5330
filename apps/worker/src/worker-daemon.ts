// The lease loop of `baton worker` (ARCHITECTURE.md, "A run's path"): lease a job, open its sealed bundle, run
// the playbook, stream its events to Redis, heartbeat the leases and the registry, stop gracefully. The
// embedded twin is apps/api/src/runs/embedded-executors.ts; this one has no database: the job carries the
// bundle, events go to a stream the API ingests, and liveness goes to the worker registry.
import os from 'node:os';
import type { RunBundle, RunEvent } from '@baton/contracts';
import {
  type OpenedBundle,
  openSealedBundle,
  type RunOutcome,
  type RunPlaybookOptions,
  SealedBundleError,
  SealedBundleExpiredError,
  ShutdownAbort,
  WorkerLostAbort,
} from '@baton/executor';
import { type Lease, LeaseExpiredError, type RunJob, type RunQueue, type WorkerSubscription } from '@baton/queue';
import { type RunClaims, type WorkerRegistry } from '@baton/queue/redis';

export const DEFAULT_HEARTBEAT_MS = 5_000;

/** Where the runs' events go (the Redis stream producer in production): push in order, flush to be sure they left. */
export interface RunEventSink {
  push(event: RunEvent): void | Promise<void>;
  flush(): Promise<void>;
}

/** The part of a winston logger the daemon uses. */
export interface DaemonLogger {
  info(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  error(message: string, meta?: Record<string, unknown>): unknown;
}

export interface WorkerDaemonDeps {
  queue: Pick<RunQueue, 'lease' | 'leasedIds'>;
  events: RunEventSink;
  registry: Pick<WorkerRegistry, 'beat'>;
  /** Claims `run id + nonce` (one enqueue) once across all workers, before ansible starts. */
  claims: Pick<RunClaims, 'claim'>;
  runPlaybook: (bundle: RunBundle, opts: RunPlaybookOptions) => Promise<RunOutcome>;
  /** BATON_WORKER_KEY: opens the jobs' sealed bundles */
  workerKey: Buffer;
  name: string;
  labels: string[];
  capacity: number;
  /** passed to every runPlaybook (work root, sandbox, ansible's grace periods) */
  playbookOptions?: Omit<RunPlaybookOptions, 'onEvent' | 'signal' | 'onSpawn'> | undefined;
  logger: DaemonLogger;
  heartbeatMs?: number | undefined;
  /** how long `stop()` lets running runs go on before it cancels them */
  graceMs: number;
  host?: string | undefined;
  pid?: number | undefined;
  now?: (() => Date) | undefined;
}

export interface WorkerDaemon {
  readonly name: string;
  /** Starts leasing and heartbeating; the first registry beat is sent before it resolves. */
  start(): Promise<void>;
  /** Runs in flight (their ids). */
  running(): string[];
  /**
   * The queue reported this run's lease lost (`onLost` with reason `expired`): its playbook is stopped and the
   * run ends `error` / `worker_lost`, since the queue already counts it lost. Unknown run ids are ignored.
   */
  leaseLost(runId: string): void;
  /**
   * The event buffer went over its cap (true: Redis has been unreachable for long) or drained (false): while full the
   * daemon leases no new run (the ones it holds go on, their events buffered), says so in its heartbeat and log.
   */
  eventBufferFull(full: boolean): void;
  /** Stops taking runs; lets running ones go on for `graceMs`, then cancels them (canceled / shutdown); last beat `stopped`. */
  stop(graceMs?: number): Promise<void>;
  /** Cancels every run in flight at once (canceled / shutdown), e.g. on a second signal. */
  abortAll(): void;
}

interface HeldRun {
  lease: Lease;
  controller: AbortController;
  /** the queue said the lease expired */
  lost: boolean;
}

/** How long a stop waits for the registry (a beat in flight, then the last one) when Redis does not answer. */
const LAST_BEAT_WAIT_MS = 5_000;

/** Resolves when `promise` settles or after `ms`, whichever comes first: a stop must not hang on a dead registry. */
function settledWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!promise) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([
    promise.then(
      () => {},
      () => {},
    ),
    waited,
  ]).finally(() => clearTimeout(timer));
}

/**
 * A claim outlives its bundle by this much: a worker whose clock runs behind the API's still opens the bundle a
 * little past its expiry by our clock, and must still find the claim.
 */
export const CLAIM_CLOCK_MARGIN_MS = 3_600_000;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const isFinalStatus = (event: RunEvent): boolean => event.kind === 'status' && event.data.status === 'finished';

export function createWorkerDaemon(deps: WorkerDaemonDeps): WorkerDaemon {
  const { name, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const heartbeatMs = deps.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const startedAt = now().toISOString();
  const inFlight = new Map<string, HeldRun>();
  let subscription: WorkerSubscription | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  let shuttingDown = false;
  let bufferFull = false;

  const push = (event: RunEvent): void => {
    const pushed = deps.events.push(event);
    if (pushed instanceof Promise)
      pushed.catch((err: unknown) =>
        logger.error('run event not delivered', { run_id: event.run_id, seq: event.seq, error: errorText(err) }),
      );
  };

  const finalStatus = (runId: string, seq: number, conclusion: string, reason: string): RunEvent => ({
    run_id: runId,
    seq,
    ts: now().toISOString(),
    kind: 'status',
    data: { status: 'finished', conclusion, reason },
  });

  const beat = async (stopped = false): Promise<void> => {
    const leases = stopped ? [] : (await deps.queue.leasedIds()).filter((l) => l.worker === name);
    await deps.registry.beat({
      name,
      host: deps.host ?? os.hostname(),
      pid: deps.pid ?? process.pid,
      labels: [...deps.labels],
      capacity: deps.capacity,
      running: stopped ? [] : [...inFlight.keys()],
      last_heartbeat: now().toISOString(),
      lease_expires_at: leases.length ? new Date(Math.max(...leases.map((l) => l.expiresAt))).toISOString() : null,
      started_at: startedAt,
      ...(stopped ? { stopped: true } : {}),
      ...(bufferFull && !stopped ? { paused: 'event_buffer_full' as const } : {}),
    });
  };

  /** One beat at a time: while Redis is away, beats wait instead of piling up behind each other. */
  const beatOnce = (): Promise<void> => {
    beating ??= beat()
      .catch((err: unknown) => void logger.warn('worker heartbeat failed', { error: errorText(err) }))
      .finally(() => (beating = undefined));
    return beating;
  };

  const tick = (): void => {
    for (const [runId, held] of inFlight) {
      try {
        held.lease.heartbeat();
      } catch (err) {
        logger.warn('lease heartbeat failed', { run_id: runId, error: errorText(err) });
      }
    }
    void beatOnce();
  };

  const abortRun = (held: HeldRun, reason: unknown): void => {
    if (!held.controller.signal.aborted) held.controller.abort(reason);
  };

  /**
   * A job whose bundle is missing, does not open or has expired is not run: its run ends at once, error /
   * bad_bundle or bundle_expired (a duplicate seq 1 if the run had started from another enqueue: ignored by ingest).
   */
  async function refuseBadBundle(runId: string, err: unknown): Promise<void> {
    // A SealedBundleError never quotes the bundle; anything else might (a parse error of the opened text): its name only.
    const why = err instanceof SealedBundleError ? err.message : ((err as Error)?.name ?? 'error');
    const reason = err instanceof SealedBundleExpiredError ? 'bundle_expired' : 'bad_bundle';
    logger.warn(`run not started: ${reason.replace('_', ' ')}`, { run_id: runId, reason, error: why });
    push(finalStatus(runId, 1, 'error', reason));
    await deps.events.flush();
  }

  /**
   * Claims this enqueue of the run (run id + the bundle's nonce) once across all workers. false: it was claimed
   * before, so this job is a copy (re-added to Redis) of one that started already, and nothing of it may run. The
   * job then completes quietly, so the queue reports no loss and the run goes on as the first claim left it.
   */
  async function claimOnce(runId: string, opened: OpenedBundle): Promise<boolean> {
    const ttlMs = opened.expiresAt - now().getTime() + CLAIM_CLOCK_MARGIN_MS;
    try {
      if (await deps.claims.claim(runId, opened.nonce, ttlMs)) return true;
    } catch (err) {
      // Unclaimed is unrun: failing the job lets the queue report the run lost (error / worker_lost).
      logger.error('run not started: its claim did not reach Redis', { run_id: runId, error: errorText(err) });
      throw err;
    }
    logger.warn('run not started: this enqueue of the run was claimed before (a job re-added to the queue)', {
      run_id: runId,
      reason: 'already_claimed',
    });
    return false;
  }

  async function execute(job: Readonly<RunJob>, lease: Lease): Promise<void> {
    const runId = job.runId;
    let opened: OpenedBundle;
    try {
      if (job.bundle === undefined) throw new SealedBundleError(`the job of run ${runId} carries no bundle`);
      opened = openSealedBundle(job.bundle, runId, deps.workerKey, now().getTime());
    } catch (err) {
      await refuseBadBundle(runId, err);
      return;
    }
    if (!(await claimOnce(runId, opened))) return;
    const bundle: RunBundle = opened.bundle;
    // Our own controller: a shutdown or a lost lease must stop the run with its own reason, not the queue's.
    const held: HeldRun = { lease, controller: new AbortController(), lost: false };
    // An expiry shows in the abort's reason (a LeaseExpiredError), or the queue reports it (leaseLost) just after
    // aborting the lease: its onLost may never reach this worker, since an API replica's lease watcher can claim the
    // loss first. A turn later, an abort explained by neither is a cancel.
    const onLeaseAbort = () => {
      if (lease.signal.reason instanceof LeaseExpiredError) held.lost = true;
      setImmediate(() => abortRun(held, held.lost ? new WorkerLostAbort() : lease.signal.reason));
    };
    lease.signal.addEventListener('abort', onLeaseAbort, { once: true });
    if (lease.signal.aborted) onLeaseAbort();
    inFlight.set(runId, held);
    if (shuttingDown) abortRun(held, new ShutdownAbort('this worker is shutting down'));
    let lastSeq = 0;
    let finished = false;
    try {
      const outcome = await deps.runPlaybook(bundle, {
        ...deps.playbookOptions,
        signal: held.controller.signal,
        onEvent: (event) => {
          lastSeq = event.seq;
          if (isFinalStatus(event)) {
            finished = true;
            // Told of the expiry only after the abort came as a cancel: the run still ends as the queue counts it.
            if (held.lost && event.data.conclusion === 'canceled')
              event = { ...event, data: { ...event.data, conclusion: 'error', reason: 'worker_lost' } };
          }
          push(
            event.kind === 'status' && event.data.status === 'running'
              ? { ...event, data: { ...event.data, worker: name } }
              : event,
          );
        },
        onSpawn: (pid, at, warm) =>
          logger.info('ansible-playbook started', { run_id: runId, pid, at: at.toISOString(), warm }),
      });
      if (outcome.cleanupProblems)
        logger.warn('cleanup after the run failed', { run_id: runId, problems: outcome.cleanupProblems });
    } catch (err) {
      // runPlaybook reports everything it meets as the run's outcome; reaching here is a bug in the executor.
      logger.error('executor failed', { run_id: runId, last_seq: lastSeq, error: errorText(err) });
      if (!finished) push(finalStatus(runId, lastSeq + 1, 'error', 'executor_error'));
    } finally {
      lease.signal.removeEventListener('abort', onLeaseAbort);
    }
    try {
      await deps.events.flush();
    } catch (err) {
      // The run's end never reached Redis: failing the job lets the queue report it lost (error / worker_lost).
      logger.error('events of the run could not be delivered', {
        run_id: runId,
        last_seq: lastSeq,
        error: errorText(err),
      });
      throw err;
    } finally {
      inFlight.delete(runId);
    }
  }

  const abortAll = (): void => {
    shuttingDown = true;
    for (const held of inFlight.values()) abortRun(held, new ShutdownAbort('this worker is shutting down'));
  };

  return {
    name,
    running: () => [...inFlight.keys()],
    async start() {
      if (subscription || stopping) throw new Error(`worker ${name} was started already`);
      subscription = deps.queue.lease({ name, labels: [...deps.labels], capacity: deps.capacity }, execute);
      if (bufferFull) subscription.pause();
      heartbeat = setInterval(tick, heartbeatMs);
      heartbeat.unref();
      await beatOnce();
    },
    leaseLost(runId) {
      const held = inFlight.get(runId);
      if (!held) return;
      held.lost = true;
      logger.warn('lease lost: stopping the run', { run_id: runId });
      abortRun(held, new WorkerLostAbort());
    },
    eventBufferFull(full) {
      if (full === bufferFull) return;
      bufferFull = full;
      if (full) {
        subscription?.pause();
        logger.warn('event buffer full: leasing no new run until it drains (no event is dropped)', {
          running: [...inFlight.keys()],
        });
      } else {
        subscription?.resume();
        logger.info('event buffer drained: leasing runs again');
      }
      void beatOnce();
    },
    stop(graceMs = deps.graceMs) {
      stopping ??= (async () => {
        if (!subscription) return;
        const closing = subscription.close();
        const timer = setTimeout(abortAll, graceMs);
        await closing;
        clearTimeout(timer);
        clearInterval(heartbeat);
        await deps.events
          .flush()
          .catch((err: unknown) => logger.error('events could not be delivered at stop', { error: errorText(err) }));
        // After any beat in flight, so an older beat (with running runs) never lands after the last one.
        await settledWithin(beating, LAST_BEAT_WAIT_MS);
        const last = beat(true).catch(
          (err: unknown) => void logger.warn('last worker heartbeat failed', { error: errorText(err) }),
        );
        await settledWithin(last, LAST_BEAT_WAIT_MS);
      })();
      return stopping;
    },
    abortAll,
  };
}
