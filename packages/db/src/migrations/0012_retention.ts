import type { Kysely } from 'kysely';

// Retention (issue 19): when BATON_RETENTION_DAYS removed a finished run's log and events. The run row, its per-host
// outcomes, task results and the observation rollups stay. The prune pass walks finished runs not yet pruned by the
// time they finished, so the index starts with the marker (null for every run still to consider).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('output_pruned_at', 'text').execute();
  await db.schema
    .createIndex('runs_retention_idx')
    .on('runs')
    .columns(['output_pruned_at', 'finished_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_retention_idx').execute();
  await db.schema.alterTable('runs').dropColumn('output_pruned_at').execute();
}
