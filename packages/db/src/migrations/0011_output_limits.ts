import type { Kysely } from 'kysely';

// Output limits (issue 19): a run whose log was cut at BATON_RUN_OUTPUT_LIMIT_MB says so, whichever side cut it
// (the executor, or the ingester holding the same limit against any writer).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('output_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
