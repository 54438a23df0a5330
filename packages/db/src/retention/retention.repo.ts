import { type Kysely, sql } from 'kysely';
import { type DialectName, toNumber } from '../dialect.js';
import type { Schema } from '../schema.js';

/** A finished run whose output retention may remove, and the keyset position of the walk over them. */
export interface PrunableRun {
  id: string;
  finished_at: string;
}

/** What a set of runs keeps as output: their events (log chunks included) and the bytes of the events' data. */
export interface OutputSize {
  events: number;
  bytes: number;
}

/**
 * Retention's reads and writes (issue 19). Only `run_events` (the events and the log chunks among them) is deleted;
 * the run row, run_hosts, run_task_results and the observation rollups (host_runs, fleet_*, task_*, drift_*) are
 * never touched here. Each write is one statement, so each holds SQLite's writer lock or PostgreSQL's row locks for
 * one bounded slice only.
 */
export function createRetentionRepo(db: Kysely<Schema>, dialect: DialectName) {
  // Bytes as stored, whatever the characters: SQLite's length() of text counts characters.
  const dataBytes = dialect === 'postgres' ? sql<number>`octet_length(data)` : sql<number>`length(cast(data as blob))`;
  return {
    /**
     * Finished runs that finished before `cutoff` and still hold their output, oldest first, after `after` (the
     * keyset of the previous page). Walks runs_retention_idx: the runs still to consider have no marker.
     */
    async prunable(cutoff: string, after: PrunableRun | undefined, limit: number): Promise<PrunableRun[]> {
      let q = db
        .selectFrom('runs')
        .select(['id', 'finished_at'])
        .where('output_pruned_at', 'is', null)
        .where('status', '=', 'finished')
        .where('finished_at', '<', cutoff)
        .orderBy('finished_at', 'asc')
        .orderBy('id', 'asc')
        .limit(limit);
      if (after)
        q = q.where((eb) =>
          eb.or([
            eb('finished_at', '>', after.finished_at),
            eb.and([eb('finished_at', '=', after.finished_at), eb('id', '>', after.id)]),
          ]),
        );
      return (await q.execute()).map((r) => ({ id: r.id, finished_at: r.finished_at! }));
    },

    async outputSize(runIds: string[]): Promise<OutputSize> {
      if (runIds.length === 0) return { events: 0, bytes: 0 };
      const row = await db
        .selectFrom('run_events')
        .select((eb) => [
          eb.fn.countAll<string | number>().as('events'),
          eb.fn.sum<string | number>(dataBytes).as('bytes'),
        ])
        .where('run_id', 'in', runIds)
        .executeTakeFirstOrThrow();
      return { events: toNumber(row.events), bytes: toNumber(row.bytes) };
    },

    /** Deletes at most `maxRows` events of these runs in one statement; the number deleted (fewer: none remain). */
    async deleteEvents(runIds: string[], maxRows: number): Promise<number> {
      if (runIds.length === 0) return 0;
      const result = await sql`
        delete from run_events where (run_id, seq) in (
          select run_id, seq from run_events where run_id in (${sql.join(runIds)}) limit ${maxRows})`.execute(db);
      return toNumber(result.numAffectedRows);
    },

    /** Marks these finished runs as pruned (those not marked yet); how many were marked. */
    async markPruned(runIds: string[], at: string): Promise<number> {
      if (runIds.length === 0) return 0;
      const result = await db
        .updateTable('runs')
        .set({ output_pruned_at: at })
        .where('id', 'in', runIds)
        .where('status', '=', 'finished')
        .where('output_pruned_at', 'is', null)
        .executeTakeFirst();
      return toNumber(result.numUpdatedRows);
    },
  };
}
export type RetentionRepo = ReturnType<typeof createRetentionRepo>;
