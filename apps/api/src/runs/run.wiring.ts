// Composes the runs domain: the RunQueue and EventBus seams (in-process in embedded mode), the ingester that
// persists executor events before publishing them, the runs service, and the recovery sweep.
import os from 'node:os';
import {
  type Authorizer, type Clock, createRunAccess, createRunBundleBuilder, createRunIngester, createRunRecovery, createRunService, createWorkerService, createRunOutputService,
  type CredentialService, type InventoryService, type ProjectService,
} from '@baton/core';
import type { Database } from '@baton/db';
import { inventoryForHosts, inventoryHosts, parseInventory, resolvePlaybookAtBranch, type Sandbox } from '@baton/executor';
import { createInProcessEventBus, createInProcessRunQueue, type EventBus, type OnLeaseLost, type RunQueue } from '@baton/queue';
import { INVENTORY_LIMITS } from '../inventories/inventory.wiring.js';
import { processAlive } from './process-alive.js';

export interface RunWiringOptions {
  authz: Authorizer;
  clock: Clock;
  /** lease length of the in-process queue (tests shorten it) */
  leaseMs?: number | undefined;
  credentials: Pick<CredentialService, 'requireUsable' | 'reveal'>;
  projects: Pick<ProjectService, 'playbookSource'>;
  inventories: Pick<InventoryService, 'requireUsable'>;
  /** where ingest and lost-lease errors go (they have no caller); stderr when not given */
  reportError?: ((err: unknown) => void) | undefined;
  /** ansible-inventory runs at submit (inline inventories, shards) go in it too */
  sandbox?: Sandbox | undefined;
}

export function createRunServices(db: Database, opts: RunWiringOptions) {
  const { repos } = db;
  // The queue reports lost leases before the ingester exists; the callback is bound once it does.
  let onLost: OnLeaseLost = () => {};
  const runQueue: RunQueue = createInProcessRunQueue({ onLost: (...args) => onLost(...args), ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}) });
  const eventBus: EventBus = createInProcessEventBus();
  const runAccess = createRunAccess({ runs: repos.runs, authz: opts.authz });
  // The single writer of run events and, after submit, of run status; its errors have no caller to go to.
  const reportRunError = (err: unknown) => (opts.reportError ?? ((e) => console.error('baton: runs:', e)))(err);
  const ingester = createRunIngester({
    transaction: db.transaction, publish: (e) => eventBus.publish(e), clock: opts.clock, onError: reportRunError,
  });
  onLost = (runId) => void ingester.finish(runId, { conclusion: 'error', reason: 'worker_lost' }, ['running', 'pending']).catch(reportRunError);
  const runRecovery = createRunRecovery({
    runs: repos.runs, workers: repos.workers, queue: runQueue, finish: (...args) => ingester.finish(...args), clock: opts.clock,
    self: { hostname: os.hostname(), pid: process.pid, processAlive },
  });
  // Submit, cancel and retry; ansible and git are the executor's own functions, bounded like inventory parsing.
  const runs = createRunService({
    runs: repos.runs, transaction: db.transaction, authz: opts.authz, access: runAccess, clock: opts.clock, projects: opts.projects,
    resolvePlaybook: resolvePlaybookAtBranch, inventories: opts.inventories, credentials: opts.credentials,
    inventoryTool: {
      parse: (content) => parseInventory({ content, ...INVENTORY_LIMITS, sandbox: opts.sandbox }),
      hosts: (o) => inventoryHosts({ ...o, ...INVENTORY_LIMITS, sandbox: opts.sandbox }),
      forHosts: inventoryForHosts,
    },
    queue: runQueue, finish: (...args) => ingester.finish(...args),
    onEnqueueError: (runId, err) => reportRunError(new Error(`run ${runId} committed but not enqueued (the recovery sweep will): ${(err as Error).message}`)),
  });
  const runBundles = createRunBundleBuilder({ runs: repos.runs, projects: repos.projects, inventories: repos.inventories, credentials: opts.credentials });
  const runOutput = createRunOutputService({ runEvents: repos.runEvents, runs: repos.runs, access: runAccess });
  const workers = createWorkerService({ workers: repos.workers, runs: repos.runs, access: runAccess, clock: opts.clock });
  return {
    runs,
    runBundles,
    runOutput,
    runQueue,
    eventBus,
    runAccess,
    runIngest: ingester,
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
