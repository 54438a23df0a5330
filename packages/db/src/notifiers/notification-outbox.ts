// The notification outbox is written by the statement that changes a run's status, in its transaction: whichever
// path changes it (ingest, a decision, a cancel, recovery), a notification can neither be lost to a crash nor sent
// for a change that was rolled back. Only top-level runs (not shards or pipeline steps) are recorded.
import { type Kysely, sql } from 'kysely';
import type { Schema } from '../schema.js';

/** The statuses a notification can be about: held (approval), running (started), finished (each outcome). */
const NOTIFIED = new Set(['held', 'running', 'finished']);

/** Records that run `runId` reached `status` (once per run and status: a replay changes nothing). */
export async function recordRunStatus(db: Kysely<Schema>, runId: string, status: unknown, at?: unknown): Promise<void> {
  if (typeof status !== 'string' || !NOTIFIED.has(status)) return;
  const when = typeof at === 'string' ? at : new Date().toISOString();
  // SQLite reads ON CONFLICT after INSERT … SELECT only when the SELECT has a WHERE clause, which this one has.
  await sql`insert into notification_outbox (id, source, subject_id, status, at, fanned_out)
    select ${`run:${runId}:${status}`}, 'run', id, ${status}, ${when}, 0 from runs where id = ${runId} and parent_id is null
    on conflict (id) do nothing`.execute(db);
}

/** Records that schedule `scheduleId` could not fire at `dueAt`. */
export async function recordScheduleError(db: Kysely<Schema>, scheduleId: string, dueAt: string): Promise<void> {
  await db
    .insertInto('notification_outbox')
    .values({
      id: `schedule:${scheduleId}:${dueAt}`,
      source: 'schedule',
      subject_id: scheduleId,
      status: 'error',
      at: dueAt,
      fanned_out: 0,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}
