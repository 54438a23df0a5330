import type { Kysely, Selectable } from 'kysely';
import { isForeignKeyViolation, toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { ProjectTable, Schema } from '../schema.js';

export type ProjectRow = Selectable<ProjectTable>;
/** A new project: the host key policy and Galaxy credential have defaults. */
export type ProjectInsert = Omit<ProjectRow, 'host_key_checking' | 'galaxy_credential_id'> &
  Partial<Pick<ProjectRow, 'host_key_checking' | 'galaxy_credential_id'>>;
export type ProjectPatch = Partial<
  Pick<
    ProjectRow,
    | 'name'
    | 'git_url'
    | 'branch'
    | 'credential_id'
    | 'host_key_checking'
    | 'galaxy_credential_id'
    | 'last_commit'
    | 'synced_at'
    | 'updated_at'
  >
>;

export function createProjectRepo(db: Kysely<Schema>) {
  return {
    async insert(row: ProjectInsert): Promise<void> {
      await refusingDuplicates(db.insertInto('projects').values(row).execute());
    },
    async findById(id: string): Promise<ProjectRow | undefined> {
      return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /** Newest first; `idIn` limits the list to these ids (the ones a caller may see). */
    async list(page: PageQuery & { idIn?: string[] | undefined }): Promise<ProjectRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = keysetPage(db.selectFrom('projects').selectAll(), 'id', page);
      if (page.idIn) q = q.where('id', 'in', page.idIn);
      return q.execute();
    },
    async update(id: string, patch: ProjectPatch): Promise<boolean> {
      const r = await refusingDuplicates(db.updateTable('projects').set(patch).where('id', '=', id).executeTakeFirst());
      return toNumber(r.numUpdatedRows) > 0;
    },
    async delete(id: string): Promise<'deleted' | 'missing' | 'in_use'> {
      try {
        const r = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
        return toNumber(r.numDeletedRows) > 0 ? 'deleted' : 'missing';
      } catch (err) {
        if (isForeignKeyViolation(err)) return 'in_use';
        throw err;
      }
    },
    /** Projects that reach their repository or Galaxy server with this credential (one in use cannot be deleted). */
    async usingCredential(credentialId: string): Promise<Array<{ id: string; name: string }>> {
      return db
        .selectFrom('projects')
        .select(['id', 'name'])
        .where((eb) => eb.or([eb('credential_id', '=', credentialId), eb('galaxy_credential_id', '=', credentialId)]))
        .orderBy('id', 'desc')
        .execute();
    },
  };
}
export type ProjectRepo = ReturnType<typeof createProjectRepo>;
