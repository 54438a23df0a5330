import { type Kysely, type Selectable, sql } from 'kysely';
import { toNumber } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { DriftHostTable, DriftItemTable, Schema } from '../schema.js';
import { equalities, visibleRows } from './visibility.js';

export type DriftItemRow = Selectable<DriftItemTable>;
export type DriftHostRow = Selectable<DriftHostTable>;

export interface DriftFilter {
  host?: string | undefined;
  inventoryId?: string | undefined;
  playbook?: string | undefined;
}

const CHUNK = 100;
const filterOf = (f: DriftFilter) => ({ host: f.host, inventory_id: f.inventoryId, playbook: f.playbook });

export function createDriftRepo(db: Kysely<Schema>) {
  return {
    /** The open drift of these hosts in one scope (inventory and playbook). */
    async openAt(scope: string, hosts: readonly string[]): Promise<DriftItemRow[]> {
      if (hosts.length === 0) return [];
      const out: DriftItemRow[] = [];
      for (let i = 0; i < hosts.length; i += CHUNK)
        out.push(
          ...(await db
            .selectFrom('drift_items')
            .selectAll()
            .where('state', '=', 'open')
            .where('scope', '=', scope)
            .where('host', 'in', hosts.slice(i, i + CHUNK))
            .execute()),
        );
      return out;
    },

    async insertItems(rows: DriftItemRow[]): Promise<void> {
      for (let i = 0; i < rows.length; i += CHUNK)
        await db
          .insertInto('drift_items')
          .values(rows.slice(i, i + CHUNK))
          .execute();
    },

    /** A resource still drifting, found again by a later dry run: what it found replaces what was known. */
    async refreshItem(
      id: string,
      patch: Pick<
        DriftItemRow,
        | 'found_in_run_id'
        | 'found_at'
        | 'diff'
        | 'no_log'
        | 'git_commit'
        | 'task'
        | 'action'
        | 'project_id'
        | 'inventory_id'
        | 'template_id'
        | 'submitted_by'
      >,
    ): Promise<void> {
      await db.updateTable('drift_items').set(patch).where('id', '=', id).execute();
    },

    async resolve(ids: readonly string[], by: { runId: string; at: string; fixed: boolean }): Promise<void> {
      for (let i = 0; i < ids.length; i += CHUNK)
        await db
          .updateTable('drift_items')
          .set({ state: 'resolved', resolved_by_run_id: by.runId, resolved_at: by.at, fixed: by.fixed ? 1 : 0 })
          .where('id', 'in', ids.slice(i, i + CHUNK))
          .where('state', '=', 'open')
          .execute();
    },

    async upsertHosts(rows: DriftHostRow[]): Promise<void> {
      for (let i = 0; i < rows.length; i += CHUNK)
        await db
          .insertInto('drift_hosts')
          .values(rows.slice(i, i + CHUNK))
          .onConflict((oc) =>
            oc.columns(['scope', 'host']).doUpdateSet((eb) => ({
              assessed: eb.ref('excluded.assessed'),
              reason: eb.ref('excluded.reason'),
              playbook: eb.ref('excluded.playbook'),
              project_id: eb.ref('excluded.project_id'),
              inventory_id: eb.ref('excluded.inventory_id'),
              template_id: eb.ref('excluded.template_id'),
              submitted_by: eb.ref('excluded.submitted_by'),
              git_commit: eb.ref('excluded.git_commit'),
              run_id: eb.ref('excluded.run_id'),
              at: eb.ref('excluded.at'),
            })),
          )
          .execute();
    },

    /** Open drift the caller may see, newest finding first (by id), after the cursor id. */
    async list(
      filter: DriftFilter,
      page: { limit: number; before?: string | undefined },
      visible: RunVisibility,
    ): Promise<DriftItemRow[]> {
      const { rows } = await sql<DriftItemRow>`
        select d.* from drift_items d
        where d.state = 'open' and ${equalities('d', filterOf(filter))} and ${visibleRows('d', visible)}
          and ${page.before === undefined ? sql`1 = 1` : sql`d.id < ${page.before}`}
        order by d.id desc limit ${page.limit}`.execute(db);
      return rows;
    },

    /** Every open drift item of one host the caller may see (reconcile). */
    async openOfHost(host: string, filter: DriftFilter, visible: RunVisibility): Promise<DriftItemRow[]> {
      const { rows } = await sql<DriftItemRow>`
        select d.* from drift_items d
        where d.state = 'open' and d.host = ${host}
          and ${equalities('d', filterOf(filter))} and ${visibleRows('d', visible)}
        order by d.found_at desc, d.id desc`.execute(db);
      return rows;
    },

    async byReconcileRun(runId: string): Promise<DriftItemRow[]> {
      return db.selectFrom('drift_items').selectAll().where('reconcile_run_id', '=', runId).orderBy('id').execute();
    },

    async markReconcile(ids: readonly string[], runId: string): Promise<void> {
      for (let i = 0; i < ids.length; i += CHUNK)
        await db
          .updateTable('drift_items')
          .set({ reconcile_run_id: runId })
          .where('id', 'in', ids.slice(i, i + CHUNK))
          .execute();
    },

    /** Hosts the latest dry run could not assess, the caller may see, by host then scope, after the cursor. */
    async unassessed(
      filter: DriftFilter,
      page: { limit: number; after?: { host: string; scope: string } | undefined },
      visible: RunVisibility,
    ): Promise<DriftHostRow[]> {
      const after = page.after;
      const { rows } = await sql<DriftHostRow>`
        select h.* from drift_hosts h
        where h.assessed = 0 and ${equalities('h', filterOf(filter))} and ${visibleRows('h', visible)}
          and ${after === undefined ? sql`1 = 1` : sql`(h.host > ${after.host} or (h.host = ${after.host} and h.scope > ${after.scope}))`}
        order by h.host, h.scope limit ${page.limit}`.execute(db);
      return rows;
    },

    async openDriftCount(): Promise<number> {
      const row = await db
        .selectFrom('drift_items')
        .select(sql<number>`count(*)`.as('n'))
        .where('state', '=', 'open')
        .executeTakeFirst();
      return toNumber(row?.n);
    },
  };
}
export type DriftRepo = ReturnType<typeof createDriftRepo>;
