// Notifiers, the outbox they fan out from, and their deliveries. Claims are compare-and-set updates, so any number of
// API replicas can run senders against one database and each delivery is attempted by one of them at a time.
import type { Kysely, Selectable } from 'kysely';
import { refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import { toNumber } from '../dialect.js';
import type { NotificationDeliveryTable, NotificationOutboxTable, NotifierTable, Schema } from '../schema.js';

type NotifierJson = { config: Record<string, unknown>; events: string[]; match: Record<string, unknown> | null };
const json = jsonColumns<NotifierJson>({ config: true, events: true, match: true });
export type NotifierRow = Decoded<Selectable<NotifierTable>, NotifierJson>;
export type NotifierPatch = Partial<
  Pick<NotifierRow, 'name' | 'config' | 'secrets_enc' | 'events' | 'match' | 'updated_at'>
>;
export type OutboxRow = Selectable<NotificationOutboxTable>;
export type DeliveryRow = Selectable<NotificationDeliveryTable>;
export type DeliveryPatch = Partial<
  Pick<
    DeliveryRow,
    'status' | 'attempts' | 'next_attempt_at' | 'last_attempt_at' | 'response_code' | 'error' | 'response_excerpt'
  >
>;

const DUE = ['pending', 'retrying'];

export function createNotifierRepo(db: Kysely<Schema>) {
  return {
    async insert(row: NotifierRow): Promise<void> {
      await refusingDuplicates(db.insertInto('notifiers').values(json.encode(row)).execute());
    },
    async findById(id: string): Promise<NotifierRow | undefined> {
      const row = await db.selectFrom('notifiers').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    async list(page: PageQuery & { idIn?: string[] | undefined }): Promise<NotifierRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = keysetPage(db.selectFrom('notifiers').selectAll(), 'id', page);
      if (page.idIn) q = q.where('id', 'in', page.idIn);
      return (await q.execute()).map((r) => json.decode(r));
    },
    /** Every notifier: the fan-out matches each outbox entry against all of them (a short list). */
    async all(): Promise<NotifierRow[]> {
      return (await db.selectFrom('notifiers').selectAll().orderBy('id').execute()).map((r) => json.decode(r));
    },
    async update(id: string, patch: NotifierPatch): Promise<boolean> {
      const r = await refusingDuplicates(
        db.updateTable('notifiers').set(json.encode(patch)).where('id', '=', id).executeTakeFirst(),
      );
      return toNumber(r.numUpdatedRows) > 0;
    },
    /** Deletes it; its deliveries go with it (a pending one is never sent). */
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('notifiers').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },

    /** Outbox entries not yet fanned out, oldest first. */
    async pendingOutbox(limit: number): Promise<OutboxRow[]> {
      return db
        .selectFrom('notification_outbox')
        .selectAll()
        .where('fanned_out', '=', 0)
        .orderBy('at')
        .orderBy('id')
        .limit(limit)
        .execute();
    },
    /** Marks an entry fanned out; true for the one caller that did (the others leave it to that one). */
    async claimOutbox(id: string): Promise<boolean> {
      const r = await db
        .updateTable('notification_outbox')
        .set({ fanned_out: 1 })
        .where('id', '=', id)
        .where('fanned_out', '=', 0)
        .executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
    },

    /** Adds a delivery; a second one for the same notifier and outbox entry is ignored. */
    async insertDelivery(row: DeliveryRow): Promise<void> {
      await db
        .insertInto('notification_deliveries')
        .values(row)
        .onConflict((oc) => oc.columns(['notifier_id', 'outbox_id']).doNothing())
        .execute();
    },
    async findDelivery(id: string): Promise<DeliveryRow | undefined> {
      return db.selectFrom('notification_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    },
    /** Ids of deliveries due at `now` and not leased by a live sender, oldest first. */
    async dueDeliveries(now: string, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('notification_deliveries')
        .select('id')
        .where('status', 'in', DUE)
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },
    /** Leases a due delivery to `holder` until `until`; true when this caller got it. */
    async claimDelivery(id: string, holder: string, now: string, until: string): Promise<boolean> {
      const r = await db
        .updateTable('notification_deliveries')
        .set({ claimed_by: holder, lease_until: until })
        .where('id', '=', id)
        .where('status', 'in', DUE)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
    },
    /** Records an attempt and releases the lease, only while `holder` still holds it. */
    async recordAttempt(id: string, holder: string, patch: DeliveryPatch): Promise<boolean> {
      const r = await db
        .updateTable('notification_deliveries')
        .set({ ...patch, claimed_by: null, lease_until: null })
        .where('id', '=', id)
        .where('claimed_by', '=', holder)
        .executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
    },
    /** A notifier's deliveries, newest first. */
    async deliveriesOf(notifierId: string, limit: number): Promise<DeliveryRow[]> {
      return db
        .selectFrom('notification_deliveries')
        .selectAll()
        .where('notifier_id', '=', notifierId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },
  };
}
export type NotifierRepo = ReturnType<typeof createNotifierRepo>;
