// The observation rollups of finished runs, written by the ingester in the transaction that stores a run's final
// status (and by bench/analytics, through this same function): host outcomes numbered per host, task durations
// numbered per task, and drift. Requests then read a bounded number of rollup rows, never events.
import { DEFAULT_FLEET_WINDOW, type HostCounts } from '@baton/contracts';
import type {
  DriftHostRow,
  DriftItemRow,
  HostRunDraft,
  ObservationRepo,
  RunRow,
  RunTaskResultRow,
  TaskRunDraft,
} from '@baton/db';
import { newId } from '../common/ids.js';
import { toRunHostRows } from '../runs/run.view.js';
import { flakyReason } from './flaky.js';
import { driftScopeOf, playbookOf, resourceOf, taskKeyOf } from './observation-keys.js';

export type RollupTx = {
  observation: Pick<
    ObservationRepo,
    | 'recordHostRuns'
    | 'recentRuns'
    | 'setFlaky'
    | 'recordTaskRuns'
    | 'openAt'
    | 'insertItems'
    | 'refreshItem'
    | 'resolve'
    | 'upsertHosts'
  >;
};

/** A run as it finished: its row (finished_at set), the per-host counts of its stats event, and its task × host results. */
export interface FinishedRun {
  run: RunRow;
  stats: Record<string, HostCounts>;
  results: readonly RunTaskResultRow[];
}

const FAILED_TASKS_KEPT = 5;

interface Change {
  item: string | null;
  diff: unknown;
}

const durationMs = (run: RunRow): number | null =>
  run.started_at && run.finished_at ? Math.max(0, Date.parse(run.finished_at) - Date.parse(run.started_at)) : null;

const visibilityOf = (run: RunRow) => ({
  project_id: run.project_id,
  inventory_id: run.inventory_id,
  template_id: run.template_id,
  submitted_by: run.submitted_by,
});

/** What changed in a changed result, as the ingester kept it; a changed result with nothing kept is one resource. */
function changesOf(result: RunTaskResultRow): Change[] {
  let parsed: unknown = null;
  try {
    parsed = result.changes === null ? null : JSON.parse(result.changes);
  } catch {
    parsed = null;
  }
  const list = Array.isArray(parsed)
    ? parsed.map((c: { item?: unknown; diff?: unknown }) => ({
        item: typeof c?.item === 'string' ? c.item : null,
        diff: c?.diff ?? null,
      }))
    : [];
  return list.length > 0 ? list : [{ item: null, diff: null }];
}

function hostDrafts({ run, stats, results }: FinishedRun, playbook: string): HostRunDraft[] {
  return toRunHostRows(run.id, stats)
    .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
    .map((counts) => ({
      ...counts,
      failed_tasks: JSON.stringify(
        results
          .filter((r) => r.host === counts.host && (r.status === 'failed' || r.status === 'unreachable'))
          .slice(0, FAILED_TASKS_KEPT)
          .map((r) => ({ task: r.task, message: r.message ?? '' })),
      ),
      playbook,
      git_commit: run.git_commit,
      check_mode: run.check_mode,
      origin: run.origin,
      duration_ms: durationMs(run),
      finished_at: run.finished_at!,
      ...visibilityOf(run),
    }));
}

/** A task's duration in a run is its longest host's (what the play waits for); host_ms has every host's. */
function taskDrafts({ run, results }: FinishedRun, playbook: { label: string; key: string }): TaskRunDraft[] {
  const byKey = new Map<string, { first: RunTaskResultRow; hostMs: Record<string, number> }>();
  for (const r of results) {
    if (!r.task_path || r.duration_ms === null || (r.status !== 'ok' && r.status !== 'failed')) continue;
    const key = taskKeyOf(playbook.key, r.task_path);
    const entry = byKey.get(key) ?? { first: r, hostMs: {} };
    entry.hostMs[r.host] = (entry.hostMs[r.host] ?? 0) + r.duration_ms;
    byKey.set(key, entry);
  }
  return [...byKey].map(([key, { first, hostMs }]) => ({
    run: {
      task_key: key,
      run_id: run.id,
      duration_ms: Math.max(...Object.values(hostMs)),
      host_ms: JSON.stringify(hostMs),
      finished_at: run.finished_at!,
      ...visibilityOf(run),
    },
    task: {
      task_key: key,
      playbook: playbook.label,
      project_id: run.project_id,
      task_path: first.task_path!,
      task: first.task,
      action: first.action,
    },
  }));
}

/** Why the dry run could not assess a host (null: it could). */
function unassessedReason(counts: HostCounts, results: readonly RunTaskResultRow[]): string | null {
  const first = (status: string) => results.find((r) => r.status === status);
  if (counts.unreachable > 0) return `unreachable: ${first('unreachable')?.message ?? 'the host could not be reached'}`;
  if (counts.failed > 0) {
    const f = first('failed');
    return f ? `failed: task "${f.task}": ${f.message ?? ''}`.trimEnd() : 'failed';
  }
  const skipped = results.filter((r) => r.status === 'skipped' && /check mode/i.test(r.message ?? ''));
  if (skipped.length > 0)
    return `tasks skipped in check mode: ${[...new Set(skipped.map((r) => r.task))].join(', ')}`.slice(0, 1000);
  return null;
}

async function recordDrift(
  tx: RollupTx,
  { run, stats, results }: FinishedRun,
  playbook: { label: string; key: string },
): Promise<void> {
  const scope = driftScopeOf(run.inventory_id, playbook.key);
  const hosts = Object.keys(stats);
  const open = await tx.observation.openAt(scope, hosts);
  if (!run.check_mode && open.length === 0) return;
  const openOf = (host: string, taskPath: string) =>
    open.filter((d) => d.host === host && d.task_path === taskPath && d.state === 'open');
  const resolveFixed: string[] = [];
  const resolveUnchanged: string[] = [];
  const fresh: DriftItemRow[] = [];
  const at = run.finished_at!;
  for (const r of results) {
    if (r.status !== 'ok' || !r.task_path) continue;
    const existing = openOf(r.host, r.task_path);
    if (!run.check_mode) {
      (r.changed ? resolveFixed : resolveUnchanged).push(...existing.map((d) => d.id));
      for (const d of existing) d.state = 'resolved';
      continue;
    }
    const changes = r.changed ? changesOf(r) : [];
    const still = new Set<string>();
    for (const c of changes) {
      const resource = resourceOf(r.task_path, c.item);
      still.add(resource);
      const found = {
        found_in_run_id: run.id,
        found_at: at,
        diff: r.no_log ? null : JSON.stringify(c.diff ?? null),
        no_log: r.no_log ? 1 : 0,
        git_commit: run.git_commit,
        task: r.task,
        action: r.action,
        ...visibilityOf(run),
      };
      const known =
        existing.find((d) => d.resource === resource) ??
        fresh.find((d) => d.host === r.host && d.scope === scope && d.resource === resource);
      if (known) {
        Object.assign(known, found);
        if (!fresh.includes(known)) await tx.observation.refreshItem(known.id, found);
        continue;
      }
      fresh.push({
        id: newId('drf', Date.parse(at)),
        scope,
        host: r.host,
        resource,
        state: 'open',
        playbook: playbook.label,
        task_path: r.task_path,
        item: c.item,
        reconcile_run_id: null,
        resolved_by_run_id: null,
        resolved_at: null,
        fixed: null,
        ...found,
      });
    }
    for (const d of existing.filter((e) => !still.has(e.resource))) {
      resolveUnchanged.push(d.id);
      d.state = 'resolved';
    }
  }
  await tx.observation.insertItems(fresh);
  if (resolveFixed.length) await tx.observation.resolve(resolveFixed, { runId: run.id, at, fixed: true });
  if (resolveUnchanged.length) await tx.observation.resolve(resolveUnchanged, { runId: run.id, at, fixed: false });
  if (!run.check_mode) return;
  const hostRows: DriftHostRow[] = Object.entries(stats).map(([host, counts]) => {
    const reason = unassessedReason(
      counts,
      results.filter((r) => r.host === host),
    );
    return {
      scope,
      host,
      assessed: reason === null ? 1 : 0,
      reason,
      playbook: playbook.label,
      git_commit: run.git_commit,
      run_id: run.id,
      at,
      ...visibilityOf(run),
    };
  });
  await tx.observation.upsertHosts(hostRows);
}

/** Longest host name the rollups keep (an index key must stay well under PostgreSQL's B-tree row limit). */
export const MAX_ROLLUP_HOST_CHARS = 255;

/** The run without hosts whose names no inventory of a real fleet holds: they must not fail the run's finish. */
function withinLimits(f: FinishedRun): FinishedRun {
  const fits = (host: string) => host.length <= MAX_ROLLUP_HOST_CHARS;
  if (Object.keys(f.stats).every(fits)) return f;
  return {
    run: f.run,
    stats: Object.fromEntries(Object.entries(f.stats).filter(([host]) => fits(host))),
    results: f.results.filter((r) => fits(r.host)),
  };
}

/**
 * Records the rollups of runs that finished with stats, in finish order, in the caller's transaction. Hosts with
 * names over MAX_ROLLUP_HOST_CHARS are left out (they keep their per-run outcome in run_hosts).
 */
export async function recordRollups(tx: RollupTx, given: readonly FinishedRun[]): Promise<void> {
  if (given.length === 0) return;
  const finished = given.map(withinLimits);
  const hostRows: HostRunDraft[] = [];
  const taskRows: TaskRunDraft[] = [];
  for (const f of finished) {
    const playbook = playbookOf(f.run);
    hostRows.push(...hostDrafts(f, playbook.label));
    taskRows.push(...taskDrafts(f, playbook));
  }
  await tx.observation.recordHostRuns(hostRows);
  await tx.observation.recordTaskRuns(taskRows);
  for (const f of finished) await recordDrift(tx, f, playbookOf(f.run));

  // Flaky now, for /metrics: each touched host over its last DEFAULT_FLEET_WINDOW runs, whoever ran them.
  const touched = [...new Set(hostRows.map((h) => h.host))];
  const recent = await tx.observation.recentRuns({}, DEFAULT_FLEET_WINDOW, 'all', touched);
  const byHost = new Map<string, HostRunDraft[]>(touched.map((h) => [h, []]));
  for (const r of recent) byHost.get(r.host)?.push(r);
  // recentRuns answers newest first per host; the rule reads oldest first.
  await tx.observation.setFlaky(new Map([...byHost].map(([h, runs]) => [h, flakyReason(runs.reverse()) !== null])));
}
