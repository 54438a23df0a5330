import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import type { PageQuery } from '../page.js';
import type { InventoryTable, Schema } from '../schema.js';

export type InventoryRow = Selectable<InventoryTable>;
/** An inventory without its content: what lists show. */
export type InventorySummaryRow = Omit<InventoryRow, 'content'>;
export interface InventoryHostRow {
  host: string;
  /** group names */
  groups: string[];
}

const SUMMARY_COLUMNS = ['id', 'name', 'format', 'groups', 'host_count', 'created_by', 'created_at', 'updated_at'] as const;
/** Keeps each INSERT well under SQLite's and PostgreSQL's bound-parameter limits. */
const HOST_INSERT_CHUNK = 500;

export function createInventoryRepo(db: Kysely<Schema>) {
  return {
    async insert(row: InventoryRow): Promise<void> {
      await db.insertInto('inventories').values(row).execute();
    },
    async findById(id: string): Promise<InventoryRow | undefined> {
      return db.selectFrom('inventories').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async findSummary(id: string): Promise<InventorySummaryRow | undefined> {
      return db.selectFrom('inventories').select(SUMMARY_COLUMNS).where('id', '=', id).executeTakeFirst();
    },
    /** `visible`: 'all', or only these ids. */
    async list(page: PageQuery, visible: 'all' | string[]): Promise<InventorySummaryRow[]> {
      if (visible !== 'all' && visible.length === 0) return [];
      let q = db.selectFrom('inventories').select(SUMMARY_COLUMNS).orderBy('id', 'desc').limit(page.limit);
      if (page.before) q = q.where('id', '<', page.before);
      if (visible !== 'all') q = q.where('id', 'in', visible);
      return q.execute();
    },
    async update(id: string, patch: Partial<Omit<InventoryRow, 'id' | 'created_by' | 'created_at'>>): Promise<boolean> {
      const r = await db.updateTable('inventories').set(patch).where('id', '=', id).executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
    },
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('inventories').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
    /** Replaces every host row of the inventory; call it in the transaction that writes the content. */
    async replaceHosts(inventoryId: string, hosts: InventoryHostRow[]): Promise<void> {
      await db.deleteFrom('inventory_hosts').where('inventory_id', '=', inventoryId).execute();
      for (let i = 0; i < hosts.length; i += HOST_INSERT_CHUNK) {
        const chunk = hosts.slice(i, i + HOST_INSERT_CHUNK).map((h) => ({ inventory_id: inventoryId, host: h.host, groups: JSON.stringify(h.groups) }));
        await db.insertInto('inventory_hosts').values(chunk).execute();
      }
    },
    /** Hosts in name order; `page.before` is the last host name of the previous page. */
    async listHosts(inventoryId: string, page: PageQuery): Promise<InventoryHostRow[]> {
      let q = db.selectFrom('inventory_hosts').select(['host', 'groups']).where('inventory_id', '=', inventoryId).orderBy('host', 'asc').limit(page.limit);
      if (page.before !== undefined) q = q.where('host', '>', page.before);
      const rows = await q.execute();
      return rows.map((r) => ({ host: r.host, groups: JSON.parse(r.groups) as string[] }));
    },
  };
}
export type InventoryRepo = ReturnType<typeof createInventoryRepo>;
