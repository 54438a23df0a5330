import { type Kysely, type Selectable, sql } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { Schema, TaskRunTable, TaskStatTable } from '../schema.js';
import { armsOf, type KeyedRows, lastPerKey, newestOfKey } from './last-per-key.js';
import { equalities } from './visibility.js';

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
  /** only these tasks */
  keys?: readonly string[] | undefined;
}

const CHUNK = 100;

/** Every column of task_runs (the walks name what they answer). */
const TASK_RUN_COLUMNS = [
  'task_key',
  'task_seq',
  'run_id',
  'duration_ms',
  'host_ms',
  'project_id',
  'inventory_id',
  'template_id',
  'submitted_by',
  'finished_at',
] as const satisfies ReadonlyArray<keyof TaskRunRow>;
// A column added to task_runs and not listed above fails to compile here.
const allColumns: Exclude<keyof TaskRunRow, (typeof TASK_RUN_COLUMNS)[number]> extends never ? true : never = true;
void allColumns;
const statFilter = (f: TaskFilter) => ({ playbook: f.playbook, project_id: f.projectId, task_key: f.key });

/** A task's duration in one run. */
export type TaskDuration = Pick<TaskRunRow, 'task_key' | 'task_seq' | 'duration_ms'>;

/** task_runs, numbered per task by task_stats.runs: of the tasks matching the filter. */
function tasksOf(filter: TaskFilter): KeyedRows {
  const keys = filter.keys;
  return {
    table: 'task_runs',
    keyColumn: 'task_key',
    seqColumn: 'task_seq',
    driver: sql`task_stats ts`,
    driverWhere: sql`${equalities('ts', statFilter(filter))} and ${
      keys ? sql`ts.task_key in (${sql.join(keys.length ? [...keys] : [''])})` : sql`1 = 1`
    }`,
    driverKey: sql.ref('ts.task_key'),
    driverCount: sql.ref('ts.runs'),
  };
}

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
     * The last `window` runs of each task matching the filter, of runs the caller may see, newest first per task
     * (see newestKeys).
     */
    async recentTaskRuns(filter: TaskFilter, window: number, visible: RunVisibility): Promise<TaskRunRow[]> {
      return lastPerKey<TaskRunRow>(db, dialect, tasksOf(filter), armsOf({}, visible), window, TASK_RUN_COLUMNS);
    },

    /** As recentTaskRuns, only each run's duration: what ranking the tasks needs (host_ms is the bulk of a row). */
    async recentTaskDurations(filter: TaskFilter, window: number, visible: RunVisibility): Promise<TaskDuration[]> {
      return lastPerKey<TaskDuration>(db, dialect, tasksOf(filter), armsOf({}, visible), window, [
        'task_key',
        'task_seq',
        'duration_ms',
      ]);
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
      return newestOfKey<TaskRunRow>(db, dialect, {
        table: 'task_runs',
        keyColumn: 'task_key',
        seqColumn: 'task_seq',
        key,
        columns: TASK_RUN_COLUMNS,
        arms: armsOf({}, visible)?.arms,
        rest: [],
        beforeSeq: page.beforeSeq,
        limit: page.limit,
      });
    },
  };
}
export type TaskTrendRepo = ReturnType<typeof createTaskTrendRepo>;
