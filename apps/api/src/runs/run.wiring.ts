// Composes the runs domain: the RunQueue and EventBus seams (in-process in embedded mode), the ingester that
// persists executor events before publishing them, the runs service, and the recovery sweep.
import os from 'node:os';
import {
  type Authorizer,
  type Clock,
  classifyBundleFailure,
  createRunAccess,
  createRunBundleBuilder,
  createRunIngester,
  createPipelineService,
  createRunPreparer,
  createRunRecovery,
  createRunService,
  createRunDecisions,
  createRunHolder,
  policyView,
  type Keyring,
  createWorkerService,
  isFinalEvent,
  createRunOutputService,
  type CredentialService,
  type InventoryService,
  type ProjectService,
  UnavailableError,
} from '@baton/core';
import type { RunEvent } from '@baton/contracts';
import type { Database } from '@baton/db';
import {
  inventoryForHosts,
  inventoryHosts,
  parseInventory,
  resolvePlaybookAtBranch,
  type Sandbox,
  sealBundle,
  type FetchPolicy,
} from '@baton/executor';
import {
  createInProcessEventBus,
  createInProcessRunQueue,
  type EventBus,
  type OnLeaseLost,
  type RunJob,
  type RunQueue,
  withTimeout,
} from '@baton/queue';
import type * as QueueRedis from '@baton/queue/redis';
import { INVENTORY_LIMITS } from '../inventories/inventory.wiring.js';
import { inventoryToolCaches, memoizeInventoryTool } from '../inventories/inventory-memo.js';
import { processAlive } from './process-alive.js';
import { createRunMetrics } from '../system/run-metrics.js';

export interface RunWiringOptions {
  authz: Authorizer;
  clock: Clock;
  /** seals a run's secret vars (survey password answers) and opens them at dispatch */
  keyring: Keyring;
  /** lease length of the in-process queue (tests shorten it) */
  leaseMs?: number | undefined;
  credentials: Pick<CredentialService, 'requireUsable' | 'reveal'>;
  projects: Pick<ProjectService, 'playbookSource'>;
  inventories: Pick<InventoryService, 'requireUsable'>;
  /** where ingest and lost-lease errors go (they have no caller); stderr when not given */
  reportError?: ((err: unknown) => void) | undefined;
  /** ansible-inventory runs at submit (inline inventories, shards) go in it too */
  sandbox?: Sandbox | undefined;
  /** where git may fetch from (BATON_FETCH_DENY_PRIVATE) */
  fetchPolicy?: FetchPolicy | undefined;
  /** Queue mode (BATON_REDIS_URL): BullMQ and Redis pub/sub instead of the in-process seams; jobs carry sealed bundles. */
  queueMode?: QueueModeSettings | undefined;
  /** BATON_RUN_OUTPUT_LIMIT_MB in bytes: the ingester holds it whichever executor wrote the events */
  outputLimitBytes?: number | undefined;
}

export interface QueueModeSettings {
  redisUrl: string;
  prefix: string;
  /** BATON_WORKER_KEY, parsed: every job's bundle is sealed under it */
  workerKey: Buffer;
  /**
   * `@baton/queue/redis`, imported by whoever starts queue mode (loadQueueRedis): embedded mode never loads BullMQ and
   * ioredis (some 300 modules; start-up time and memory).
   */
  redis: QueueRedisModule;
}

export type QueueRedisModule = typeof QueueRedis;

/** Loads the Redis implementations; only queue mode calls it. */
export const loadQueueRedis = (): Promise<QueueRedisModule> => import('@baton/queue/redis');

/** How long a request waits for Redis before it gives up on it. */
const QUEUE_TIMEOUT_MS = 5_000;

const withinQueueTimeout = <T>(work: Promise<T>, what: string): Promise<T> =>
  withTimeout(
    work,
    QUEUE_TIMEOUT_MS,
    () =>
      new UnavailableError(
        `the run queue (Redis) did not answer within ${QUEUE_TIMEOUT_MS / 1000} s while ${what}; try again`,
      ),
  );

/** ansible-inventory's answers for runs, remembered for the process (as inventory.wiring.ts does for stored ones). */
const INVENTORY_TOOL_CACHES = inventoryToolCaches(256);

export function createRunServices(db: Database, opts: RunWiringOptions) {
  const { repos } = db;
  // The queue reports lost leases before the ingester exists; the callback is bound once it does.
  let onLost: OnLeaseLost = () => {};
  // The single writer of run events and, after submit, of run status; its errors have no caller to go to.
  const reportRunError = (err: unknown) => (opts.reportError ?? ((e) => console.error('baton: runs:', e)))(err);
  const lease = {
    onLost: (...args: Parameters<OnLeaseLost>) => onLost(...args),
    ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}),
  };
  const q = opts.queueMode;
  const runQueue: RunQueue = q
    ? q.redis.createRedisRunQueue({
        redisUrl: q.redisUrl,
        prefix: q.prefix,
        ...lease,
        watchLeases: true,
        onError: reportRunError,
      })
    : createInProcessRunQueue(lease);
  const eventBus: EventBus = q
    ? q.redis.createRedisEventBus({ redisUrl: q.redisUrl, prefix: q.prefix, onError: reportRunError })
    : createInProcessEventBus();
  const runAccess = createRunAccess({ runs: repos.runs, authz: opts.authz, teams: repos.teams });
  // Approval policies: evaluated at every submission (runs, pipelines, retries), snapshotted onto what they hold.
  const holder = createRunHolder({
    policies: { listEnabled: async () => (await repos.policies.listEnabled()).map(policyView) },
  });
  // What the ingester stores and finishes, for /metrics (each app registers these in its registry).
  const runMetrics = createRunMetrics();
  const ingester = createRunIngester({
    transaction: db.transaction,
    publish: (e) => eventBus.publish(e),
    // Pipeline steps an advance made pending; bound once the dispatch queue exists (below).
    enqueue: (job) => dispatchQueue.enqueue(job),
    clock: opts.clock,
    onError: reportRunError,
    onStored: runMetrics.onStored,
    onFinished: runMetrics.onFinished,
    outputLimitBytes: opts.outputLimitBytes,
  });
  onLost = (runId) =>
    void ingester
      .finish(runId, { conclusion: 'error', reason: 'worker_lost' }, ['running', 'pending'])
      .catch(reportRunError);
  const runBundles = createRunBundleBuilder({
    runs: repos.runs,
    projects: repos.projects,
    inventories: repos.inventories,
    knownHosts: repos.knownHosts,
    credentials: opts.credentials,
    openSecret: (sealed) => opts.keyring.decrypt(sealed).toString('utf8'),
  });
  // Queue mode: workers never open the database, so each job carries its bundle, sealed, built when it is enqueued.
  const dispatchQueue: Pick<RunQueue, 'enqueue' | 'cancel' | 'pendingIds' | 'leasedIds'> = q
    ? {
        pendingIds: () => runQueue.pendingIds(),
        leasedIds: () => runQueue.leasedIds(),
        // Redis away: a cancel is a 503 (nothing changes, the caller tries again), not a request hanging on reconnects.
        cancel: (runId) => withinQueueTimeout(runQueue.cancel(runId), `canceling run ${runId}`),
        async enqueue(job: RunJob) {
          let sealed: string;
          try {
            sealed = sealBundle(await runBundles.build(job.runId), q.workerKey);
          } catch (err) {
            // The one dispatch decision (core's run-dispatch). Left to the sweep (the database away…): thrown, so
            // the run stays pending and the recovery sweep enqueues it again.
            const verdict = classifyBundleFailure(err);
            if (!('finish' in verdict)) throw err;
            reportRunError(new Error(`run ${job.runId} cannot be dispatched: ${(err as Error).message}`));
            await ingester.finish(job.runId, { conclusion: 'error', reason: verdict.finish }, ['pending']);
            return;
          }
          // The run is committed: if Redis is away the submit still answers, and the recovery sweep enqueues it later.
          await withinQueueTimeout(runQueue.enqueue({ ...job, bundle: sealed }), `enqueueing run ${job.runId}`);
        },
      }
    : runQueue;
  // Runs a decision finishes (rejected, a hold that expired) never pass the ingester: /metrics counts them from their
  // final events, published after commit.
  const countDecided = async (e: RunEvent): Promise<void> => {
    if (!isFinalEvent(e)) return;
    const row = await repos.runs.findById(e.run_id);
    if (row?.status === 'finished') runMetrics.onFinished([row]);
  };
  const decisions = createRunDecisions({
    transaction: db.transaction,
    runs: repos.runs,
    teams: repos.teams,
    publish: async (e) => {
      await countDecided(e).catch(reportRunError);
      await eventBus.publish(e);
    },
    enqueue: (job) => dispatchQueue.enqueue(job),
    onError: reportRunError,
    clock: opts.clock,
  });
  const runRecovery = createRunRecovery({
    runs: repos.runs,
    expireHolds: () => decisions.expireHolds(),
    advance: (id) => ingester.advance(id),
    workers: repos.workers,
    queue: dispatchQueue,
    finish: (...args) => ingester.finish(...args),
    clock: opts.clock,
    self: { hostname: os.hostname(), pid: process.pid, processAlive },
  });
  // Submit, cancel and retry; ansible and git are the executor's own functions, bounded like inventory parsing.
  const inventoryTool = memoizeInventoryTool(
    {
      parse: (content: string) => parseInventory({ content, ...INVENTORY_LIMITS, sandbox: opts.sandbox }),
      hosts: (o: { content: string; limit?: string | undefined }) =>
        inventoryHosts({ ...o, ...INVENTORY_LIMITS, sandbox: opts.sandbox }),
      forHosts: inventoryForHosts,
    },
    256,
    INVENTORY_TOOL_CACHES,
  );
  const runPreparer = createRunPreparer({
    projects: opts.projects,
    resolvePlaybook: (o) => resolvePlaybookAtBranch({ ...o, sandbox: opts.sandbox, fetchPolicy: opts.fetchPolicy }),
    inventories: opts.inventories,
    credentials: opts.credentials,
    inventoryTool,
    seal: (plaintext) => opts.keyring.encrypt(plaintext),
  });
  const pipelines = createPipelineService({
    runs: repos.runs,
    transaction: db.transaction,
    authz: opts.authz,
    clock: opts.clock,
    preparer: runPreparer,
    recheck: { projects: opts.projects, inventories: opts.inventories, credentials: opts.credentials },
    holder,
    inventoryTool,
    advance: (id) => ingester.advance(id),
    onAdvanceError: (id, err) =>
      reportRunError(
        new Error(`pipeline ${id} committed but not advanced (the recovery sweep will): ${(err as Error).message}`),
      ),
  });
  const runs = createRunService({
    runs: repos.runs,
    runApprovals: repos.runApprovals,
    holder,
    decisions,
    transaction: db.transaction,
    authz: opts.authz,
    access: runAccess,
    clock: opts.clock,
    projects: opts.projects,
    preparer: runPreparer,
    inventories: opts.inventories,
    credentials: opts.credentials,
    inventoryTool,
    queue: dispatchQueue,
    finish: (...args) => ingester.finish(...args),
    advance: (id) => ingester.advance(id),
    retryPipeline: (p, run) => pipelines.retry(p, run),
    onEnqueueError: (runId, err) =>
      reportRunError(
        new Error(`run ${runId} committed but not enqueued (the recovery sweep will): ${(err as Error).message}`),
      ),
  });
  const runOutput = createRunOutputService({ runEvents: repos.runEvents, runs: repos.runs, access: runAccess });
  const workers = createWorkerService({
    workers: repos.workers,
    runs: repos.runs,
    access: runAccess,
    clock: opts.clock,
  });
  return {
    runs,
    runPreparer,
    pipelines,
    runBundles,
    runOutput,
    runQueue,
    eventBus,
    runAccess,
    runIngest: ingester,
    runMetrics,
    runRecovery,
    workers,
    /** Ends the seams; executors must have stopped first. */
    async closeRuns(): Promise<void> {
      await ingester.close();
      await runQueue.close();
      await eventBus.close();
    },
  };
}
