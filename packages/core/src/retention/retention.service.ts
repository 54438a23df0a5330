// Retention (issue 19): with BATON_RETENTION_DAYS, finished runs older than that lose their events and log (the
// bulk of the database), while the run row, per-host outcomes, task results and the rollups that fleet, task trends
// and drift read stay, so those answers do not change. The work goes in small slices, each one statement, with a turn
// of the event loop between them: requests of the same process and other writers get the database in between.
import type { RetentionRepo, TransactionRunner } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Clock, iso } from '../common/clock.js';

const DAY_MS = 86_400_000;
/** Runs looked at (measured, emptied, marked) together. */
export const PRUNE_RUNS_PER_BATCH = 500;
/** Events deleted per statement: a slice short enough that nobody waits long for the writer lock. */
export const PRUNE_EVENTS_PER_SLICE = 2_000;

/** What a cache of the server's own lost when retention pruned it (the Galaxy requirements cache). */
export interface CachePruneResult {
  entries: number;
  bytes: number;
}

export interface PruneOptions {
  days: number;
  /** count only: nothing is deleted, marked or audited */
  dryRun?: boolean | undefined;
  /** who asked, for the audit entry: `system` (the periodic pass) or `cli` */
  actor?: string | undefined;
}

export interface PruneReport {
  dryRun: boolean;
  days: number;
  /** runs that finished before this lose their output */
  cutoff: string;
  runs: number;
  events: number;
  /** bytes of the events' data (the log text is part of it) */
  bytes: number;
  /** batches of runs processed (each emptied in slices, then marked) */
  batches: number;
  /** the requirements cache: entries unused since the cut-off (null: no cache to prune) */
  cache: CachePruneResult | null;
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createRetentionService(deps: {
  retention: RetentionRepo;
  transaction: TransactionRunner;
  clock: Clock;
  /** prunes cache entries unused since `cutoff`, or counts them on a dry run */
  pruneCache?: ((cutoff: Date, dryRun: boolean) => Promise<CachePruneResult>) | undefined;
  runsPerBatch?: number | undefined;
  eventsPerSlice?: number | undefined;
}) {
  const runsPerBatch = deps.runsPerBatch ?? PRUNE_RUNS_PER_BATCH;
  const eventsPerSlice = deps.eventsPerSlice ?? PRUNE_EVENTS_PER_SLICE;

  /** Deletes the runs' events slice by slice, then marks them: a pass stopped half-way is finished by the next one. */
  async function empty(ids: string[]): Promise<number> {
    while ((await deps.retention.deleteEvents(ids, eventsPerSlice)) === eventsPerSlice) await yieldTurn();
    return deps.retention.markPruned(ids, iso(deps.clock()));
  }

  return {
    /** One pass: every finished run older than `days` days loses its output; one audit entry when anything went. */
    async prune(opts: PruneOptions): Promise<PruneReport> {
      const dryRun = opts.dryRun === true;
      const cutoffDate = new Date(deps.clock().getTime() - opts.days * DAY_MS);
      const cutoff = iso(cutoffDate);
      const report: PruneReport = {
        dryRun,
        days: opts.days,
        cutoff,
        runs: 0,
        events: 0,
        bytes: 0,
        batches: 0,
        cache: null,
      };
      let after: { id: string; finished_at: string } | undefined;
      for (;;) {
        const runs = await deps.retention.prunable(cutoff, after, runsPerBatch);
        if (runs.length === 0) break;
        after = runs[runs.length - 1];
        const ids = runs.map((r) => r.id);
        const size = await deps.retention.outputSize(ids);
        report.runs += dryRun ? runs.length : await empty(ids);
        report.events += size.events;
        report.bytes += size.bytes;
        report.batches += 1;
        await yieldTurn();
      }
      if (deps.pruneCache) report.cache = await deps.pruneCache(cutoffDate, dryRun);
      if (!dryRun && (report.runs > 0 || (report.cache?.entries ?? 0) > 0)) {
        await deps.transaction((r) =>
          recordAudit(
            r.audit,
            {
              actor: opts.actor ?? 'system',
              action: 'retention.prune',
              object: null,
              summary:
                `retention of ${opts.days} day(s): removed the log and events of ${report.runs} run(s) finished before ${cutoff} ` +
                `(${report.events} event(s), ${report.bytes} byte(s))` +
                (report.cache
                  ? `; ${report.cache.entries} requirements cache entr(ies), ${report.cache.bytes} byte(s)`
                  : ''),
            },
            deps.clock,
          ),
        );
      }
      return report;
    },
  };
}
export type RetentionService = ReturnType<typeof createRetentionService>;
