import type { Kysely } from 'kysely';

// Observation (issue 14): rollups written by the ingester in the transaction that finishes a run, so fleet health,
// host history, task duration trends and drift read a bounded number of rows per request however long the history.
// Each rollup row carries the visibility keys of its run (submitter, project, inventory, template): a caller's view
// is filtered without joining runs. Plain references to runs, as runs keep to what they ran with: history rows
// outlive what they describe.
export async function up(db: Kysely<unknown>): Promise<void> {
  // What the ingester keeps of a result event for the rollups: the module, the failure message, whether the task was
  // no_log, and (changed results only, never no_log) what changed: [{item?, diff?}].
  for (const [column, type] of [
    ['action', 'text'],
    ['message', 'text'],
    ['no_log', 'integer'],
    ['changes', 'text'],
  ] as const) {
    await db.schema.alterTable('run_task_results').addColumn(column, type).execute();
  }

  // One row per host ever seen: `runs` numbers its finished runs (host_runs.host_seq), so "the last N runs of every
  // host" is one range per host on host_runs' primary key.
  await db.schema
    .createTable('fleet_hosts')
    .addColumn('host', 'text', (c) => c.primaryKey())
    .addColumn('runs', 'integer', (c) => c.notNull())
    .addColumn('last_run_id', 'text', (c) => c.notNull())
    .addColumn('last_outcome', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('flaky', 'integer', (c) => c.notNull()) // over its last 20 runs, whoever ran them (for /metrics)
    .execute();

  await db.schema
    .createTable('host_runs')
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('host_seq', 'integer', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull()) // ok | changed | failed | unreachable
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('changed', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('unreachable', 'integer', (c) => c.notNull())
    .addColumn('skipped', 'integer', (c) => c.notNull())
    .addColumn('rescued', 'integer', (c) => c.notNull())
    .addColumn('ignored', 'integer', (c) => c.notNull())
    .addColumn('failed_tasks', 'text', (c) => c.notNull()) // JSON: [{task, message}], the first 5
    .addColumn('playbook', 'text', (c) => c.notNull()) // a project's path, or `inline:<hash>`
    .addColumn('project_id', 'text')
    .addColumn('inventory_id', 'text')
    .addColumn('template_id', 'text')
    .addColumn('submitted_by', 'text', (c) => c.notNull())
    .addColumn('git_commit', 'text')
    .addColumn('check_mode', 'integer', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull()) // how the run started (api, template, schedule, reconcile…)
    .addColumn('duration_ms', 'integer')
    .addColumn('finished_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('host_runs_pk', ['host', 'host_seq'])
    .execute();
  await db.schema.createIndex('host_runs_run_idx').on('host_runs').columns(['run_id', 'host']).unique().execute();
  // Ranking the fleet reads each host's newest outcomes from here alone, not from the rows.
  await db.schema
    .createIndex('host_runs_outcome_idx')
    .on('host_runs')
    .columns(['host', 'host_seq', 'outcome'])
    .execute();
  // "The last N runs of each host" when only some rows count (a filter, or a caller who sees only some runs) walks
  // each host along one of these per condition, reading only rows that meet it (see last-per-key.ts); with the
  // outcome in the index, ranking the fleet reads the index alone.
  for (const column of ['inventory_id', 'project_id', 'playbook', 'submitted_by', 'template_id'])
    await db.schema
      .createIndex(`host_runs_${column}_idx`)
      .on('host_runs')
      .columns([column, 'host', 'host_seq', 'outcome'])
      .execute();

  // One row per task (a playbook's task path): `runs` numbers the runs that ran it (task_runs.task_seq).
  await db.schema
    .createTable('task_stats')
    .addColumn('task_key', 'text', (c) => c.primaryKey())
    .addColumn('runs', 'integer', (c) => c.notNull())
    .addColumn('playbook', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text')
    .addColumn('task_path', 'text', (c) => c.notNull())
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('last_run_id', 'text', (c) => c.notNull())
    .addColumn('last_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('task_stats_project_idx').on('task_stats').columns(['project_id', 'playbook']).execute();

  // One row per task and run: how long it took (its longest host) and on each host.
  await db.schema
    .createTable('task_runs')
    .addColumn('task_key', 'text', (c) => c.notNull())
    .addColumn('task_seq', 'integer', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('host_ms', 'text', (c) => c.notNull()) // JSON: {host: ms}
    .addColumn('project_id', 'text')
    .addColumn('inventory_id', 'text')
    .addColumn('template_id', 'text')
    .addColumn('submitted_by', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_runs_pk', ['task_key', 'task_seq'])
    .execute();
  await db.schema.createIndex('task_runs_run_idx').on('task_runs').columns(['run_id', 'task_key']).execute();
  // Ranking tasks reads each task's newest durations from here alone.
  await db.schema
    .createIndex('task_runs_duration_idx')
    .on('task_runs')
    .columns(['task_key', 'task_seq', 'duration_ms'])
    .execute();
  // The same walks per task for a caller who sees only some runs (with the duration: ranking tasks reads no row).
  for (const column of ['project_id', 'inventory_id', 'submitted_by', 'template_id'])
    await db.schema
      .createIndex(`task_runs_${column}_idx`)
      .on('task_runs')
      .columns([column, 'task_key', 'task_seq', 'duration_ms'])
      .execute();

  // A resource a dry run found out of its desired state, until a later run shows it unchanged (or changes it for real).
  await db.schema
    .createTable('drift_items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('scope', 'text', (c) => c.notNull()) // inventory and playbook: `<inventory id or inline>|<playbook key>`
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull()) // task path and item
    .addColumn('state', 'text', (c) => c.notNull()) // open | resolved
    .addColumn('playbook', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text')
    .addColumn('inventory_id', 'text')
    .addColumn('template_id', 'text')
    .addColumn('submitted_by', 'text', (c) => c.notNull())
    .addColumn('git_commit', 'text')
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('task_path', 'text', (c) => c.notNull())
    .addColumn('item', 'text')
    .addColumn('action', 'text')
    .addColumn('diff', 'text') // JSON; null for no_log tasks
    .addColumn('no_log', 'integer', (c) => c.notNull())
    .addColumn('found_in_run_id', 'text', (c) => c.notNull())
    .addColumn('found_at', 'text', (c) => c.notNull())
    .addColumn('reconcile_run_id', 'text')
    .addColumn('resolved_by_run_id', 'text')
    .addColumn('resolved_at', 'text')
    .addColumn('fixed', 'integer') // 1: the resolving run changed it; 0: a later run found it unchanged
    .execute();
  // At most one open row per resource; resolved rows stay as history.
  await db.schema
    .createIndex('drift_items_resource_idx')
    .on('drift_items')
    .columns(['scope', 'host', 'resource', 'state'])
    .execute();
  await db.schema.createIndex('drift_items_state_idx').on('drift_items').columns(['state', 'host']).execute();
  await db.schema.createIndex('drift_items_reconcile_idx').on('drift_items').column('reconcile_run_id').execute();

  // Per inventory, playbook and host: whether the latest dry run could assess it, and why not.
  await db.schema
    .createTable('drift_hosts')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('assessed', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('playbook', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text')
    .addColumn('inventory_id', 'text')
    .addColumn('template_id', 'text')
    .addColumn('submitted_by', 'text', (c) => c.notNull())
    .addColumn('git_commit', 'text')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('drift_hosts_pk', ['scope', 'host'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['drift_hosts', 'drift_items', 'task_runs', 'task_stats', 'host_runs', 'fleet_hosts'])
    await db.schema.dropTable(t).execute();
  for (const c of ['changes', 'no_log', 'message', 'action'])
    await db.schema.alterTable('run_task_results').dropColumn(c).execute();
}
