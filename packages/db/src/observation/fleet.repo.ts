import { type Kysely, type Selectable, sql } from 'kysely';
import { type DialectName, toNumber } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { HostRunTable, Schema } from '../schema.js';
import { FLEET_WINDOW_RUNS, recordWindows, windowCounts } from './fleet-windows.js';
import { armsOf, type KeyedRows, lastPerKey, newestOfKey, newestRows, asWalks } from './last-per-key.js';

export type HostRunRow = Selectable<HostRunTable>;
/** A host's outcome in a run as the ingester hands it over: numbered when stored. */
export type HostRunDraft = Omit<HostRunRow, 'host_seq'>;

/** A host's runs in a window, counted by outcome (what the fleet is ranked by). */
export interface HostWindowSummary {
  host: string;
  runs: number;
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  /** when its newest run in the window finished */
  last_seen_at: string;
}

/** Narrows a host's runs (each optional). */
export interface HostRunFilter {
  inventoryId?: string | undefined;
  projectId?: string | undefined;
  playbook?: string | undefined;
}

const CHUNK = 100;

/** Every column of host_runs (the walks name what they answer). */
const HOST_RUN_COLUMNS = [
  'host',
  'host_seq',
  'run_id',
  'outcome',
  'ok',
  'changed',
  'failed',
  'unreachable',
  'skipped',
  'rescued',
  'ignored',
  'failed_tasks',
  'playbook',
  'project_id',
  'inventory_id',
  'template_id',
  'submitted_by',
  'git_commit',
  'check_mode',
  'origin',
  'duration_ms',
  'finished_at',
] as const satisfies ReadonlyArray<keyof HostRunRow>;
// A column added to host_runs and not listed above fails to compile here.
const allColumns: Exclude<keyof HostRunRow, (typeof HOST_RUN_COLUMNS)[number]> extends never ? true : never = true;
void allColumns;

const filterOf = (f: HostRunFilter) => ({
  inventory_id: f.inventoryId,
  project_id: f.projectId,
  playbook: f.playbook,
});

/** host_runs, numbered per host by fleet_hosts.runs: every host, or only these. */
function hostsOf(hosts: readonly string[] | undefined): KeyedRows {
  return {
    table: 'host_runs',
    keyColumn: 'host',
    seqColumn: 'host_seq',
    driver: sql`fleet_hosts fh`,
    driverWhere: hosts ? sql`fh.host in (${sql.join(hosts.length ? [...hosts] : [''])})` : sql`1 = 1`,
    driverKey: sql.ref('fh.host'),
    driverCount: sql.ref('fh.runs'),
  };
}

export function createFleetRepo(db: Kysely<Schema>, dialect: DialectName) {
  return {
    /**
     * Numbers each host's new runs after its earlier ones (fleet_hosts.runs, bumped atomically: concurrent finishes
     * on one host take turns on its row) and stores them, and puts them in front of their visibility keys' rings
     * (fleet_windows). `rows` in finish order.
     */
    async recordHostRuns(rows: HostRunDraft[]): Promise<HostRunRow[]> {
      if (rows.length === 0) return [];
      const byHost = new Map<string, HostRunDraft[]>();
      for (const row of rows) {
        const list = byHost.get(row.host);
        if (list) list.push(row);
        else byHost.set(row.host, [row]);
      }
      // Sorted, so two transactions lock the hosts they share in the same order.
      const hosts = [...byHost.keys()].sort();
      const stored: HostRunRow[] = [];
      for (let i = 0; i < hosts.length; i += CHUNK) {
        const values = hosts.slice(i, i + CHUNK).map((host) => {
          const list = byHost.get(host)!;
          const last = list[list.length - 1]!;
          return {
            host,
            runs: list.length,
            last_run_id: last.run_id,
            last_outcome: last.outcome,
            last_seen_at: last.finished_at,
            flaky: 0,
          };
        });
        const counted = await db
          .insertInto('fleet_hosts')
          .values(values)
          .onConflict((oc) =>
            oc.column('host').doUpdateSet((eb) => ({
              runs: sql<number>`fleet_hosts.runs + excluded.runs`,
              last_run_id: eb.ref('excluded.last_run_id'),
              last_outcome: eb.ref('excluded.last_outcome'),
              last_seen_at: eb.ref('excluded.last_seen_at'),
            })),
          )
          .returning(['host', 'runs'])
          .execute();
        for (const { host, runs } of counted) {
          const list = byHost.get(host)!;
          const first = toNumber(runs) - list.length + 1;
          list.forEach((row, k) => stored.push({ ...row, host_seq: first + k }));
        }
      }
      for (let i = 0; i < stored.length; i += CHUNK)
        await db
          .insertInto('host_runs')
          .values(stored.slice(i, i + CHUNK))
          .execute();
      await recordWindows(db, stored);
      return stored;
    },

    /** Records which of these hosts are flaky now (over their last runs, whoever ran them): /metrics counts them. */
    async setFlaky(flags: ReadonlyMap<string, boolean>): Promise<void> {
      for (const value of [1, 0]) {
        const hosts = [...flags].filter(([, f]) => (f ? 1 : 0) === value).map(([h]) => h);
        for (let i = 0; i < hosts.length; i += CHUNK)
          await db
            .updateTable('fleet_hosts')
            .set({ flaky: value })
            .where('host', 'in', hosts.slice(i, i + CHUNK))
            .where('flaky', '<>', value)
            .execute();
      }
    },

    /**
     * The last `window` runs of each host (only `hosts` when given) that match the filter and the caller may see,
     * newest first per host. Without filter and for admins, one primary-key range per host; otherwise each host's
     * newest matching rows (dialect-specific, see lastPerKey).
     */
    async recentRuns(
      filter: HostRunFilter,
      window: number,
      visible: RunVisibility,
      hosts?: readonly string[],
    ): Promise<HostRunRow[]> {
      return lastPerKey<HostRunRow>(
        db,
        dialect,
        hostsOf(hosts),
        armsOf(filterOf(filter), visible),
        window,
        HOST_RUN_COLUMNS,
      );
    },

    /**
     * Each host's last `window` runs (as recentRuns) counted by outcome, counted in the database: ranking the fleet
     * needs no more, and a fleet of thousands of hosts is then thousands of rows, not a window's worth per host.
     * Unfiltered, from rings (fleet_windows): a short row per host (admins), or per host and visibility key the
     * caller sees runs through, where walking the hosts' ranges (or each key's index per host) read hosts × keys ×
     * window index entries, growing with the history as they spread over more pages.
     */
    async recentSummary(
      filter: HostRunFilter,
      window: number,
      visible: RunVisibility,
      hosts?: readonly string[],
    ): Promise<HostWindowSummary[]> {
      // (A window longer than the rings, should the largest window grow past them, walks.)
      if (window <= FLEET_WINDOW_RUNS && Object.values(filter).every((v) => v === undefined))
        return windowCounts(db, dialect, visible, window, hosts);
      const rows = newestRows(dialect, hostsOf(hosts), armsOf(filterOf(filter), visible), window, [
        'host',
        'host_seq',
        'outcome',
      ]);
      const count = (outcome: string) => sql`sum(case when w.outcome = ${outcome} then 1 else 0 end)`;
      // When a host was last seen: its newest run's finish, one row per host.
      const query = sql<Record<keyof HostWindowSummary, string | number>>`
        select c.host, c.runs, c.ok, c.changed, c.failed, c.unreachable, hr.finished_at as last_seen_at
        from (
          select w.host, count(*) as runs, ${count('ok')} as ok, ${count('changed')} as changed,
            ${count('failed')} as failed, ${count('unreachable')} as unreachable, max(w.host_seq) as last_seq
          from (${rows}) w
          group by w.host
        ) c cross join host_runs hr
        where hr.host = c.host and hr.host_seq = c.last_seq`;
      const { rows: counted } = await asWalks(db, dialect, (d) => query.execute(d));
      return counted.map((r) => ({
        host: String(r.host),
        runs: toNumber(r.runs),
        ok: toNumber(r.ok),
        changed: toNumber(r.changed),
        failed: toNumber(r.failed),
        unreachable: toNumber(r.unreachable),
        last_seen_at: String(r.last_seen_at),
      }));
    },

    /** One host's runs the caller may see, newest first, before `beforeSeq`. */
    async hostRuns(
      host: string,
      filter: HostRunFilter,
      page: { limit: number; beforeSeq?: number | undefined },
      visible: RunVisibility,
    ): Promise<HostRunRow[]> {
      const plan = armsOf(filterOf(filter), visible);
      return newestOfKey<HostRunRow>(db, dialect, {
        table: 'host_runs',
        keyColumn: 'host',
        seqColumn: 'host_seq',
        key: host,
        columns: HOST_RUN_COLUMNS,
        arms: plan?.arms,
        rest: plan?.rest ?? [],
        beforeSeq: page.beforeSeq,
        limit: page.limit,
      });
    },

    /** Whether any run the caller may see reported on this host. */
    async hostSeen(host: string, visible: RunVisibility): Promise<boolean> {
      const rows = await newestOfKey<{ host_seq: number }>(db, dialect, {
        table: 'host_runs',
        keyColumn: 'host',
        seqColumn: 'host_seq',
        key: host,
        columns: ['host_seq'],
        arms: armsOf({}, visible)?.arms,
        rest: [],
        limit: 1,
      });
      return rows.length > 0;
    },

    async hostsByLastOutcome(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('fleet_hosts')
        .select(['last_outcome', sql<number>`count(*)`.as('n')])
        .groupBy('last_outcome')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.last_outcome, toNumber(r.n)]));
    },

    async flakyHostCount(): Promise<number> {
      const row = await db
        .selectFrom('fleet_hosts')
        .select(sql<number>`count(*)`.as('n'))
        .where('flaky', '=', 1)
        .executeTakeFirst();
      return toNumber(row?.n);
    },
  };
}
export type FleetRepo = ReturnType<typeof createFleetRepo>;
