import { type Kysely, type Selectable, sql } from 'kysely';
import { toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { GrantTable, Schema } from '../schema.js';

export type GrantRow = Selectable<GrantTable>;

export interface GrantFilter {
  subject_id?: string | undefined;
  object_id?: string | undefined;
  /** Only grants whose subject is one of these or whose object is one of `objectIn`. */
  visibleTo?: { subjects: string[]; objects: string[] } | undefined;
}

export function createGrantRepo(db: Kysely<Schema>) {
  return {
    async insert(row: GrantRow): Promise<void> {
      await refusingDuplicates(db.insertInto('grants').values(row).execute());
    },
    async findById(id: string): Promise<GrantRow | undefined> {
      return db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async findBySubjectAndObject(subjectId: string, objectId: string): Promise<GrantRow | undefined> {
      return db
        .selectFrom('grants')
        .selectAll()
        .where('subject_id', '=', subjectId)
        .where('object_id', '=', objectId)
        .executeTakeFirst();
    },
    async update(id: string, level: string): Promise<void> {
      await db.updateTable('grants').set({ level }).where('id', '=', id).execute();
    },
    async list(filter: GrantFilter, page: PageQuery): Promise<GrantRow[]> {
      let q = keysetPage(db.selectFrom('grants').selectAll(), 'id', page);
      if (filter.subject_id) q = q.where('subject_id', '=', filter.subject_id);
      if (filter.object_id) q = q.where('object_id', '=', filter.object_id);
      const visible = filter.visibleTo;
      if (visible) {
        q = q.where((eb) => {
          const ors = [];
          if (visible.subjects.length) ors.push(eb('subject_id', 'in', visible.subjects));
          if (visible.objects.length) ors.push(eb('object_id', 'in', visible.objects));
          return ors.length ? eb.or(ors) : eb.val(false);
        });
      }
      return q.execute();
    },
    /** Every grant any of `subjectIds` holds on `objectId`. */
    async levelsOn(subjectIds: string[], objectId: string): Promise<string[]> {
      if (subjectIds.length === 0) return [];
      const rows = await db
        .selectFrom('grants')
        .select('level')
        .where('object_id', '=', objectId)
        .where('subject_id', 'in', subjectIds)
        .execute();
      return rows.map((r) => r.level);
    },
    /** Object ids on which any of `subjectIds` holds a grant (optionally only those with an id prefix). */
    async objectsHeldBy(subjectIds: string[], prefix?: string): Promise<string[]> {
      if (subjectIds.length === 0) return [];
      let q = db.selectFrom('grants').select('object_id').distinct().where('subject_id', 'in', subjectIds);
      // Not LIKE: `_` in a prefix such as `team_` is a wildcard there, and SQLite's LIKE ignores case.
      if (prefix) q = q.where(sql<string>`substr(object_id, 1, ${sql.lit(prefix.length)})`, '=', prefix);
      return (await q.execute()).map((r) => r.object_id);
    },
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('grants').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
    /** Grants die with their subject or object; returns how many went. */
    async deleteMentioning(id: string): Promise<number> {
      const r = await db
        .deleteFrom('grants')
        .where((eb) => eb.or([eb('subject_id', '=', id), eb('object_id', '=', id)]))
        .executeTakeFirst();
      return toNumber(r.numDeletedRows);
    },
  };
}
export type GrantRepo = ReturnType<typeof createGrantRepo>;
