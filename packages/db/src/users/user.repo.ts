import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { Schema, UserTable } from '../schema.js';

export type UserRow = Selectable<UserTable>;
export type UserPatch = Partial<Pick<UserRow, 'role' | 'password_hash' | 'email' | 'updated_at'>>;

export function createUserRepo(db: Kysely<Schema>) {
  return {
    async insert(row: UserRow): Promise<void> {
      await refusingDuplicates(db.insertInto('users').values(row).execute());
    },
    async findById(id: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async findByUsername(username: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    },
    async list(page: PageQuery): Promise<UserRow[]> {
      return keysetPage(db.selectFrom('users').selectAll(), 'id', page).execute();
    },
    async update(id: string, patch: UserPatch): Promise<void> {
      await db.updateTable('users').set(patch).where('id', '=', id).execute();
    },
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
    /**
     * Ids of every admin, each row locked until the transaction ends, so that two concurrent demotions or
     * deletions cannot both see "another admin remains". Call it inside a transaction before reading the
     * user being changed. A no-op UPDATE takes the row locks on PostgreSQL (SQLite has no SELECT … FOR UPDATE;
     * there BEGIN IMMEDIATE already serializes writers).
     */
    async lockAdmins(): Promise<string[]> {
      const rows = await db
        .updateTable('users')
        .set((eb) => ({ role: eb.ref('role') }))
        .where('role', '=', 'admin')
        .returning('id')
        .execute();
      return rows.map((r) => r.id);
    },
    async countByRole(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('users')
        .select(['role', db.fn.countAll().as('n')])
        .groupBy('role')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.role, toNumber(r.n as string | number)]));
    },
  };
}
export type UserRepo = ReturnType<typeof createUserRepo>;
