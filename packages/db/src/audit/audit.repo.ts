import { type Kysely, type Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import type { AuditEntryTable, Schema } from '../schema.js';

export type AuditEntryRow = Selectable<AuditEntryTable>;
export type AuditEntryDraft = Omit<AuditEntryRow, 'seq' | 'prev_hash' | 'hash'>;

export interface AuditFilter {
  actor?: string | undefined;
  object?: string | undefined;
  action?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

export function createAuditRepo(db: Kysely<Schema>) {
  return {
    /**
     * Appends one entry to the chain. Must run inside the transaction of the change it records: the
     * UPDATE of the head row takes a row lock (PostgreSQL) or the write lock (SQLite), so concurrent
     * appenders wait for each other and every entry links to the one committed before it.
     * `seal` computes the entry's hash from the very row that is then inserted (its seq and prev_hash filled in).
     */
    async append(draft: AuditEntryDraft, seal: (row: Omit<AuditEntryRow, 'hash'>) => string): Promise<AuditEntryRow> {
      if (!db.isTransaction) throw new Error('audit append must run inside a transaction');
      const head = await db
        .updateTable('audit_head')
        .set((eb) => ({ seq: eb('seq', '+', 1) }))
        .where('id', '=', 1)
        .returning(['seq', 'hash'])
        .executeTakeFirstOrThrow();
      const seq = toNumber(head.seq);
      const unsealed = { ...draft, seq, prev_hash: head.hash };
      const row: AuditEntryRow = { ...unsealed, hash: seal(unsealed) };
      await db.insertInto('audit_entries').values(row).execute();
      await db.updateTable('audit_head').set({ hash: row.hash }).where('id', '=', 1).execute();
      return row;
    },
    async list(filter: AuditFilter, page: { limit: number; beforeSeq?: number | undefined }): Promise<AuditEntryRow[]> {
      let q = db.selectFrom('audit_entries').selectAll().orderBy('seq', 'desc').limit(page.limit);
      if (page.beforeSeq !== undefined) q = q.where('seq', '<', page.beforeSeq);
      if (filter.actor) q = q.where('actor', '=', filter.actor);
      if (filter.object) q = q.where('object', '=', filter.object);
      if (filter.action) q = q.where('action', '=', filter.action);
      if (filter.since) q = q.where('at', '>=', filter.since);
      if (filter.until) q = q.where('at', '<', filter.until);
      return (await q.execute()).map(normalize);
    },
    /** Entries in chain order, `afterSeq` exclusive: used to walk the whole chain in batches. */
    async range(afterSeq: number, limit: number): Promise<AuditEntryRow[]> {
      const rows = await db
        .selectFrom('audit_entries')
        .selectAll()
        .where('seq', '>', afterSeq)
        .orderBy('seq', 'asc')
        .limit(limit)
        .execute();
      return rows.map(normalize);
    },
    async head(): Promise<{ seq: number; hash: string }> {
      const h = await db.selectFrom('audit_head').select(['seq', 'hash']).where('id', '=', 1).executeTakeFirstOrThrow();
      return { seq: toNumber(h.seq), hash: h.hash };
    },
  };
}

function normalize(row: AuditEntryRow): AuditEntryRow {
  return { ...row, seq: toNumber(row.seq) };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
