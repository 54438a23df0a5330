import type { Kysely } from 'kysely';

// Worker back-pressure (issue 19): a `baton worker` whose unsent-event buffer is full leases no new run and says so
// in its heartbeat; the API mirrors why it is paused (null while it leases), so GET /v1/workers and the UI show it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workers').addColumn('paused', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('workers').dropColumn('paused').execute();
}
