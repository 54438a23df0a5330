import type { Kysely } from 'kysely';

// Launching (issue 11): how a run started (origin and what started it), pipeline steps, the sealed secret vars of a
// survey, and the objects that start runs: templates, schedules (with their claimed fire slots) and webhook triggers
// (with the deliveries they have seen). `launch_refs` says which launcher references which object, so deleting a
// project, inventory, credential or template that one still uses answers 409.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('runs')
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('api')) // api | template | schedule | trigger | ai | reconcile | import
    .execute();
  for (const [column, type] of [
    ['schedule_id', 'text'],
    ['trigger_id', 'text'],
    ['git_ref', 'text'], // the branch, tag or commit asked for (git_commit is what it resolved to)
    ['step_index', 'integer'], // a pipeline step's place, from 0
    ['step_name', 'text'],
    ['run_if', 'text'], // success | failure | always (pipeline steps)
    ['survey_answers', 'text'], // JSON: the non-secret answers of a template's survey
    ['secret_vars_enc', 'text'], // sealed JSON {variable: value}: password answers, merged into extra_vars at dispatch
  ] as const) {
    await db.schema.alterTable('runs').addColumn(column, type).execute();
  }
  await db.schema.createIndex('runs_schedule_idx').on('runs').columns(['schedule_id', 'id']).execute();
  await db.schema.createIndex('runs_trigger_idx').on('runs').columns(['trigger_id', 'id']).execute();
  await db.schema.createIndex('runs_origin_idx').on('runs').columns(['origin', 'id']).execute();

  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('kind', 'text', (c) => c.notNull()) // run | pipeline
    .addColumn('spec', 'text', (c) => c.notNull()) // JSON: a run spec or a pipeline spec
    .addColumn('survey', 'text') // JSON: questions (password defaults are not here, see secret_defaults_enc)
    .addColumn('secret_defaults_enc', 'text') // sealed JSON {variable: default} of password questions
    .addColumn('allow_overrides', 'text', (c) => c.notNull()) // JSON array of field names
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull()) // JSON: {run} | {pipeline} | {template_id, survey_answers?, overrides?}
    .addColumn('target_secrets_enc', 'text') // sealed JSON of the target's password answers
    .addColumn('template_id', 'text', (c) => c.references('templates.id')) // a template target: deleting it is refused
    .addColumn('next_run_at', 'text')
    .addColumn('last_run_id', 'text')
    .addColumn('last_fired_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schedules_due_idx').on('schedules').columns(['enabled', 'next_run_at']).execute();
  // A due time is fired by whoever inserts its row first: the exactly-once guarantee across API replicas.
  await db.schema
    .createTable('schedule_fires')
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addColumn('claimed_by', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('schedule_fires_pk', ['schedule_id', 'due_at'])
    .execute();

  await db.schema
    .createTable('triggers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('token', 'text', (c) => c.notNull().unique()) // the hook path's secret part
    .addColumn('secret_enc', 'text', (c) => c.notNull()) // sealed signing secret
    .addColumn('require_signature', 'integer', (c) => c.notNull())
    .addColumn('filters', 'text', (c) => c.notNull()) // JSON {events, branches?, tags?}
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('target_secrets_enc', 'text')
    .addColumn('template_id', 'text', (c) => c.references('templates.id'))
    .addColumn('last_delivery_at', 'text')
    .addColumn('last_run_id', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // A delivery id is fired once per trigger, whichever replica receives it.
  await db.schema
    .createTable('trigger_deliveries')
    .addColumn('trigger_id', 'text', (c) => c.notNull().references('triggers.id').onDelete('cascade'))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text')
    .addPrimaryKeyConstraint('trigger_deliveries_pk', ['trigger_id', 'delivery_id'])
    .execute();

  await db.schema
    .createTable('launch_refs')
    .addColumn('owner_id', 'text', (c) => c.notNull()) // tpl_… | sch_… | trg_…
    .addColumn('object_id', 'text', (c) => c.notNull()) // prj_… | inv_… | cred_… | tpl_…
    .addPrimaryKeyConstraint('launch_refs_pk', ['owner_id', 'object_id'])
    .execute();
  await db.schema.createIndex('launch_refs_object_idx').on('launch_refs').columns(['object_id', 'owner_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['launch_refs', 'trigger_deliveries', 'triggers', 'schedule_fires', 'schedules', 'templates'])
    await db.schema.dropTable(t).execute();
  for (const i of ['runs_schedule_idx', 'runs_trigger_idx', 'runs_origin_idx']) await db.schema.dropIndex(i).execute();
  for (const c of [
    'origin',
    'schedule_id',
    'trigger_id',
    'git_ref',
    'step_index',
    'step_name',
    'run_if',
    'survey_answers',
    'secret_vars_enc',
  ])
    await db.schema.alterTable('runs').dropColumn(c).execute();
}
