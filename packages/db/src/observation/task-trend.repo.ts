import { type Kysely, type Selectable, sql } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { Schema, TaskRunTable, TaskStatTable } from '../schema.js';
import { lastPerKey } from './last-per-key.js';
import { equalities, visibleRows } from './visibility.js';

export type TaskStatRow = Selectable<TaskStatTable>;
export type TaskRunRow = Selectable<TaskRunTable>;
/** A task's duration in a run as the ingester hands it over, with what it knows of the task: numbered when stored. */
export interface TaskRunDraft {
  run: Omit<TaskRunRow, 'task_seq'>;
  task: Omit<TaskStatRow, 'runs' | 'last_run_id' | 'last_at'>;
}

/** Which tasks (each optional): by playbook, project, or one key. */
export interface TaskFilter {
  playbook?: string | undefined;
  projectId?: string | undefined;
  key?: string | undefined;
}

const CHUNK = 100;
const statFilter = (f: TaskFilter) => ({ playbook: f.playbook, project_id: f.projectId, task_key: f.key });

export function createTaskTrendRepo(db: Kysely<Schema>, dialect: DialectName) {
  return {
    /** Numbers each task's new runs after its earlier ones (task_stats.runs, bumped atomically) and stores them. */
    async recordTaskRuns(drafts: TaskRunDraft[]): Promise<void> {
      if (drafts.length === 0) return;
      const byKey = new Map<string, TaskRunDraft[]>();
      for (const d of drafts) {
        const list = byKey.get(d.run.task_key);
        if (list) list.push(d);
        else byKey.set(d.run.task_key, [d]);
      }
      const keys = [...byKey.keys()].sort();
      const stored: TaskRunRow[] = [];
      for (let i = 0; i < keys.length; i += CHUNK) {
        const values = keys.slice(i, i + CHUNK).map((key) => {
          const list = byKey.get(key)!;
          const last = list[list.length - 1]!;
          return { ...last.task, runs: list.length, last_run_id: last.run.run_id, last_at: last.run.finished_at };
        });
        const counted = await db
          .insertInto('task_stats')
          .values(values)
          .onConflict((oc) =>
            oc.column('task_key').doUpdateSet((eb) => ({
              runs: sql<number>`task_stats.runs + excluded.runs`,
              task: eb.ref('excluded.task'),
              action: eb.ref('excluded.action'),
              last_run_id: eb.ref('excluded.last_run_id'),
              last_at: eb.ref('excluded.last_at'),
            })),
          )
          .returning(['task_key', 'runs'])
          .execute();
        for (const { task_key, runs } of counted) {
          const list = byKey.get(task_key)!;
          const first = Number(runs) - list.length + 1;
          list.forEach((d, k) => stored.push({ ...d.run, task_seq: first + k }));
        }
      }
      for (let i = 0; i < stored.length; i += CHUNK)
        await db
          .insertInto('task_runs')
          .values(stored.slice(i, i + CHUNK))
          .execute();
    },

    async taskStats(filter: TaskFilter): Promise<TaskStatRow[]> {
      const { rows } = await sql<TaskStatRow>`
        select ts.* from task_stats ts where ${equalities('ts', statFilter(filter))}`.execute(db);
      return rows;
    },

    /**
     * The last `window` runs of each task matching the filter, of runs the caller may see, newest first per task.
     * Admins: one primary-key range per task; others: each task's newest visible rows (lastPerKey).
     */
    async recentTaskRuns(filter: TaskFilter, window: number, visible: RunVisibility): Promise<TaskRunRow[]> {
      const which = equalities('ts', statFilter(filter));
      if (visible === 'all') {
        const { rows } = await sql<TaskRunRow>`
          select tr.* from task_stats ts
          join task_runs tr on tr.task_key = ts.task_key and tr.task_seq > ts.runs - ${window}
          where ${which}
          order by tr.task_key, tr.task_seq desc`.execute(db);
        return rows;
      }
      return lastPerKey<TaskRunRow>(db, dialect, {
        driver: sql`task_stats ts`,
        driverWhere: which,
        table: 'task_runs',
        keyColumn: 'task_key',
        driverKey: sql.ref('ts.task_key'),
        seqColumn: 'task_seq',
        match: (alias) => visibleRows(alias, visible),
        window,
      });
    },

    /** The task rows of these runs (a host's recent runs), of tasks matching the filter. */
    async taskRunsOfRuns(runIds: readonly string[], filter: TaskFilter): Promise<TaskRunRow[]> {
      const out: TaskRunRow[] = [];
      const ids = [...runIds];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const { rows } = await sql<TaskRunRow>`
          select tr.* from task_runs tr join task_stats ts on ts.task_key = tr.task_key
          where tr.run_id in (${sql.join(ids.slice(i, i + CHUNK))}) and ${equalities('ts', statFilter(filter))}`.execute(
          db,
        );
        out.push(...rows);
      }
      return out;
    },

    /** One task's runs the caller may see, newest first, before `beforeSeq`. */
    async taskHistory(
      key: string,
      page: { limit: number; beforeSeq?: number | undefined },
      visible: RunVisibility,
    ): Promise<TaskRunRow[]> {
      const { rows } = await sql<TaskRunRow>`
        select tr.* from task_runs tr
        where tr.task_key = ${key}
          and ${page.beforeSeq === undefined ? sql`1 = 1` : sql`tr.task_seq < ${page.beforeSeq}`}
          and ${visibleRows('tr', visible)}
        order by tr.task_seq desc
        limit ${page.limit}`.execute(db);
      return rows;
    },
  };
}
export type TaskTrendRepo = ReturnType<typeof createTaskTrendRepo>;
