import type { Kysely, Selectable } from 'kysely';
import type { RunEventTable, Schema } from '../schema.js';

export type RunEventRow = Selectable<RunEventTable>;

export interface RunEventQuery {
  afterSeq?: number | undefined;
  kind?: string | undefined;
  host?: string | undefined;
  limit: number;
}

/** Rows per INSERT: 8 columns each keeps a statement under SQLite's 32766 bound parameters. */
const INSERT_CHUNK = 500;

export function createRunEventRepo(db: Kysely<Schema>) {
  return {
    /** Idempotent on (run_id, seq): events delivered twice are stored once. */
    async insertBatch(rows: RunEventRow[]): Promise<void> {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await db.insertInto('run_events').values(rows.slice(i, i + INSERT_CHUNK)).onConflict((oc) => oc.columns(['run_id', 'seq']).doNothing()).execute();
      }
    },
    /** In seq order. */
    async list(runId: string, q: RunEventQuery): Promise<RunEventRow[]> {
      let s = db.selectFrom('run_events').selectAll().where('run_id', '=', runId).orderBy('seq', 'asc').limit(q.limit);
      if (q.afterSeq !== undefined) s = s.where('seq', '>', q.afterSeq);
      if (q.kind !== undefined) s = s.where('kind', '=', q.kind);
      if (q.host !== undefined) s = s.where('host', '=', q.host);
      return s.execute();
    },
    async lastSeq(runId: string): Promise<number> {
      const row = await db.selectFrom('run_events').select('seq').where('run_id', '=', runId).orderBy('seq', 'desc').limit(1).executeTakeFirst();
      return row?.seq ?? 0;
    },
    /**
     * Log chunks covering lines [fromLine, toLine] (1-based, inclusive), in order: the chunk holding
     * `fromLine`, and every later one that starts at or before `toLine`.
     */
    async logChunksByLine(runId: string, fromLine: number, toLine: number): Promise<RunEventRow[]> {
      const first = await db
        .selectFrom('run_events').select('seq').where('run_id', '=', runId).where('kind', '=', 'log').where('log_line', '<=', fromLine)
        .orderBy('seq', 'desc').limit(1).executeTakeFirst();
      return db
        .selectFrom('run_events').selectAll().where('run_id', '=', runId).where('kind', '=', 'log')
        .where('seq', '>=', first?.seq ?? 0).where('log_line', '<=', toLine).orderBy('seq', 'asc').execute();
    },
    /** Log chunks covering bytes [fromByte, toByte] (0-based, inclusive), in order. */
    async logChunksByByte(runId: string, fromByte: number, toByte: number): Promise<RunEventRow[]> {
      const first = await db
        .selectFrom('run_events').select('seq').where('run_id', '=', runId).where('kind', '=', 'log').where('log_byte', '<=', fromByte)
        .orderBy('seq', 'desc').limit(1).executeTakeFirst();
      return db
        .selectFrom('run_events').selectAll().where('run_id', '=', runId).where('kind', '=', 'log')
        .where('seq', '>=', first?.seq ?? 0).where('log_byte', '<=', toByte).orderBy('seq', 'asc').execute();
    },
  };
}
export type RunEventRepo = ReturnType<typeof createRunEventRepo>;
