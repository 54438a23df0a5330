// Task duration trends (issue 14): per task (a playbook's task path), its durations over the last runs that ran it,
// read from the rollups the ingester keeps (task_stats, task_runs).
import {
  DEFAULT_TASK_WINDOW,
  type TaskDetail,
  type TaskHistoryQuery,
  type TaskTrend,
  type TaskTrendQuery,
} from '@baton/contracts';
import type { ObservationRepo, TaskDuration, TaskRunRow, TaskStatRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import type { Page } from '../common/paging.js';
import type { RunAccess } from '../runs/run-access.js';
import { decodeNumberCursor, offsetPage } from './observation-paging.js';
import { mean, quantile, seconds, trendPct } from './stats.js';

const SLOWEST_HOSTS = 3;

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function hostMs(row: TaskRunRow): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(row.host_ms);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** A task over its window: `durations` oldest first (ms), `perHost` each host's durations (ms). */
function toTrend(stat: TaskStatRow, durations: number[], perHost: Map<string, number[]>): TaskTrend {
  const slowest = [...perHost]
    .map(([host, ms]) => ({ host, p50_s: seconds(quantile(ms, 0.5)) }))
    .sort((a, b) => b.p50_s - a.p50_s || (a.host < b.host ? -1 : 1))
    .slice(0, SLOWEST_HOSTS);
  return {
    key: stat.task_key,
    playbook: stat.playbook,
    project_id: stat.project_id,
    task_path: stat.task_path,
    task: stat.task,
    action: stat.action,
    runs: durations.length,
    mean_s: seconds(mean(durations)),
    p50_s: seconds(quantile(durations, 0.5)),
    p95_s: seconds(quantile(durations, 0.95)),
    last_s: seconds(durations[durations.length - 1]!),
    trend_pct: trendPct(durations),
    slowest_hosts: slowest,
  };
}

/** Task keys by the p95 of their durations, slowest first (as trends are sorted). */
function byP95(durations: readonly TaskDuration[]): string[] {
  const byKey = new Map<string, number[]>();
  for (const d of durations) pushTo(byKey, d.task_key, d.duration_ms);
  return [...byKey]
    .map(([key, ms]) => ({ key, p95: seconds(quantile(ms, 0.95)) }))
    .sort((a, b) => b.p95 - a.p95 || (a.key < b.key ? -1 : 1))
    .map((t) => t.key);
}

export function createTaskTrendService(deps: {
  observation: Pick<
    ObservationRepo,
    'taskStats' | 'recentTaskRuns' | 'recentTaskDurations' | 'taskRunsOfRuns' | 'recentRuns' | 'taskHistory'
  >;
  access: Pick<RunAccess, 'visibility'>;
}) {
  /** Rows of one task, newest first → its trend (durations of `host` only when given). */
  function trendsOf(stats: TaskStatRow[], rows: TaskRunRow[], host: string | undefined): TaskTrend[] {
    const byKey = new Map<string, TaskRunRow[]>();
    for (const r of rows) pushTo(byKey, r.task_key, r);
    const trends: TaskTrend[] = [];
    for (const stat of stats) {
      const list = (byKey.get(stat.task_key) ?? []).sort((a, b) => a.task_seq - b.task_seq);
      const durations: number[] = [];
      const perHost = new Map<string, number[]>();
      for (const r of list) {
        const ms = hostMs(r);
        if (host !== undefined && ms[host] === undefined) continue;
        durations.push(host === undefined ? r.duration_ms : ms[host]!);
        for (const [h, v] of Object.entries(ms)) {
          if (host !== undefined && h !== host) continue;
          pushTo(perHost, h, v);
        }
      }
      if (durations.length > 0) trends.push(toTrend(stat, durations, perHost));
    }
    return trends.sort((a, b) => b.p95_s - a.p95_s || (a.key < b.key ? -1 : 1));
  }

  return {
    /** Tasks sorted by p95, slowest first, over the last `window` runs of each (of the host, with `host`). */
    async tasks(p: Principal, q: TaskTrendQuery): Promise<Page<TaskTrend>> {
      const offset = decodeNumberCursor(q.cursor) ?? 0;
      const visible = await deps.access.visibility(p);
      const filter = { playbook: q.playbook, projectId: q.project };
      const stats = await deps.observation.taskStats(filter);
      if (q.host === undefined) {
        // Ranked by their durations alone; only the page's tasks are read with each host's durations (the bulk).
        const page = offsetPage(
          byP95(await deps.observation.recentTaskDurations(filter, q.window, visible)),
          offset,
          q.limit,
        );
        const keys = new Set(page.items);
        const rows = await deps.observation.recentTaskRuns({ ...filter, keys: [...keys] }, q.window, visible);
        const items = trendsOf(
          stats.filter((s) => keys.has(s.task_key)),
          rows,
          undefined,
        );
        return { ...page, items };
      }
      // The host's last `window` runs, then the tasks those runs ran there.
      const runs = await deps.observation.recentRuns(
        { projectId: q.project, playbook: q.playbook },
        q.window,
        visible,
        [q.host],
      );
      const rows = await deps.observation.taskRunsOfRuns(
        runs.map((r) => r.run_id),
        filter,
      );
      return offsetPage(trendsOf(stats, rows, q.host), offset, q.limit);
    },

    /**
     * One task: its trend over the last runs that ran it, and its durations over time, oldest first (for a chart).
     * Undefined when no run the caller may see ran it.
     */
    async task(p: Principal, key: string, q: TaskHistoryQuery): Promise<TaskDetail | undefined> {
      const stats = await deps.observation.taskStats({ key });
      const visible = await deps.access.visibility(p);
      const rows = await deps.observation.taskHistory(key, { limit: Math.max(q.limit, DEFAULT_TASK_WINDOW) }, visible);
      const trend = trendsOf(stats, rows.slice(0, DEFAULT_TASK_WINDOW), undefined)[0];
      if (!trend) return undefined;
      const points = rows
        .slice(0, q.limit)
        .reverse()
        .map((r) => ({
          run_id: r.run_id,
          finished_at: r.finished_at,
          duration_s: seconds(r.duration_ms),
          hosts: Object.fromEntries(Object.entries(hostMs(r)).map(([h, ms]) => [h, seconds(ms)])),
        }));
      return { ...trend, points };
    },
  };
}
export type TaskTrendService = ReturnType<typeof createTaskTrendService>;
