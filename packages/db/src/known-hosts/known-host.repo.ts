// SSH host keys of an inventory's hosts or a project's git server: one row per host and key type. A run records
// keys only for hosts that had none (what ssh's accept-new did); a user's pin replaces a host's keys.
import type { Kysely, Selectable } from 'kysely';
import type { KnownHostTable, Schema } from '../schema.js';
import { refusingDuplicates } from '../errors.js';

export type KnownHostRow = Selectable<KnownHostTable>;
export type KnownHostScope = 'inventory' | 'project';
export type KnownHostKey = Pick<KnownHostRow, 'host' | 'key_type' | 'key'>;

/** Keeps each INSERT well under SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_CHUNK = 500;

export function createKnownHostRepo(db: Kysely<Schema>) {
  const of = (scope: KnownHostScope, scopeId: string) =>
    db.selectFrom('known_hosts').selectAll().where('scope', '=', scope).where('scope_id', '=', scopeId);

  async function insert(rows: KnownHostRow[], ignoreExisting: boolean): Promise<number> {
    let inserted = 0;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      let q = db.insertInto('known_hosts').values(rows.slice(i, i + INSERT_CHUNK));
      if (ignoreExisting) q = q.onConflict((c) => c.doNothing());
      // Two pins of one host at once on PostgreSQL meet here: a DuplicateKeyError the service answers, not a 500.
      const result = await refusingDuplicates(q.executeTakeFirst());
      inserted += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
    return inserted;
  }

  return {
    /** In host, then key type order. */
    async list(scope: KnownHostScope, scopeId: string): Promise<KnownHostRow[]> {
      return of(scope, scopeId).orderBy('host').orderBy('key_type').execute();
    },
    async listHost(scope: KnownHostScope, scopeId: string, host: string): Promise<KnownHostRow[]> {
      return of(scope, scopeId).where('host', '=', host).orderBy('key_type').execute();
    },
    /** Every key of the scope replaced by `rows` (all pinned by the caller). */
    async replaceAll(scope: KnownHostScope, scopeId: string, rows: KnownHostRow[]): Promise<void> {
      await db.deleteFrom('known_hosts').where('scope', '=', scope).where('scope_id', '=', scopeId).execute();
      await insert(rows, false);
    },
    /** One host's keys replaced by `rows`. */
    async replaceHost(scope: KnownHostScope, scopeId: string, host: string, rows: KnownHostRow[]): Promise<void> {
      await db
        .deleteFrom('known_hosts')
        .where('scope', '=', scope)
        .where('scope_id', '=', scopeId)
        .where('host', '=', host)
        .execute();
      await insert(rows, false);
    },
    /** How many keys went; `host` narrows it to one host. */
    async remove(scope: KnownHostScope, scopeId: string, host?: string): Promise<number> {
      let q = db.deleteFrom('known_hosts').where('scope', '=', scope).where('scope_id', '=', scopeId);
      if (host !== undefined) q = q.where('host', '=', host);
      return Number((await q.executeTakeFirst()).numDeletedRows);
    },
    /**
     * Keys a run saw on first contact: stored only for hosts that have no key at all (a host with a stored key of
     * another type was not new to ssh; a user may have just pinned it). Answers how many were stored.
     */
    async recordFirstSeen(scope: KnownHostScope, scopeId: string, rows: KnownHostRow[]): Promise<number> {
      if (rows.length === 0) return 0;
      const hosts = [...new Set(rows.map((r) => r.host))];
      const known = new Set<string>();
      for (let i = 0; i < hosts.length; i += INSERT_CHUNK) {
        const found = await db
          .selectFrom('known_hosts')
          .select('host')
          .where('scope', '=', scope)
          .where('scope_id', '=', scopeId)
          .where('host', 'in', hosts.slice(i, i + INSERT_CHUNK))
          .execute();
        for (const f of found) known.add(f.host);
      }
      return insert(
        rows.filter((r) => !known.has(r.host)),
        true,
      );
    },
  };
}
export type KnownHostRepo = ReturnType<typeof createKnownHostRepo>;
