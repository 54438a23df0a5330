// Embedded mode's executors (ARCHITECTURE.md, "Processes"): `baton serve` itself leases runs from the
// in-process RunQueue and runs them with the same executor code a `baton worker` daemon uses.
import os from 'node:os';
import type { RunBundle, RunConclusion, RunEvent, RunStatus } from '@baton/contracts';
import { classifyBundleFailure, HEARTBEAT_INTERVAL_MS } from '@baton/core';
import { type RunOutcome, type RunPlaybookOptions, ShutdownAbort } from '@baton/executor';
import type { Lease, RunJob, RunQueue, WorkerSubscription } from '@baton/queue';
import type { Logger } from 'winston';

export interface EmbeddedExecutorDeps {
  queue: Pick<RunQueue, 'lease' | 'leasedIds'>;
  ingest: {
    push(event: RunEvent): void;
    flush(): Promise<void>;
    claim(runId: string, worker: string): Promise<boolean>;
    finish(
      runId: string,
      outcome: { conclusion: RunConclusion; reason?: string },
      from: readonly RunStatus[],
    ): Promise<boolean>;
  };
  bundles: { build(runId: string): Promise<RunBundle> };
  workers: {
    register(w: {
      name: string;
      host: string;
      mode: 'embedded' | 'daemon';
      labels: string[];
      capacity: number;
    }): Promise<void>;
    heartbeat(name: string, running: string[], leaseExpiresAt: Date): Promise<void>;
  };
  runPlaybook: (bundle: RunBundle, opts: RunPlaybookOptions) => Promise<RunOutcome>;
  /** options passed to every runPlaybook (work root, sandbox, grace periods…) */
  playbookOptions?: Omit<RunPlaybookOptions, 'onEvent' | 'signal'>;
  capacity: number;
  name?: string | undefined;
  logger: Logger;
  heartbeatMs?: number | undefined;
  leaseMs: number;
}

export interface EmbeddedExecutors {
  readonly name: string;
  start(): Promise<void>;
  /** Runs in flight (their ids). */
  running(): string[];
  /** Stops taking runs; lets running ones go on for `graceMs`, then cancels them; resolves once all ended. */
  stop(graceMs: number): Promise<void>;
}

export function createEmbeddedExecutors(deps: EmbeddedExecutorDeps): EmbeddedExecutors {
  const name = deps.name ?? `${os.hostname()}/embedded`;
  const inFlight = new Map<string, AbortController>();
  let subscription: WorkerSubscription | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const beat = async () => {
    const leases = (await deps.queue.leasedIds()).filter((l) => l.worker === name);
    const expiry = leases.length ? Math.max(...leases.map((l) => l.expiresAt)) : Date.now() + deps.leaseMs;
    await deps.workers.heartbeat(name, [...inFlight.keys()], new Date(expiry));
  };

  /** Ends a run the executor could not even start, so it never stays `running` with nobody behind it. */
  const failBeforeStart = async (runId: string, reason: string, err: unknown) => {
    deps.logger.warn('run could not start', { run_id: runId, reason, error: (err as Error).message });
    await deps.ingest.finish(runId, { conclusion: 'error', reason }, ['running']);
  };

  async function execute(job: Readonly<RunJob>, lease: Lease): Promise<void> {
    const runId = job.runId;
    // The claim is a compare-and-set pending → running: a run canceled (or started elsewhere) meanwhile is not run.
    const leasedAt = Date.now();
    let timings: Record<string, unknown> = {};
    if (!(await deps.ingest.claim(runId, name))) return;
    const claimedAt = Date.now();
    let bundle: RunBundle;
    try {
      bundle = await deps.bundles.build(runId);
      timings = {
        leased_at: new Date(leasedAt).toISOString(),
        claim_ms: claimedAt - leasedAt,
        bundle_ms: Date.now() - claimedAt,
      };
    } catch (err) {
      // The one dispatch decision (core's run-dispatch), as queue mode makes it at enqueue. Left to the sweep (the
      // database away…): the run stays claimed by nobody, and the recovery sweep finds it without an executor.
      const verdict = classifyBundleFailure(err);
      if ('finish' in verdict) await failBeforeStart(runId, verdict.finish, err);
      else
        deps.logger.warn('run could not start; left to the recovery sweep', {
          run_id: runId,
          error: (err as Error)?.message ?? String(err),
        });
      return;
    }
    // Our own controller, so shutdown can cancel a run as well as the queue can.
    const controller = new AbortController();
    const onLeaseAbort = () => controller.abort(lease.signal.reason);
    lease.signal.addEventListener('abort', onLeaseAbort, { once: true });
    if (lease.signal.aborted) controller.abort(lease.signal.reason);
    inFlight.set(runId, controller);
    const renew = setInterval(() => lease.heartbeat(), deps.heartbeatMs ?? HEARTBEAT_INTERVAL_MS);
    let lastSeq = 0;
    let finished = false;
    try {
      const outcome = await deps.runPlaybook(bundle, {
        ...deps.playbookOptions,
        signal: controller.signal,
        onEvent: (event) => {
          lastSeq = event.seq;
          if (event.kind === 'status' && event.data.status === 'finished') finished = true;
          deps.ingest.push(
            event.kind === 'status' && event.data.status === 'running'
              ? { ...event, data: { ...event.data, worker: name } }
              : event,
          );
        },
        // The dispatch benchmark reads this line: lease, claim and bundle timings, then the moment of spawn.
        onSpawn: (pid, at, warm) =>
          deps.logger.info('ansible-playbook started', {
            run_id: runId,
            pid,
            at: at.toISOString(),
            warm,
            ...timings,
          }),
      });
      if (outcome.cleanupProblems)
        deps.logger.warn('cleanup after the run failed', { run_id: runId, problems: outcome.cleanupProblems });
      await deps.ingest.flush();
    } catch (err) {
      // runPlaybook reports everything it meets as the run's outcome; reaching here is a bug or a dead database.
      deps.logger.error('executor failed', { run_id: runId, last_seq: lastSeq, error: (err as Error).message });
      if (!finished) {
        await deps.ingest.flush().catch(() => {});
        await deps.ingest.finish(runId, { conclusion: 'error', reason: 'executor_error' }, ['running']);
      }
    } finally {
      clearInterval(renew);
      lease.signal.removeEventListener('abort', onLeaseAbort);
      inFlight.delete(runId);
    }
  }

  return {
    name,
    running: () => [...inFlight.keys()],
    async start() {
      await deps.workers.register({ name, host: os.hostname(), mode: 'embedded', labels: [], capacity: deps.capacity });
      subscription = deps.queue.lease({ name, labels: [], capacity: deps.capacity }, execute);
      heartbeat = setInterval(
        () => void beat().catch((err: Error) => deps.logger.warn('worker heartbeat failed', { error: err.message })),
        deps.heartbeatMs ?? HEARTBEAT_INTERVAL_MS,
      );
      heartbeat.unref();
      await beat();
    },
    async stop(graceMs) {
      if (!subscription) return;
      const closing = subscription.close();
      const timer = setTimeout(() => {
        for (const controller of inFlight.values()) controller.abort(new ShutdownAbort());
      }, graceMs);
      await closing;
      clearTimeout(timer);
      if (heartbeat) clearInterval(heartbeat);
      await beat().catch(() => {});
    },
  };
}
