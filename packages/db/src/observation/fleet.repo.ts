import { type Kysely, type Selectable, sql } from 'kysely';
import { type DialectName, toNumber } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { HostRunTable, Schema } from '../schema.js';
import { lastPerKey } from './last-per-key.js';
import { equalities, visibleRows } from './visibility.js';

export type HostRunRow = Selectable<HostRunTable>;
/** A host's outcome in a run as the ingester hands it over: numbered when stored. */
export type HostRunDraft = Omit<HostRunRow, 'host_seq'>;

/** Narrows a host's runs (each optional). */
export interface HostRunFilter {
  inventoryId?: string | undefined;
  projectId?: string | undefined;
  playbook?: string | undefined;
}

const CHUNK = 100;

const filterOf = (f: HostRunFilter) => ({
  inventory_id: f.inventoryId,
  project_id: f.projectId,
  playbook: f.playbook,
});
const isEmpty = (f: HostRunFilter) => !f.inventoryId && !f.projectId && !f.playbook;

export function createFleetRepo(db: Kysely<Schema>, dialect: DialectName) {
  return {
    /**
     * Numbers each host's new runs after its earlier ones (fleet_hosts.runs, bumped atomically: concurrent finishes
     * on one host take turns on its row) and stores them. `rows` in finish order.
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
      const only = hosts ? sql`fh.host in (${sql.join(hosts.length ? [...hosts] : [''])})` : sql`1 = 1`;
      if (isEmpty(filter) && visible === 'all') {
        const { rows } = await sql<HostRunRow>`
          select hr.* from fleet_hosts fh
          join host_runs hr on hr.host = fh.host and hr.host_seq > fh.runs - ${window}
          where ${only}
          order by hr.host, hr.host_seq desc`.execute(db);
        return rows;
      }
      return lastPerKey<HostRunRow>(db, dialect, {
        driver: sql`fleet_hosts fh`,
        driverWhere: only,
        table: 'host_runs',
        keyColumn: 'host',
        driverKey: sql.ref('fh.host'),
        seqColumn: 'host_seq',
        match: (alias) => sql`${equalities(alias, filterOf(filter))} and ${visibleRows(alias, visible)}`,
        window,
      });
    },

    /** One host's runs the caller may see, newest first, before `beforeSeq`. */
    async hostRuns(
      host: string,
      filter: HostRunFilter,
      page: { limit: number; beforeSeq?: number | undefined },
      visible: RunVisibility,
    ): Promise<HostRunRow[]> {
      const { rows } = await sql<HostRunRow>`
        select hr.* from host_runs hr
        where hr.host = ${host}
          and ${page.beforeSeq === undefined ? sql`1 = 1` : sql`hr.host_seq < ${page.beforeSeq}`}
          and ${equalities('hr', filterOf(filter))} and ${visibleRows('hr', visible)}
        order by hr.host_seq desc
        limit ${page.limit}`.execute(db);
      return rows;
    },

    /** Whether any run the caller may see reported on this host. */
    async hostSeen(host: string, visible: RunVisibility): Promise<boolean> {
      const { rows } = await sql<{ one: number }>`
        select 1 as one from host_runs hr where hr.host = ${host} and ${visibleRows('hr', visible)} limit 1`.execute(
        db,
      );
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
