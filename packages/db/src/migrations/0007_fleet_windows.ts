import { type Kysely, sql } from 'kysely';
import { type WindowRun, windowRowsOf } from '../observation/fleet-windows.js';

/** Hosts backfilled per read of host_runs. */
const HOSTS_PER_READ = 20;
const ROWS_PER_INSERT = 100;

// Ranking the unfiltered fleet for a caller who sees runs through a few visibility keys (their own runs, their
// grants) walked each key's index on host_runs per host: hosts × keys × window index entries, ~80–155 ms at 200,000
// runs and growing with the history. Instead, per host and visibility key (and over every run, for admins), the
// newest outcomes in one short row the ingester keeps (see observation/fleet-windows.ts): the ranking reads hosts ×
// keys rows. Filtered rankings keep the walks.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fleet_windows')
    .addColumn('kind', 'text', (c) => c.notNull()) // submitted_by | project_id | inventory_id | template_id | all
    .addColumn('value', 'text', (c) => c.notNull()) // the key's value (`*` for all)
    .addColumn('host', 'text', (c) => c.notNull())
    // the key's newest runs on the host (at most FLEET_WINDOW_RUNS), newest first: fixed-width seq and outcome
    .addColumn('ring', 'text', (c) => c.notNull())
    .addColumn('newest_at', 'text', (c) => c.notNull()) // when the ring's newest run finished
    .addPrimaryKeyConstraint('fleet_windows_pk', ['kind', 'value', 'host'])
    .execute();
  await backfillWindows(db);
}

/** The rings of the history recorded so far, a few hosts at a time (only their newest runs per key are kept). */
export async function backfillWindows(db: Kysely<unknown>): Promise<void> {
  let after = '';
  for (;;) {
    const { rows: hosts } = await sql<{ host: string }>`
      select host from fleet_hosts where host > ${after} order by host limit ${HOSTS_PER_READ}`.execute(db);
    if (hosts.length === 0) break;
    after = hosts[hosts.length - 1]!.host;
    const { rows: runs } = await sql<WindowRun>`
      select host, host_seq, outcome, finished_at, submitted_by, project_id, inventory_id, template_id
      from host_runs where host in (${sql.join(hosts.map((h) => h.host))})`.execute(db);
    const rows = windowRowsOf(runs.map((r) => ({ ...r, host_seq: Number(r.host_seq) })));
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
      await db
        .insertInto('fleet_windows' as never)
        .values(rows.slice(i, i + ROWS_PER_INSERT) as never)
        .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('fleet_windows').execute();
}
