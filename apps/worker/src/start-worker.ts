// Wires `baton worker`: the Redis seams (run queue, event stream, worker registry) around the lease loop.
// Loaded by main.ts only once the configuration is known to be good.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  cleanupLeftoverRuns,
  createWarmLaunches,
  resolveSandboxMode,
  runPlaybook,
  type Sandbox,
  SandboxUnavailableError,
} from '@baton/executor';
import { withTimeout } from '@baton/queue';
import {
  createRedisRunQueue,
  createRunClaims,
  createRunEventProducer,
  createWorkerRegistry,
  type WorkerHeartbeat,
  type WorkerRegistry,
} from '@baton/queue/redis';
import type { Logger } from 'winston';
import { type WorkerConfig, WorkerConfigError } from './config.js';
import { startRequirementsRetention } from './requirements-retention.js';
import { createWorkerDaemon, type WorkerDaemon } from './worker-daemon.js';

/** A worker of the same name that beat this recently, from another process, is taken to be alive. */
export const NAME_IN_USE_MS = 15_000;
/** How long the start waits for Redis to answer before giving up with a message. */
const REDIS_START_TIMEOUT_MS = 15_000;
/** Where the systemd unit keeps its environment file (deploy/systemd): a playbook must not read it. */
const ENV_FILE_DIR = '/etc/baton';

export interface RunningWorker {
  daemon: WorkerDaemon;
  /** Stops the daemon (grace, then cancel), then closes the queue, the event producer and the registry. */
  stop(graceMs: number): Promise<void>;
  /** Cancels every run at once (a second signal). */
  abortNow(): void;
}

/** What a sandboxed playbook on a worker host must not read: the unit's environment file and the user's runtime sockets. */
function hiddenPaths(): string[] {
  const uid = process.getuid?.();
  return [ENV_FILE_DIR, uid === undefined ? undefined : `/run/user/${uid}`].filter(
    (p): p is string => p !== undefined && fs.existsSync(p),
  );
}

/**
 * Another live process already beats under this name: two daemons with one name would overwrite each other's
 * registry entry and hide each other's runs. A graceful stop's last beat (`stopped`) frees the name at once.
 */
export function nameConflict(
  beats: WorkerHeartbeat[],
  name: string,
  self: { host: string; pid: number },
  nowMs: number,
): WorkerHeartbeat | undefined {
  return beats.find(
    (b) =>
      b.name === name &&
      !b.stopped &&
      nowMs - Date.parse(b.last_heartbeat) < NAME_IN_USE_MS &&
      (b.pid !== self.pid || b.host !== self.host),
  );
}

async function checkNameFree(registry: WorkerRegistry, name: string): Promise<void> {
  const beats = await withTimeout(
    registry.list(),
    REDIS_START_TIMEOUT_MS,
    () => new Error(`Redis did not answer within ${REDIS_START_TIMEOUT_MS / 1000} s (BATON_REDIS_URL)`),
  );
  const other = nameConflict(beats, name, { host: os.hostname(), pid: process.pid }, Date.now());
  if (other) {
    throw new WorkerConfigError(
      `a worker named "${name}" (host ${other.host}, pid ${other.pid}) sent a heartbeat at ${other.last_heartbeat} and looks alive; ` +
        'give this one another name with --name or BATON_WORKER_NAME',
    );
  }
}

function checkWorkDir(dir: string): void {
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new WorkerConfigError(`BATON_WORK_DIR: ${dir} is not a directory`);
}

export async function startWorker(config: WorkerConfig, logger: Logger): Promise<RunningWorker> {
  checkWorkDir(config.workDir);
  const sandboxMode = await resolveSandboxMode(config.sandbox).catch((err: unknown) => {
    throw err instanceof SandboxUnavailableError ? new WorkerConfigError(err.message) : err;
  });
  const sandbox: Sandbox = { mode: sandboxMode, hidden: hiddenPaths(), priority: config.runPriority };
  // Run directories of a worker that died here (its ssh-agents, ansible process groups, FIFOs) go first.
  const cleaned = await cleanupLeftoverRuns(config.workDir);
  if (cleaned.length) logger.warn('removed run directories left by a worker that died', { dirs: cleaned });

  const onError = (role: string) => (err: unknown) =>
    logger.warn('redis error', { role, error: (err as Error)?.message ?? String(err) });
  const { redisUrl, prefix, name } = config;
  const registry = createWorkerRegistry({ redisUrl, prefix, onError: onError('registry') });
  try {
    await checkNameFree(registry, name);
  } catch (err) {
    await registry.close();
    throw err;
  }
  // The queue reports lost leases and the producer a full buffer to the daemon, which is built on both: late-bound.
  const lostTo: { daemon?: WorkerDaemon } = {};
  const events = createRunEventProducer({
    redisUrl,
    prefix,
    maxBufferedBytes: config.bufferMb * 1024 * 1024,
    onError: onError('events'),
    onBackpressure: (full) => lostTo.daemon?.eventBufferFull(full),
  });
  const claims = createRunClaims({ redisUrl, prefix, onError: onError('claims') });
  const queue = createRedisRunQueue({
    redisUrl,
    prefix,
    onError: onError('queue'),
    onLost: (runId, worker, reason, error) => {
      logger.warn('lease lost', {
        run_id: runId,
        worker,
        reason,
        ...(error !== undefined ? { error: (error as Error)?.message ?? String(error) } : {}),
      });
      if (reason === 'expired' && worker === name) lostTo.daemon?.leaseLost(runId);
    },
  });
  const requirementsCache = path.join(config.workDir, 'baton-requirements');
  // The next run's launch (process chain and sandbox) starts ahead, once a run ended.
  const launches = createWarmLaunches();
  const daemon = createWorkerDaemon({
    queue,
    events,
    registry,
    claims,
    runPlaybook,
    workerKey: config.workerKey,
    name,
    labels: config.labels,
    capacity: config.concurrency,
    // Each worker host keeps its own Galaxy requirements cache beside its run directories.
    playbookOptions: {
      workRoot: config.workDir,
      sandbox,
      requirementsCache,
      fetchPolicy: { denyPrivate: config.fetchDenyPrivate },
      maxLogBytes: config.runOutputLimitBytes,
      launches,
      preloadPython: config.runPreload,
    },
    logger,
    graceMs: config.runGraceSeconds * 1000,
  });
  lostTo.daemon = daemon;
  await daemon.start();
  const retention =
    config.retentionDays === undefined
      ? undefined
      : startRequirementsRetention({ cacheDir: requirementsCache, days: config.retentionDays, logger });
  logger.info('worker started', {
    name,
    labels: config.labels,
    capacity: config.concurrency,
    prefix,
    sandbox: sandbox.mode,
    work_dir: config.workDir,
  });

  return {
    daemon,
    abortNow: () => daemon.abortAll(),
    async stop(graceMs) {
      await retention?.stop();
      await daemon.stop(graceMs);
      launches.close();
      // Subscriptions first (stop waited for them), then the queue, then the rest: see createRedisRunQueue.
      await queue.close();
      await events.close();
      await claims.close();
      await registry.close();
    },
  };
}
