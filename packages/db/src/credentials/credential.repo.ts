import type { Kysely, Selectable, Updateable } from 'kysely';
import { toNumber } from '../dialect.js';
import type { PageQuery } from '../page.js';
import type { CredentialTable, Schema } from '../schema.js';

export type CredentialRow = Selectable<CredentialTable>;
export type CredentialPatch = Pick<Updateable<CredentialTable>, 'name' | 'description' | 'public_inputs' | 'secret_inputs_enc' | 'updated_at'>;
export type CredentialDeleteResult = 'deleted' | 'missing' | 'in_use';

/** A row elsewhere still references the credential (projects, inventory sources…): the delete must not happen. */
function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

export function createCredentialRepo(db: Kysely<Schema>) {
  return {
    async insert(row: CredentialRow): Promise<void> {
      await db.insertInto('credentials').values(row).execute();
    },
    async findById(id: string): Promise<CredentialRow | undefined> {
      return db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /** Newest first (ids are time-sortable). `idIn` restricts to these ids: the caller's visible ones. */
    async list(page: PageQuery & { idIn?: readonly string[] | undefined }): Promise<CredentialRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = db.selectFrom('credentials').selectAll().orderBy('id', 'desc').limit(page.limit);
      if (page.before) q = q.where('id', '<', page.before);
      if (page.idIn) q = q.where('id', 'in', [...page.idIn]);
      return q.execute();
    },
    /**
     * Applies `patch`; with `ifSecretIs`, only while the sealed secrets are still that value (every update
     * re-seals with a fresh IV, so it doubles as a version: a concurrent update makes this return false).
     */
    async update(id: string, patch: CredentialPatch, opts: { ifSecretIs?: string } = {}): Promise<boolean> {
      let q = db.updateTable('credentials').set(patch).where('id', '=', id);
      if (opts.ifSecretIs !== undefined) q = q.where('secret_inputs_enc', '=', opts.ifSecretIs);
      const r = await q.executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
    },
    /** 'in_use' when a foreign key still points at it; on PostgreSQL the transaction is then unusable, so end it. */
    async delete(id: string): Promise<CredentialDeleteResult> {
      try {
        const r = await db.deleteFrom('credentials').where('id', '=', id).executeTakeFirst();
        return toNumber(r.numDeletedRows) > 0 ? 'deleted' : 'missing';
      } catch (err) {
        if (isForeignKeyViolation(err)) return 'in_use';
        throw err;
      }
    },
  };
}
export type CredentialRepo = ReturnType<typeof createCredentialRepo>;
