import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { PolicyTable, Schema } from '../schema.js';

/** A policy's match as stored (contracts' PolicyMatch; db does not import contracts). */
export interface PolicyMatchJson {
  projects?: string[] | undefined;
  templates?: string[] | undefined;
  inventories?: string[] | undefined;
  playbooks?: string[] | undefined;
  hosts?: string[] | undefined;
  check?: boolean | undefined;
  origins?: string[] | undefined;
  submitted_by_roles?: string[] | undefined;
  labels?: string[] | undefined;
}
/** A policy's approvers as stored (contracts' PolicyApprovers). */
export interface PolicyApproversJson {
  roles?: string[] | undefined;
  users?: string[] | undefined;
  teams?: string[] | undefined;
}
type PolicyJson = { match: PolicyMatchJson; approvers: PolicyApproversJson };
const json = jsonColumns<PolicyJson>({ match: true, approvers: true });

/** A policy as callers see it: match and approvers parsed; `enabled` is 1 or 0. */
export type PolicyRow = Decoded<Selectable<PolicyTable>, PolicyJson>;
export type PolicyPatch = Partial<
  Pick<
    PolicyRow,
    'name' | 'description' | 'enabled' | 'match' | 'approvers' | 'min_approvals' | 'expires_after_s' | 'updated_at'
  >
>;

export function createPolicyRepo(db: Kysely<Schema>) {
  return {
    /** A DuplicateKeyError when the name is taken. */
    async insert(row: PolicyRow): Promise<void> {
      await refusingDuplicates(db.insertInto('policies').values(json.encode(row)).execute());
    },
    async findById(id: string): Promise<PolicyRow | undefined> {
      const row = await db.selectFrom('policies').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    /** Newest first (ids are time-sortable), one keyset page. */
    async list(page: PageQuery): Promise<PolicyRow[]> {
      return (await keysetPage(db.selectFrom('policies').selectAll(), 'id', page).execute()).map((r) => json.decode(r));
    },
    /** Every enabled policy, oldest first: what a submission is evaluated against. */
    async listEnabled(): Promise<PolicyRow[]> {
      const rows = await db.selectFrom('policies').selectAll().where('enabled', '=', 1).orderBy('id').execute();
      return rows.map((r) => json.decode(r));
    },
    /** False when there is no such policy; a DuplicateKeyError when a new name is taken. */
    async update(id: string, patch: PolicyPatch): Promise<boolean> {
      const r = await refusingDuplicates(
        db.updateTable('policies').set(json.encode(patch)).where('id', '=', id).executeTakeFirst(),
      );
      return toNumber(r.numUpdatedRows) > 0;
    },
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('policies').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },
  };
}
export type PolicyRepo = ReturnType<typeof createPolicyRepo>;
