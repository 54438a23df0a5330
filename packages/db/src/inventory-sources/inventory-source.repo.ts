import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { InventorySourceTable, Schema } from '../schema.js';

export type InventorySourceRow = Selectable<InventorySourceTable>;
export interface InventorySourceRef {
  id: string;
  name: string;
}

export function createInventorySourceRepo(db: Kysely<Schema>) {
  /** Sources whose `column` is `id`: who would break if that object went away. */
  const using =
    (column: 'credential_id' | 'project_id' | 'inventory_id') =>
    (id: string): Promise<InventorySourceRef[]> =>
      db.selectFrom('inventory_sources').select(['id', 'name']).where(column, '=', id).orderBy('id', 'asc').execute();

  return {
    async insert(row: InventorySourceRow): Promise<void> {
      await refusingDuplicates(db.insertInto('inventory_sources').values(row).execute());
    },
    async findById(id: string): Promise<InventorySourceRow | undefined> {
      return db.selectFrom('inventory_sources').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /** `visible`: 'all', or only these ids. */
    async list(page: PageQuery, visible: 'all' | string[]): Promise<InventorySourceRow[]> {
      if (visible !== 'all' && visible.length === 0) return [];
      let q = keysetPage(db.selectFrom('inventory_sources').selectAll(), 'id', page);
      if (visible !== 'all') q = q.where('id', 'in', visible);
      return q.execute();
    },
    async update(
      id: string,
      patch: Partial<Omit<InventorySourceRow, 'id' | 'created_by' | 'created_at'>>,
    ): Promise<boolean> {
      const r = await refusingDuplicates(
        db.updateTable('inventory_sources').set(patch).where('id', '=', id).executeTakeFirst(),
      );
      return toNumber(r.numUpdatedRows) > 0;
    },
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('inventory_sources').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
    usingCredential: using('credential_id'),
    usingProject: using('project_id'),
    usingInventory: using('inventory_id'),
  };
}
export type InventorySourceRepo = ReturnType<typeof createInventorySourceRepo>;
