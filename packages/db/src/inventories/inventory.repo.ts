import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { InventoryTable, Schema } from '../schema.js';

/** A group as ansible-inventory lists it (contracts' InventoryGroup, which db does not import): direct hosts and child groups. */
export interface InventoryGroupRow {
  name: string;
  hosts: string[];
  children: string[];
}
export interface InventoryJson {
  groups: InventoryGroupRow[];
}
const json = jsonColumns<InventoryJson>({ groups: true });
/** An inventory host's JSON column: its group names. */
const hostJson = jsonColumns<{ groups: string[] }>({ groups: true });

export type InventoryRow = Decoded<Selectable<InventoryTable>, InventoryJson>;
/** A new inventory: the host key policy has a default. */
export type InventoryInsert = Omit<InventoryRow, 'host_key_checking'> &
  Partial<Pick<InventoryRow, 'host_key_checking'>>;
/** An inventory without its content: what lists show. */
export type InventorySummaryRow = Omit<InventoryRow, 'content'>;
export interface InventoryHostRow {
  host: string;
  /** group names */
  groups: string[];
}

const SUMMARY_COLUMNS = [
  'id',
  'name',
  'format',
  'groups',
  'host_count',
  'host_key_checking',
  'created_by',
  'created_at',
  'updated_at',
] as const;
/** Keeps each INSERT well under SQLite's and PostgreSQL's bound-parameter limits. */
const HOST_INSERT_CHUNK = 500;

export function createInventoryRepo(db: Kysely<Schema>) {
  return {
    async insert(row: InventoryInsert): Promise<void> {
      await refusingDuplicates(db.insertInto('inventories').values(json.encode(row)).execute());
    },
    async findById(id: string): Promise<InventoryRow | undefined> {
      const row = await db.selectFrom('inventories').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    async findSummary(id: string): Promise<InventorySummaryRow | undefined> {
      const row = await db.selectFrom('inventories').select(SUMMARY_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    /** `visible`: 'all', or only these ids. */
    async list(page: PageQuery, visible: 'all' | string[]): Promise<InventorySummaryRow[]> {
      if (visible !== 'all' && visible.length === 0) return [];
      let q = keysetPage(db.selectFrom('inventories').select(SUMMARY_COLUMNS), 'id', page);
      if (visible !== 'all') q = q.where('id', 'in', visible);
      return (await q.execute()).map(json.decode);
    },
    async update(id: string, patch: Partial<Omit<InventoryRow, 'id' | 'created_by' | 'created_at'>>): Promise<boolean> {
      const r = await refusingDuplicates(
        db.updateTable('inventories').set(json.encode(patch)).where('id', '=', id).executeTakeFirst(),
      );
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
        const chunk = hosts
          .slice(i, i + HOST_INSERT_CHUNK)
          .map((h) => hostJson.encode({ inventory_id: inventoryId, host: h.host, groups: h.groups }));
        await db.insertInto('inventory_hosts').values(chunk).execute();
      }
    },
    /** Hosts in name order; `page.before` is the last host name of the previous page. */
    async listHosts(inventoryId: string, page: PageQuery): Promise<InventoryHostRow[]> {
      const hosts = db.selectFrom('inventory_hosts').select(['host', 'groups']).where('inventory_id', '=', inventoryId);
      return (await keysetPage(hosts, 'host', page, 'asc').execute()).map(hostJson.decode);
    },
  };
}
export type InventoryRepo = ReturnType<typeof createInventoryRepo>;
