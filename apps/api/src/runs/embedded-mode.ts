// What `baton serve` runs beside the HTTP API in embedded mode: the start-up reconcile, the in-process
// executors, and the periodic recovery sweep. The harness uses it too, so tests run the same path.
import { cleanupLeftoverRuns, runPlaybook, type Sandbox } from '@baton/executor';
import type { Logger } from 'winston';
import type { Services } from '../wiring.js';
import { createEmbeddedExecutors, type EmbeddedExecutors } from './embedded-executors.js';
import { startExecutorProcess } from './executor-process.js';

/** How often the recovery sweep looks for runs pending in the database but absent from the queue. */
export const SWEEP_INTERVAL_MS = 30_000;

export interface EmbeddedModeOptions {
  executors: number;
  workDir?: string | undefined;
  /** where projects' Galaxy requirements are cached (`<data dir>/requirements`); unset: installed for each run */
  requirementsCache?: string | undefined;
  /** BATON_FETCH_DENY_PRIVATE for checkouts and Galaxy servers */
  fetchDenyPrivate?: boolean | undefined;
  /** BATON_RUN_PRELOAD (runPlaybook's preloadPython; default true) */
  preloadPython?: boolean | undefined;
  sandbox: Sandbox;
  logger: Logger;
  leaseMs: number;
  sweepIntervalMs?: number | undefined;
  /** executor name (default `<hostname>/embedded`) */
  name?: string | undefined;
  /**
   * Run playbooks in an executor process of their own (the built server). Tests run from TypeScript sources,
   * which that process cannot load, and call runPlaybook in-process; the code path is otherwise the same.
   */
  executorProcess?: boolean | undefined;
  /** the executor process exits after this long without a run, and the next run starts another; 0/unset: it stays */
  executorIdleMs?: number | undefined;
  /**
   * Reconcile at start and sweep every `sweepIntervalMs` (default true). Queue mode turns both off: there the
   * sweep is the leader replica's, and this process only runs its optional executors.
   */
  recovery?: boolean | undefined;
  /** ansible's grace periods after SIGINT and SIGTERM on cancel (tests shorten them) */
  interruptGraceMs?: number | undefined;
  terminateGraceMs?: number | undefined;
  /** BATON_RUN_OUTPUT_LIMIT_MB in bytes: the log the executor keeps (runPlaybook's maxLogBytes) */
  outputLimitBytes?: number | undefined;
}

/** One pass of the recovery sweep, its findings logged. */
export async function sweepOnce(services: Pick<Services, 'runRecovery'>, logger: Logger): Promise<void> {
  try {
    const r = await services.runRecovery.reconcile();
    if (r.lost.length || r.requeued.length) logger.warn('recovery sweep', { lost: r.lost, requeued: r.requeued });
    if (r.expired.length) logger.info('recovery sweep: held runs expired', { expired: r.expired });
    if (r.failed.length)
      logger.error('recovery sweep could not enqueue runs (tried again next sweep)', { failed: r.failed });
  } catch (err) {
    logger.error('recovery sweep failed', { error: (err as Error).message });
  }
}

export interface EmbeddedMode {
  executors: EmbeddedExecutors;
  /** Readiness beyond the database (queue mode: Redis answers); rejects when not ready. */
  ping?(): Promise<void>;
  /** Queue mode: whether this replica led at its last beat (leader-only chores: the sweep, retention); absent: alone. */
  leads?(): boolean;
  /** Stops taking runs, lets running ones go on for `graceMs`, cancels the rest, then ends the seams. */
  stop(graceMs: number): Promise<void>;
}

type RunServices = Pick<Services, 'runQueue' | 'runIngest' | 'runBundles' | 'runRecovery' | 'workers' | 'closeRuns'>;

export async function startEmbeddedMode(services: RunServices, opts: EmbeddedModeOptions): Promise<EmbeddedMode> {
  const { logger } = opts;
  // Run directories of a server that died (its ssh-agents, ansible process groups, FIFOs) are cleared first.
  if (opts.workDir) {
    const cleaned = await cleanupLeftoverRuns(opts.workDir);
    if (cleaned.length) logger.warn('removed run directories left by a server that died', { dirs: cleaned });
  }
  const recovery = opts.recovery ?? true;
  // Nothing holds a lease in a process that just started: every `running` run is lost, every pending one requeued.
  if (recovery) {
    const recovered = await services.runRecovery.reconcile();
    if (recovered.lost.length || recovered.requeued.length)
      logger.info('runs recovered at start', { lost: recovered.lost, requeued: recovered.requeued });
  }

  const executor =
    opts.executorProcess && opts.executors > 0
      ? startExecutorProcess({
          workDir: opts.workDir,
          onLost: (message, cleaned) => logger.error(message, { removed_run_dirs: cleaned }),
          idleExitMs: opts.executorIdleMs,
          onRetired: () => logger.debug('the executor process exited after a time without runs'),
        })
      : undefined;
  const executors = createEmbeddedExecutors({
    queue: services.runQueue,
    ingest: services.runIngest,
    bundles: services.runBundles,
    workers: services.workers,
    runPlaybook: executor ? executor.runPlaybook : runPlaybook,
    playbookOptions: {
      workRoot: opts.workDir,
      sandbox: opts.sandbox,
      requirementsCache: opts.requirementsCache,
      fetchPolicy: { denyPrivate: opts.fetchDenyPrivate ?? false },
      ...(opts.preloadPython !== undefined ? { preloadPython: opts.preloadPython } : {}),
      ...(opts.interruptGraceMs !== undefined ? { interruptGraceMs: opts.interruptGraceMs } : {}),
      ...(opts.terminateGraceMs !== undefined ? { terminateGraceMs: opts.terminateGraceMs } : {}),
      ...(opts.outputLimitBytes !== undefined ? { maxLogBytes: opts.outputLimitBytes } : {}),
    },
    capacity: opts.executors,
    name: opts.name,
    logger,
    leaseMs: opts.leaseMs,
  });
  if (opts.executors > 0) await executors.start();

  const sweep = recovery
    ? setInterval(() => void sweepOnce(services, logger), opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS)
    : undefined;
  sweep?.unref();

  return {
    executors,
    async stop(graceMs) {
      clearInterval(sweep);
      await executors.stop(graceMs);
      await executor?.close();
      await services.closeRuns();
    },
  };
}
