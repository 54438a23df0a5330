// Lookups an import needs across kinds: which object of a kind already holds a name (names are unique per kind).
import { type Kysely, sql } from 'kysely';
import type { Schema } from '../schema.js';

/** The tables whose rows an import matches by name, and the column holding it. */
const NAME_COLUMNS = {
  users: 'username',
  teams: 'name',
  credentials: 'name',
  projects: 'name',
  inventories: 'name',
  inventory_sources: 'name',
  templates: 'name',
  schedules: 'name',
  triggers: 'name',
  policies: 'name',
} as const;
export type NamedTable = keyof typeof NAME_COLUMNS;

export function createImportRepo(db: Kysely<Schema>) {
  return {
    /** The id of the row of `table` named `name`, if any (exact, case-sensitive: as the unique index compares). */
    async idByName(table: NamedTable, name: string): Promise<string | undefined> {
      const row = await db
        .selectFrom(table)
        .select('id')
        .where(sql.ref(NAME_COLUMNS[table]), '=', name)
        .executeTakeFirst();
      return row?.id;
    },
  };
}
export type ImportRepo = ReturnType<typeof createImportRepo>;
