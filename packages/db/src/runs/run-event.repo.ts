import type { Kysely, Selectable } from 'kysely';
import { type Decoded, jsonColumns } from '../json-columns.js';
import type { RunEventTable, Schema } from '../schema.js';

/** An event's JSON column, parsed: its data object. */
export interface RunEventJson {
  data: Record<string, unknown>;
}
const json = jsonColumns<RunEventJson>({ data: true });

export type RunEventRow = Decoded<Selectable<RunEventTable>, RunEventJson>;

export interface RunEventQuery {
  afterSeq?: number | undefined;
  kind?: string | undefined;
  host?: string | undefined;
  limit: number;
}

/** Rows per INSERT: 8 columns each keeps a statement under SQLite's 32766 bound parameters. */
const INSERT_CHUNK = 500;

export function createRunEventRepo(db: Kysely<Schema>) {
  /** The log chunks covering [from, to] of a chunk offset (`column`): the one holding `from`, and every later one starting at or before `to`. */
  async function logChunks(
    runId: string,
    column: 'log_line' | 'log_byte',
    from: number,
    to: number,
  ): Promise<RunEventRow[]> {
    const logOf = () => db.selectFrom('run_events').where('run_id', '=', runId).where('kind', '=', 'log');
    const first = await logOf()
      .select('seq')
      .where(column, '<=', from)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    const rows = await logOf()
      .selectAll()
      .where('seq', '>=', first?.seq ?? 0)
      .where(column, '<=', to)
      .orderBy('seq', 'asc')
      .execute();
    return rows.map(json.decode);
  }

  return {
    /** Idempotent on (run_id, seq): events delivered twice are stored once. */
    async insertBatch(rows: RunEventRow[]): Promise<void> {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await db
          .insertInto('run_events')
          .values(rows.slice(i, i + INSERT_CHUNK).map(json.encode))
          .onConflict((oc) => oc.columns(['run_id', 'seq']).doNothing())
          .execute();
      }
    },
    /** In seq order. */
    async list(runId: string, q: RunEventQuery): Promise<RunEventRow[]> {
      let s = db.selectFrom('run_events').selectAll().where('run_id', '=', runId).orderBy('seq', 'asc').limit(q.limit);
      if (q.afterSeq !== undefined) s = s.where('seq', '>', q.afterSeq);
      if (q.kind !== undefined) s = s.where('kind', '=', q.kind);
      if (q.host !== undefined) s = s.where('host', '=', q.host);
      return (await s.execute()).map(json.decode);
    },
    async lastSeq(runId: string): Promise<number> {
      const row = await db
        .selectFrom('run_events')
        .select('seq')
        .where('run_id', '=', runId)
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row?.seq ?? 0;
    },
    /**
     * Log chunks covering lines [fromLine, toLine] (1-based, inclusive), in order: the chunk holding
     * `fromLine`, and every later one that starts at or before `toLine`.
     */
    logChunksByLine: (runId: string, fromLine: number, toLine: number) =>
      logChunks(runId, 'log_line', fromLine, toLine),
    /** Log chunks covering bytes [fromByte, toByte] (0-based, inclusive), in order. */
    logChunksByByte: (runId: string, fromByte: number, toByte: number) =>
      logChunks(runId, 'log_byte', fromByte, toByte),
  };
}
export type RunEventRepo = ReturnType<typeof createRunEventRepo>;
