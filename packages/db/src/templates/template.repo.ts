import type { Kysely, Selectable } from 'kysely';
import { isForeignKeyViolation, toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { Schema, TemplateTable } from '../schema.js';

/** The JSON columns of a template: its spec, its survey questions (password defaults left out) and allow_overrides. */
export interface TemplateJson {
  spec: Record<string, unknown>;
  survey: Array<Record<string, unknown>> | null;
  allow_overrides: string[];
}
const json = jsonColumns<TemplateJson>({ spec: true, survey: true, allow_overrides: true });

export type TemplateRow = Decoded<Selectable<TemplateTable>, TemplateJson>;
export type TemplatePatch = Partial<
  Pick<
    TemplateRow,
    'name' | 'description' | 'kind' | 'spec' | 'survey' | 'secret_defaults_enc' | 'allow_overrides' | 'updated_at'
  >
>;

/** A schedule or trigger that launches a template (deleting the template is refused while one does). */
export interface TemplateUser {
  kind: 'schedule' | 'trigger';
  id: string;
  name: string;
}

export function createTemplateRepo(db: Kysely<Schema>) {
  return {
    async insert(row: TemplateRow): Promise<void> {
      await refusingDuplicates(db.insertInto('templates').values(json.encode(row)).execute());
    },
    async findById(id: string): Promise<TemplateRow | undefined> {
      const row = await db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    /** Newest first; `idIn` limits the list to these ids (the ones a caller may see). */
    async list(page: PageQuery & { idIn?: string[] | undefined }): Promise<TemplateRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = keysetPage(db.selectFrom('templates').selectAll(), 'id', page);
      if (page.idIn) q = q.where('id', 'in', page.idIn);
      return (await q.execute()).map(json.decode);
    },
    async update(id: string, patch: TemplatePatch): Promise<boolean> {
      const r = await refusingDuplicates(
        db.updateTable('templates').set(json.encode(patch)).where('id', '=', id).executeTakeFirst(),
      );
      return toNumber(r.numUpdatedRows) > 0;
    },
    /** 'in_use' when a schedule or trigger still points at it (their foreign keys refuse the delete). */
    async delete(id: string): Promise<'deleted' | 'missing' | 'in_use'> {
      try {
        const r = await db.deleteFrom('templates').where('id', '=', id).executeTakeFirst();
        return toNumber(r.numDeletedRows) > 0 ? 'deleted' : 'missing';
      } catch (err) {
        if (isForeignKeyViolation(err)) return 'in_use';
        throw err;
      }
    },
    /** The schedules and triggers whose target is this template, newest first within each kind. */
    async usersOf(id: string): Promise<TemplateUser[]> {
      const schedules = await db
        .selectFrom('schedules')
        .select(['id', 'name'])
        .where('template_id', '=', id)
        .orderBy('id', 'desc')
        .execute();
      const triggers = await db
        .selectFrom('triggers')
        .select(['id', 'name'])
        .where('template_id', '=', id)
        .orderBy('id', 'desc')
        .execute();
      return [
        ...schedules.map((r) => ({ ...r, kind: 'schedule' as const })),
        ...triggers.map((r) => ({ ...r, kind: 'trigger' as const })),
      ];
    },
  };
}
export type TemplateRepo = ReturnType<typeof createTemplateRepo>;
