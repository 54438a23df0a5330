import type { Kysely } from 'kysely';

// Runs, their events, per-host outcomes, per task × host results, and the executors that run them.
// Runs keep plain (not foreign-key) references to projects, inventories, credentials and templates: history
// outlives what it ran with, so deleting a project must not be blocked by, nor delete, its runs.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull()) // run | split | shard
    .addColumn('parent_id', 'text', (c) => c.references('runs.id'))
    .addColumn('shard_index', 'integer')
    .addColumn('shard_count', 'integer')
    .addColumn('retry_of', 'text')
    .addColumn('status', 'text', (c) => c.notNull()) // pending | held | running | finished
    .addColumn('conclusion', 'text') // succeeded | failed | canceled | rejected | error
    .addColumn('reason', 'text')
    .addColumn('playbook_source', 'text', (c) => c.notNull()) // inline | project
    .addColumn('playbook', 'text', (c) => c.notNull()) // YAML content (inline) or path inside the project
    .addColumn('project_id', 'text')
    .addColumn('git_commit', 'text')
    .addColumn('template_id', 'text')
    .addColumn('inventory_id', 'text')
    .addColumn('inventory_content', 'text') // inline inventory, or a shard's inventory of only its hosts
    .addColumn('inventory_format', 'text')
    .addColumn('host_limit', 'text')
    .addColumn('hosts', 'text') // JSON array: the host set a shard (or a retry) was given
    .addColumn('extra_vars', 'text') // JSON object
    .addColumn('credential_ids', 'text', (c) => c.notNull()) // JSON array
    .addColumn('check_mode', 'integer', (c) => c.notNull())
    .addColumn('forks', 'integer')
    .addColumn('verbosity', 'integer')
    .addColumn('timeout_s', 'integer')
    .addColumn('labels', 'text', (c) => c.notNull()) // JSON array of worker labels
    .addColumn('submitted_by', 'text', (c) => c.notNull())
    .addColumn('worker', 'text')
    .addColumn('exit_code', 'integer')
    .addColumn('stats', 'text') // JSON: per-host counts from playbook_on_stats
    .addColumn('last_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('log_lines', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('log_bytes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('cancel_requested_at', 'text')
    .execute();
  await db.schema.createIndex('runs_status_idx').on('runs').columns(['status', 'id']).execute();
  await db.schema.createIndex('runs_parent_idx').on('runs').column('parent_id').execute();
  await db.schema.createIndex('runs_project_idx').on('runs').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('runs_inventory_idx').on('runs').columns(['inventory_id', 'id']).execute();
  await db.schema.createIndex('runs_template_idx').on('runs').columns(['template_id', 'id']).execute();
  await db.schema.createIndex('runs_submitted_by_idx').on('runs').columns(['submitted_by', 'id']).execute();

  await db.schema
    .createTable('run_events')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('host', 'text')
    .addColumn('log_line', 'integer') // log events: first line of the chunk (1-based)
    .addColumn('log_byte', 'integer') // log events: byte offset of the chunk in the whole log (UTF-8)
    .addColumn('data', 'text', (c) => c.notNull()) // JSON
    .addPrimaryKeyConstraint('run_events_pk', ['run_id', 'seq'])
    .execute();
  // Reading a window of a long log finds its first chunk by line or byte offset without walking the run's events.
  await db.schema
    .createIndex('run_events_log_line_idx')
    .on('run_events')
    .columns(['run_id', 'kind', 'log_line'])
    .execute();
  await db.schema
    .createIndex('run_events_log_byte_idx')
    .on('run_events')
    .columns(['run_id', 'kind', 'log_byte'])
    .execute();

  await db.schema
    .createTable('run_hosts')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull()) // unreachable | failed | changed | ok
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('changed', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('unreachable', 'integer', (c) => c.notNull())
    .addColumn('skipped', 'integer', (c) => c.notNull())
    .addColumn('rescued', 'integer', (c) => c.notNull())
    .addColumn('ignored', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('run_hosts_pk', ['run_id', 'host'])
    .execute();
  await db.schema.createIndex('run_hosts_host_idx').on('run_hosts').columns(['host', 'run_id']).execute();

  await db.schema
    .createTable('run_task_results')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull()) // the result event's seq
    .addColumn('task_uuid', 'text', (c) => c.notNull())
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('task_path', 'text')
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull()) // ok | failed | skipped | unreachable
    .addColumn('changed', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('ended_at', 'text')
    .addColumn('duration_ms', 'integer')
    .addPrimaryKeyConstraint('run_task_results_pk', ['run_id', 'seq'])
    .execute();
  await db.schema.createIndex('run_task_results_task_idx').on('run_task_results').columns(['task', 'run_id']).execute();

  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull()) // embedded | daemon
    .addColumn('labels', 'text', (c) => c.notNull()) // JSON array
    .addColumn('capacity', 'integer', (c) => c.notNull())
    .addColumn('running', 'text', (c) => c.notNull()) // JSON array of run ids
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('heartbeat_at', 'text', (c) => c.notNull())
    .addColumn('lease_expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['workers', 'run_task_results', 'run_hosts', 'run_events', 'runs'])
    await db.schema.dropTable(t).execute();
}
