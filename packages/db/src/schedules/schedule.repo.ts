import type { Kysely, Selectable } from 'kysely';
import { type DialectName, isForeignKeyViolation, toNumber } from '../dialect.js';
import { isUniqueViolation, refusingDuplicates } from '../errors.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { ScheduleFireTable, ScheduleTable, Schema } from '../schema.js';
import { recordScheduleError } from '../notifiers/notification-outbox.js';

/** A schedule's stored target: a LaunchTarget (typed by contracts; the repository keeps it as given). */
export type ScheduleTargetJson = Record<string, unknown>;

type ScheduleJson = { target: ScheduleTargetJson };
const json = jsonColumns<ScheduleJson>({ target: true });

export type ScheduleRow = Decoded<Selectable<ScheduleTable>, ScheduleJson>;
export type SchedulePatch = Partial<
  Pick<
    ScheduleRow,
    | 'name'
    | 'cron'
    | 'timezone'
    | 'enabled'
    | 'target'
    | 'target_secrets_enc'
    | 'template_id'
    | 'next_run_at'
    | 'updated_at'
  >
>;
export type ScheduleFireRow = Selectable<ScheduleFireTable>;

/** What a fire did: the run it submitted, or why it could not. */
export interface ScheduleFireOutcome {
  run_id: string | null;
  error: string | null;
  fired_at: string;
}

export function createScheduleRepo(db: Kysely<Schema>, dialect: DialectName) {
  // The claim is a plain insert on (schedule_id, due_at): both dialects refuse the second one, so no dialect needs
  // locking of its own.
  void dialect;
  return {
    /** 'missing_template': the template of a template target no longer exists (its foreign key refused the row). */
    async insert(row: ScheduleRow): Promise<'inserted' | 'missing_template'> {
      try {
        await refusingDuplicates(db.insertInto('schedules').values(json.encode(row)).execute());
        return 'inserted';
      } catch (err) {
        if (isForeignKeyViolation(err)) return 'missing_template';
        throw err;
      }
    },
    async findById(id: string): Promise<ScheduleRow | undefined> {
      const row = await db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    /** Newest first; `idIn` limits the list to these ids (the ones a caller may see). */
    async list(page: PageQuery & { idIn?: string[] | undefined }): Promise<ScheduleRow[]> {
      if (page.idIn?.length === 0) return [];
      let q = keysetPage(db.selectFrom('schedules').selectAll(), 'id', page);
      if (page.idIn) q = q.where('id', 'in', page.idIn);
      return (await q.execute()).map((r) => json.decode(r));
    },
    async update(id: string, patch: SchedulePatch): Promise<'updated' | 'missing' | 'missing_template'> {
      try {
        const r = await refusingDuplicates(
          db.updateTable('schedules').set(json.encode(patch)).where('id', '=', id).executeTakeFirst(),
        );
        return toNumber(r.numUpdatedRows) > 0 ? 'updated' : 'missing';
      } catch (err) {
        if (isForeignKeyViolation(err)) return 'missing_template';
        throw err;
      }
    },
    /** Deletes the schedule (its fire slots go with it). */
    async delete(id: string): Promise<boolean> {
      const r = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
      return toNumber(r.numDeletedRows) > 0;
    },

    /** Enabled schedules whose next due time is at or before `now` (ISO text compares in time order), earliest first. */
    async due(now: string, limit: number): Promise<ScheduleRow[]> {
      const rows = await db
        .selectFrom('schedules')
        .selectAll()
        .where('enabled', '=', 1)
        .where('next_run_at', 'is not', null)
        .where('next_run_at', '<=', now)
        .orderBy('next_run_at')
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((r) => json.decode(r));
    },

    /**
     * Claims the due time `due_at` of a schedule: true for the one caller whose insert lands; false for every other
     * (another replica claimed it first), and when the schedule is gone, disabled or no longer due at `due_at`
     * (an update moved it). The slot's primary key makes the claim exactly-once across replicas.
     */
    async claimFire(
      fire: Pick<ScheduleFireRow, 'schedule_id' | 'due_at' | 'claimed_at' | 'claimed_by'>,
    ): Promise<boolean> {
      try {
        const r = await db
          .insertInto('schedule_fires')
          .columns(['schedule_id', 'due_at', 'claimed_at', 'claimed_by'])
          .expression((eb) =>
            eb
              .selectFrom('schedules')
              .select([
                'id',
                eb.val(fire.due_at).as('due_at'),
                eb.val(fire.claimed_at).as('claimed_at'),
                eb.val(fire.claimed_by).as('claimed_by'),
              ])
              .where('id', '=', fire.schedule_id)
              .where('enabled', '=', 1)
              .where('next_run_at', '=', fire.due_at),
          )
          .executeTakeFirst();
        return toNumber(r.numInsertedOrUpdatedRows) > 0;
      } catch (err) {
        if (isUniqueViolation(err) || isForeignKeyViolation(err)) return false;
        throw err;
      }
    },

    /** Records a fire's outcome on its slot and on the schedule (nothing when the schedule was deleted meanwhile). */
    async recordFire(scheduleId: string, dueAt: string, outcome: ScheduleFireOutcome): Promise<void> {
      await db
        .updateTable('schedule_fires')
        .set({ run_id: outcome.run_id, error: outcome.error })
        .where('schedule_id', '=', scheduleId)
        .where('due_at', '=', dueAt)
        .execute();
      await db
        .updateTable('schedules')
        .set({ last_run_id: outcome.run_id, last_fired_at: outcome.fired_at, last_error: outcome.error })
        .where('id', '=', scheduleId)
        .execute();
      if (outcome.error !== null) await recordScheduleError(db, scheduleId, dueAt);
    },

    /**
     * Moves the next due time from `from` to `to`, only if it is still `from` and the schedule still enabled
     * (compare-and-set: an update or another replica that moved it first wins). True when this call moved it.
     */
    async advance(id: string, from: string, to: string | null): Promise<boolean> {
      const r = await db
        .updateTable('schedules')
        .set({ next_run_at: to })
        .where('id', '=', id)
        .where('next_run_at', '=', from)
        .where('enabled', '=', 1)
        .executeTakeFirst();
      return toNumber(r.numUpdatedRows) > 0;
    },

    /** The claimed slots of a schedule, in due order (tests and diagnostics). */
    async fires(scheduleId: string): Promise<ScheduleFireRow[]> {
      return db
        .selectFrom('schedule_fires')
        .selectAll()
        .where('schedule_id', '=', scheduleId)
        .orderBy('due_at')
        .execute();
    },
  };
}
export type ScheduleRepo = ReturnType<typeof createScheduleRepo>;
