import { z } from 'zod';
import {
  checkedBy,
  decimalInteger,
  idOf,
  NO_CONTROL_CHARACTERS,
  PageCursor,
  PageLimit,
  Timestamp,
} from '../common/common.schemas.js';
import { unstorableTextReason } from '../common/text.js';
import { Run, RunOrigin } from '../runs/run.schemas.js';

export const MAX_FLEET_WINDOW = 200;
export const DEFAULT_FLEET_WINDOW = 20;
export const DEFAULT_TASK_WINDOW = 50;
export const MAX_TASK_WINDOW = 500;

/** A host name as inventories have them: dots, dashes, brackets (IPv6), unicode; no control characters. */
export const HostName = z
  .string()
  .min(1)
  .max(255)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .superRefine(checkedBy(unstorableTextReason))
  .meta({ description: 'a host name as the inventory names it', example: 'web-01.example.com' });

/** A playbook as observation names it: the path inside its project, or `inline:<hash>` for an inline playbook. */
const PlaybookFilter = z.string().min(1).max(1024).superRefine(checkedBy(unstorableTextReason)).meta({
  description: 'a project playbook path (e.g. `site.yml`), or `inline:<hash>` as observation names an inline playbook',
});

const HostOutcome = z.enum(['ok', 'changed', 'failed', 'unreachable']);
const RunCounts = z.object({ ok: z.number(), changed: z.number(), failed: z.number(), unreachable: z.number() });

export const FLAKY_RULE =
  'Flaky: for the same host, playbook and inventory, the outcome flips between success (ok, changed) and failure ' +
  '(failed, unreachable) at least twice within the window (in finish order), while the failure rate of those runs is ' +
  'between 10% and 90% inclusive. A host is flaky when any of its playbook × inventory series is; flaky_reason names ' +
  'that series, its failure rate and the runs where the outcome flipped.';

export const FleetQuery = z.strictObject({
  host: HostName.optional().meta({ description: 'this host only (its row, or none)' }),
  inventory: idOf('inv').optional(),
  project: idOf('prj').optional(),
  playbook: PlaybookFilter.optional(),
  window: decimalInteger(1, MAX_FLEET_WINDOW)
    .prefault(String(DEFAULT_FLEET_WINDOW))
    .meta({ description: `the last N runs of each host that count (1–${MAX_FLEET_WINDOW}, default 20)` }),
  flaky: z.enum(['true', 'false']).optional().meta({ description: 'true: only flaky hosts; false: only the others' }),
  limit: PageLimit,
  cursor: PageCursor.optional(),
});
export type FleetQuery = z.infer<typeof FleetQuery>;

export const FleetHost = z
  .object({
    host: z.string(),
    runs: z.number().meta({ description: 'runs in the window (those the caller may see, matching the filters)' }),
    ok: z.number().meta({ description: 'runs in which the host ended ok (nothing changed)' }),
    changed: z.number().meta({ description: 'runs in which the host ended with changes' }),
    failed: z.number().meta({ description: 'runs in which a task failed on the host' }),
    unreachable: z.number().meta({ description: 'runs in which the host was unreachable' }),
    failure_rate: z.number().meta({ description: '(failed + unreachable) / runs, 0–1' }),
    last_outcome: HostOutcome,
    last_run_id: z.string(),
    last_seen_at: Timestamp,
    flaky: z.boolean(),
    flaky_reason: z.string().nullable(),
  })
  .meta({ id: 'FleetHost' });
export type FleetHost = z.infer<typeof FleetHost>;

export const HostParams = z.strictObject({ host: HostName });

export const HostRunsQuery = z.strictObject({
  inventory: idOf('inv').optional(),
  project: idOf('prj').optional(),
  playbook: PlaybookFilter.optional(),
  limit: PageLimit,
  cursor: PageCursor.optional(),
});
export type HostRunsQuery = z.infer<typeof HostRunsQuery>;

export const HostRun = z
  .object({
    run_id: z.string(),
    outcome: HostOutcome,
    counts: RunCounts.extend({ skipped: z.number(), rescued: z.number(), ignored: z.number() }).meta({
      description: 'the host’s task counters in that run (ansible’s recap)',
    }),
    failed_tasks: z
      .array(z.object({ task: z.string(), message: z.string() }))
      .meta({ description: 'the first 5 tasks that failed or found the host unreachable' }),
    duration_s: z.number().nullable().meta({ description: 'the run’s duration' }),
    playbook: z.string(),
    project_id: z.string().nullable(),
    inventory_id: z.string().nullable(),
    commit: z.string().nullable(),
    check: z.boolean(),
    origin: RunOrigin,
    finished_at: Timestamp,
  })
  .meta({ id: 'HostRun' });
export type HostRun = z.infer<typeof HostRun>;

export const TaskTrendQuery = z.strictObject({
  playbook: PlaybookFilter.optional(),
  project: idOf('prj').optional(),
  host: HostName.optional().meta({ description: 'durations on this host only, over its last `window` runs' }),
  window: decimalInteger(2, MAX_TASK_WINDOW)
    .prefault(String(DEFAULT_TASK_WINDOW))
    .meta({ description: `the last N runs of each task (2–${MAX_TASK_WINDOW}, default 50)` }),
  limit: PageLimit,
  cursor: PageCursor.optional(),
});
export type TaskTrendQuery = z.infer<typeof TaskTrendQuery>;

export const TaskTrend = z
  .object({
    key: z.string().meta({ description: 'the task’s key for GET /v1/tasks/{key}' }),
    playbook: z.string(),
    project_id: z.string().nullable(),
    task_path: z.string(),
    task: z.string().meta({ description: 'its name in the latest run' }),
    action: z.string().nullable(),
    runs: z.number(),
    mean_s: z.number(),
    p50_s: z.number(),
    p95_s: z.number(),
    last_s: z.number(),
    trend_pct: z.number().nullable().meta({
      description: 'change of the median from the older to the newer half of the window, in %; null under 2 runs',
    }),
    slowest_hosts: z.array(z.object({ host: z.string(), p50_s: z.number() })),
  })
  .meta({ id: 'TaskTrend' });
export type TaskTrend = z.infer<typeof TaskTrend>;

export const TaskKeyParams = z.strictObject({
  key: z.string().regex(/^[0-9a-f]{24}$/, 'must be a task key as GET /v1/tasks gives it'),
});
export const TaskHistoryQuery = z.strictObject({
  limit: decimalInteger(1, 1000)
    .prefault('200')
    .meta({ description: 'how many of its latest runs to chart (1–1000, default 200)' }),
});
export type TaskHistoryQuery = z.infer<typeof TaskHistoryQuery>;

export const TaskPoint = z
  .object({
    run_id: z.string(),
    finished_at: Timestamp,
    duration_s: z.number().meta({ description: 'its longest host' }),
    hosts: z.record(z.string(), z.number()).meta({ description: 'seconds per host' }),
  })
  .meta({ id: 'TaskPoint' });
export type TaskPoint = z.infer<typeof TaskPoint>;

export const TaskDetail = TaskTrend.extend({
  points: z.array(TaskPoint).meta({ description: 'its latest runs, oldest first' }),
}).meta({ id: 'TaskDetail', description: 'one task: its trend over its last 50 runs, and its durations over time' });
export type TaskDetail = z.infer<typeof TaskDetail>;

export const DriftQuery = z.strictObject({
  host: HostName.optional(),
  inventory: idOf('inv').optional(),
  playbook: PlaybookFilter.optional(),
  limit: PageLimit,
  cursor: PageCursor.optional(),
});
export type DriftQuery = z.infer<typeof DriftQuery>;

export const DriftItem = z
  .object({
    id: z.string(),
    host: z.string(),
    playbook: z.string(),
    project_id: z.string().nullable(),
    commit: z.string().nullable(),
    inventory_id: z.string().nullable(),
    task: z.string(),
    task_path: z.string(),
    item: z.string().optional().meta({ description: 'the loop item, for a task with a loop' }),
    action: z.string().nullable(),
    diff: z.unknown().meta({
      description: 'what --check --diff reported (null when the module reports none, always for no_log tasks)',
    }),
    no_log: z.boolean(),
    found_in_run_id: z.string(),
    found_at: Timestamp,
    reconcile_run_id: z.string().nullable().meta({ description: 'the reconcile run proposed for it, if any' }),
  })
  .meta({ id: 'DriftItem' });
export type DriftItem = z.infer<typeof DriftItem>;

export const UnassessedHost = z
  .object({
    host: z.string(),
    playbook: z.string(),
    project_id: z.string().nullable(),
    inventory_id: z.string().nullable(),
    commit: z.string().nullable(),
    reason: z.string(),
    run_id: z.string().meta({ description: 'the dry run that could not assess it' }),
    at: Timestamp,
  })
  .meta({ id: 'UnassessedHost' });
export type UnassessedHost = z.infer<typeof UnassessedHost>;

export const ReconcileBody = z
  .strictObject({
    host: HostName,
    playbook: PlaybookFilter.optional(),
    inventory_id: idOf('inv').optional(),
  })
  .meta({ id: 'ReconcileBody' });
export type ReconcileBody = z.infer<typeof ReconcileBody>;

export const ReconcileResult = z.object({ run: Run, resources: z.array(DriftItem) }).meta({ id: 'ReconcileResult' });
export type ReconcileResult = z.infer<typeof ReconcileResult>;

/** A resolved drift item as the reconcile run's page shows it. */
export const FixedDriftItem = DriftItem.extend({
  resolved_by_run_id: z.string().nullable(),
  resolved_at: Timestamp.nullable(),
  fixed: z.boolean().nullable(),
}).meta({ id: 'FixedDriftItem' });
export type FixedDriftItem = z.infer<typeof FixedDriftItem>;
