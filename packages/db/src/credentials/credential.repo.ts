import type { Kysely, Selectable } from 'kysely';
import { isForeignKeyViolation, toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { CredentialTable, Schema } from '../schema.js';

/** The credential's JSON column, parsed: the inputs that are not secret, by name. The secret ones stay sealed text. */
export interface CredentialJson {
  public_inputs: Record<string, string>;
}
const json = jsonColumns<CredentialJson>({ public_inputs: true });

export type CredentialRow = Decoded<Selectable<CredentialTable>, CredentialJson>;
export type CredentialPatch = Partial<
  Pick<CredentialRow, 'name' | 'description' | 'public_inputs' | 'secret_inputs_enc' | 'updated_at'>
>;
export type CredentialDeleteResult = 'deleted' | 'missing' | 'in_use';

export function createCredentialRepo(db: Kysely<Schema>) {
  return {
    async insert(row: CredentialRow): Promise<void> {
      await refusingDuplicates(db.insertInto('credentials').values(json.encode(row)).execute());
    },
    async findById(id: string): Promise<CredentialRow | undefined> {
      const row = await db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    /** Newest first (ids are time-sortable). `idIn` restricts to these ids: the caller's visible ones. */
    async list(page: PageQuery & { idIn?: readonly string[] | undefined }): Promise<CredentialRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = keysetPage(db.selectFrom('credentials').selectAll(), 'id', page);
      if (page.idIn) q = q.where('id', 'in', [...page.idIn]);
      return (await q.execute()).map(json.decode);
    },
    /**
     * Applies `patch`; with `ifSecretIs`, only while the sealed secrets are still that value (every update
     * re-seals with a fresh IV, so it doubles as a version: a concurrent update makes this return false).
     */
    async update(id: string, patch: CredentialPatch, opts: { ifSecretIs?: string } = {}): Promise<boolean> {
      let q = db.updateTable('credentials').set(json.encode(patch)).where('id', '=', id);
      if (opts.ifSecretIs !== undefined) q = q.where('secret_inputs_enc', '=', opts.ifSecretIs);
      const r = await refusingDuplicates(q.executeTakeFirst());
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
