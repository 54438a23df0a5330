// The recovery sweep (ARCHITECTURE.md, "A run's path" steps 1 and 6): at start and then periodically, make the
// queue and the database agree again. Nothing here runs a playbook twice: the queue's enqueue is idempotent
// and an executor claims a run with a CAS on its status.
import type { RunRepo, WorkerRepo, WorkerRow } from '@baton/db';
import { type Clock, iso } from '../common/clock.js';
import { FORGET_WORKERS_AFTER_MS, freshnessOf, parseEmbeddedWorkerName } from '../workers/worker.service.js';
import type { RunIngester } from './run-ingest.js';
import { isDispatchable } from './run-rows.js';

/** The RunQueue seam, structurally (core never imports the queue package). */
export interface RecoveryQueue {
  enqueue(job: { runId: string; labels?: string[] }): Promise<void>;
  pendingIds(): Promise<string[]>;
  leasedIds(): Promise<Array<{ runId: string }>>;
}

/** This process, as the sweep needs it to tell a dead executor from one living in another process. */
export interface RecoverySelf {
  /** this machine's hostname: embedded executors here are named `<hostname>/embedded/<pid>` */
  hostname: string;
  pid: number;
  /** false once no process has this pid (kill(pid, 0) fails with ESRCH) */
  processAlive(pid: number): boolean;
}

export interface RunRecoveryDeps {
  runs: Pick<RunRepo, 'listByStatus'>;
  /** moves a pipeline on (the ingester's advance): a step whose predecessor finished while nothing advanced starts */
  advance?: (pipelineId: string) => Promise<void>;
  workers: Pick<WorkerRepo, 'list' | 'deleteStaleBefore'>;
  queue: RecoveryQueue;
  finish: RunIngester['finish'];
  /** finishes `rejected`/`expired` the held runs whose hold has expired (run-decision.ts); their ids */
  expireHolds?: () => Promise<string[]>;
  clock: Clock;
  self: RecoverySelf;
}

/** Splits and pipelines are never queued: their shards and steps are (a split step: its shards). */
const QUEUED_KINDS = ['run', 'shard', 'step'];

export function createRunRecovery(deps: RunRecoveryDeps) {
  /**
   * Whether the executor named on a running run may still hold it: its row exists and heartbeated within a
   * lease, and, for an embedded executor of this host, its process lives and is not this one (this process
   * holds no lease on the run, or the sweep would not ask).
   */
  function workerAlive(name: string | null, rows: Map<string, WorkerRow>, now: Date): boolean {
    if (name === null) return false;
    const embedded = parseEmbeddedWorkerName(name);
    if (embedded && embedded.hostname === deps.self.hostname) {
      if (embedded.pid === deps.self.pid || !deps.self.processAlive(embedded.pid)) return false;
    }
    const row = rows.get(name);
    return row !== undefined && freshnessOf(new Date(row.heartbeat_at), now) !== 'dead';
  }

  return {
    /**
     * Running runs that no lease of this process holds and whose executor is not alive are finished error/worker_lost
     * (runs of another live executor are left to it); pending runs the queue lacks are enqueued again, oldest first.
     */
    async reconcile(): Promise<{
      requeued: string[];
      lost: string[];
      expired: string[];
      failed: Array<{ runId: string; error: string }>;
    }> {
      // The database first, the queue second: a run leased between the two reads is then seen as leased,
      // never as lost (its lease exists before its claim makes it running).
      const running = (await deps.runs.listByStatus('running', { kinds: QUEUED_KINDS })).filter(isDispatchable);
      const leased = new Set((await deps.queue.leasedIds()).map((l) => l.runId));
      const now = deps.clock();
      const workers = new Map((await deps.workers.list()).map((w) => [w.name, w]));
      const lost: string[] = [];
      for (const run of running) {
        if (leased.has(run.id) || workerAlive(run.worker, workers, now)) continue;
        if (await deps.finish(run.id, { conclusion: 'error', reason: 'worker_lost' }, ['running'])) lost.push(run.id);
      }
      await deps.workers.deleteStaleBefore(iso(new Date(now.getTime() - FORGET_WORKERS_AFTER_MS)));
      const failed: Array<{ runId: string; error: string }> = [];
      let expired: string[] = [];
      try {
        expired = (await deps.expireHolds?.()) ?? [];
      } catch (err) {
        failed.push({ runId: '(held runs)', error: (err as Error)?.message ?? String(err) });
      }
      // Pipelines whose current step finished without moving them on (nothing advanced it): on to the next step.
      for (const status of ['pending', 'running'])
        for (const pipeline of await deps.runs.listByStatus(status, { kinds: ['pipeline'] })) {
          try {
            await deps.advance?.(pipeline.id);
          } catch (err) {
            failed.push({ runId: pipeline.id, error: (err as Error)?.message ?? String(err) });
          }
        }
      const pending = (await deps.runs.listByStatus('pending', { kinds: QUEUED_KINDS })).filter(isDispatchable);
      const held = new Set([...(await deps.queue.pendingIds()), ...(await deps.queue.leasedIds()).map((l) => l.runId)]);
      const requeued: string[] = [];
      for (const run of pending) {
        if (held.has(run.id)) continue;
        const labels = run.labels;
        // One run that cannot be enqueued (its bundle, a queue hiccup) must not keep every later one out of the queue.
        try {
          await deps.queue.enqueue({ runId: run.id, ...(labels.length > 0 ? { labels } : {}) });
          requeued.push(run.id);
        } catch (err) {
          failed.push({ runId: run.id, error: (err as Error)?.message ?? String(err) });
        }
      }
      return { requeued, lost, expired, failed };
    },
  };
}
export type RunRecovery = ReturnType<typeof createRunRecovery>;
