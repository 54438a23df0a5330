// The recovery sweep (ARCHITECTURE.md, "A run's path" steps 1 and 6): at start and then periodically, make the
// queue and the database agree again. Nothing here runs a playbook twice: the queue's enqueue is idempotent
// and an executor claims a run with a CAS on its status.
import type { RunRepo } from '@baton/db';
import type { RunIngester } from './run-ingest.js';

/** The RunQueue seam, structurally (core never imports the queue package). */
export interface RecoveryQueue {
  enqueue(job: { runId: string; labels?: string[] }): Promise<void>;
  pendingIds(): Promise<string[]>;
  leasedIds(): Promise<Array<{ runId: string }>>;
}

/** Splits are never queued: their shards are. */
const QUEUED_KINDS = ['run', 'shard'];

export function createRunRecovery(deps: { runs: Pick<RunRepo, 'listByStatus'>; queue: RecoveryQueue; finish: RunIngester['finish'] }) {
  return {
    /** Running runs no lease holds are finished error/worker_lost; pending runs the queue lacks are enqueued again, oldest first. */
    async reconcile(): Promise<{ requeued: string[]; lost: string[] }> {
      // The database first, the queue second: a run leased between the two reads is then seen as leased,
      // never as lost (its lease exists before its claim makes it running).
      const running = await deps.runs.listByStatus('running', { kinds: QUEUED_KINDS });
      const leased = new Set((await deps.queue.leasedIds()).map((l) => l.runId));
      const lost: string[] = [];
      for (const run of running) {
        if (leased.has(run.id)) continue;
        if (await deps.finish(run.id, { conclusion: 'error', reason: 'worker_lost' }, ['running'])) lost.push(run.id);
      }
      const pending = await deps.runs.listByStatus('pending', { kinds: QUEUED_KINDS });
      const held = new Set([...(await deps.queue.pendingIds()), ...(await deps.queue.leasedIds()).map((l) => l.runId)]);
      const requeued: string[] = [];
      for (const run of pending) {
        if (held.has(run.id)) continue;
        const labels = JSON.parse(run.labels) as string[];
        await deps.queue.enqueue({ runId: run.id, ...(labels.length > 0 ? { labels } : {}) });
        requeued.push(run.id);
      }
      return { requeued, lost };
    },
  };
}
export type RunRecovery = ReturnType<typeof createRunRecovery>;
