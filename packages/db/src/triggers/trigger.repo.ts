import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../dialect.js';
import { isUniqueViolation, refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { Schema, TriggerTable } from '../schema.js';

/** The filters as stored (contracts' EffectiveTriggerFilters). */
export interface TriggerFiltersJson {
  events: string[];
  branches?: string[] | undefined;
  tags?: string[] | undefined;
}
/** Columns kept as JSON; `target` is a LaunchTarget of contracts (db does not import contracts' values or types). */
type TriggerJson = { filters: TriggerFiltersJson; target: Record<string, unknown> };
const json = jsonColumns<TriggerJson>({ filters: true, target: true });

/** A trigger as callers see it: filters and target parsed. `token` and `secret_enc` never leave the server as such. */
export type TriggerRow = Decoded<Selectable<TriggerTable>, TriggerJson>;
export type TriggerPatch = Partial<
  Pick<
    TriggerRow,
    | 'name'
    | 'secret_enc'
    | 'require_signature'
    | 'filters'
    | 'target'
    | 'target_secrets_enc'
    | 'template_id'
    | 'last_delivery_at'
    | 'last_run_id'
    | 'updated_at'
  >
>;
export type TriggerDeliveryRow = Selectable<Schema['trigger_deliveries']>;

export function createTriggerRepo(db: Kysely<Schema>) {
  return {
    async insert(row: TriggerRow): Promise<void> {
      await refusingDuplicates(db.insertInto('triggers').values(json.encode(row)).execute());
    },
    async findById(id: string): Promise<TriggerRow | undefined> {
      const row = await db.selectFrom('triggers').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    /** The trigger whose hook path carries this token. */
    async findByToken(token: string): Promise<TriggerRow | undefined> {
      const row = await db.selectFrom('triggers').selectAll().where('token', '=', token).executeTakeFirst();
      return row && json.decode(row);
    },
    /** Newest first; `idIn` limits the list to these ids (the ones a caller may see). */
    async list(page: PageQuery & { idIn?: string[] | undefined }): Promise<TriggerRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = keysetPage(db.selectFrom('triggers').selectAll(), 'id', page);
      if (page.idIn) q = q.where('id', 'in', page.idIn);
      return (await q.execute()).map((r) => json.decode(r));
    },
    async update(id: string, patch: TriggerPatch): Promise<boolean> {
      const r = await refusingDuplicates(
        db.updateTable('triggers').set(json.encode(patch)).where('id', '=', id).executeTakeFirst(),
      );
      return toNumber(r.numUpdatedRows) > 0;
    },
    async delete(id: string): Promise<boolean> {
      await db.deleteFrom('trigger_deliveries').where('trigger_id', '=', id).execute();
      const r = await db.deleteFrom('triggers').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },

    /**
     * Claims a delivery id for a trigger: true for the first claim, false when it was claimed before (by this or any
     * other replica: the primary key decides).
     */
    async claimDelivery(row: TriggerDeliveryRow): Promise<boolean> {
      try {
        await db.insertInto('trigger_deliveries').values(row).execute();
        return true;
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    },
    async findDelivery(triggerId: string, deliveryId: string): Promise<TriggerDeliveryRow | undefined> {
      return db
        .selectFrom('trigger_deliveries')
        .selectAll()
        .where('trigger_id', '=', triggerId)
        .where('delivery_id', '=', deliveryId)
        .executeTakeFirst();
    },
    async setDeliveryRun(triggerId: string, deliveryId: string, runId: string): Promise<void> {
      await db
        .updateTable('trigger_deliveries')
        .set({ run_id: runId })
        .where('trigger_id', '=', triggerId)
        .where('delivery_id', '=', deliveryId)
        .execute();
    },
    /** Gives a claimed delivery up (its launch failed), so the forge's redelivery can try again. */
    async releaseDelivery(triggerId: string, deliveryId: string): Promise<void> {
      await db
        .deleteFrom('trigger_deliveries')
        .where('trigger_id', '=', triggerId)
        .where('delivery_id', '=', deliveryId)
        .execute();
    },
  };
}
export type TriggerRepo = ReturnType<typeof createTriggerRepo>;
