import { z } from 'zod';
import { checkedBy, decimalInteger, idOf, PageCursor, PageLimit, Timestamp } from '../common/common.schemas.js';
import { branchNameProblem } from '../projects/git-names.js';
import { MAX_INVENTORY_CONTENT_CHARS } from '../inventories/inventory.schemas.js';
import { RunApproval } from './run-approval.schemas.js';

/** `waiting`: a pipeline step whose earlier steps have not finished yet. */
export const RunStatus = z.enum(['pending', 'held', 'waiting', 'running', 'finished']);
export type RunStatus = z.infer<typeof RunStatus>;
export const RunConclusion = z.enum(['succeeded', 'failed', 'canceled', 'rejected', 'error']);
export type RunConclusion = z.infer<typeof RunConclusion>;
/**
 * `run` an ordinary run, `split` the parent of shard runs, `shard` one part of a split, `pipeline` the parent of
 * step runs, `step` one step of a pipeline (a step with shard_count set is itself split into shards).
 */
export const RunKind = z.enum(['run', 'split', 'shard', 'pipeline', 'step']);
export type RunKind = z.infer<typeof RunKind>;
/** How a run started; every origin goes through the same submission path. */
export const RunOrigin = z.enum(['api', 'template', 'schedule', 'trigger', 'ai', 'reconcile', 'import']);
export type RunOrigin = z.infer<typeof RunOrigin>;
/** When a pipeline step runs: `success` every earlier step that ran succeeded, `failure` one failed, `always`. */
export const RunIf = z.enum(['success', 'failure', 'always']);
export type RunIf = z.infer<typeof RunIf>;

/** Largest inline playbook. */
export const MAX_PLAYBOOK_CHARS = 256 * 1024;
/** Longest run time a caller may ask for: a week. */
export const MAX_TIMEOUT_S = 7 * 24 * 3600;
export const MAX_SHARDS = 500;

/** A worker label, as `baton worker --labels` accepts it. */
export const WorkerLabel = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/,
    'a label is 1–64 letters, digits, `_`, `.`, `:` or `-`, starting with a letter or digit',
  );

/** A branch, tag or full commit id: a ref name git accepts (git check-ref-format --allow-onelevel), never an option. */
export const GitRef = z
  .string()
  .superRefine(checkedBy(branchNameProblem))
  .meta({ description: 'a branch, tag or full commit id of the project to run instead of its branch head' });

/** The fields of a run spec, shared by POST /v1/runs, pipeline steps, templates, schedules and triggers. */
export const RUN_SPEC_FIELDS = {
  playbook: z.string().min(1).max(MAX_PLAYBOOK_CHARS).meta({
    description:
      'Without project_id: the playbook YAML itself. With project_id: a relative path inside the project at the commit resolved now (no `..`).',
  }),
  project_id: idOf('prj').optional(),
  inventory_id: idOf('inv').optional(),
  inventory: z
    .string()
    .min(1)
    .max(MAX_INVENTORY_CONTENT_CHARS)
    .optional()
    .meta({ description: 'inline inventory content (INI, YAML or JSON), instead of inventory_id' }),
  limit: z.string().trim().min(1).max(4096).optional().meta({ description: 'ansible host pattern (--limit)' }),
  extra_vars: z.record(z.string(), z.unknown()).optional(),
  credential_ids: z.array(idOf('cred')).max(16).optional().meta({
    description: 'ssh_key, become_password, vault_password and env credentials; the caller needs use on each',
  }),
  check: z.boolean().optional().meta({ description: 'dry run: --check --diff' }),
  forks: z.number().int().min(1).max(500).optional(),
  verbosity: z.number().int().min(0).max(4).optional(),
  timeout_s: z.number().int().min(1).max(MAX_TIMEOUT_S).optional(),
  shards: z
    .number()
    .int()
    .min(0)
    .max(MAX_SHARDS)
    .optional()
    .meta({ description: '2 or more splits the run: shard k of N gets hosts [k::N] sorted by name, after limit' }),
  labels: z.array(WorkerLabel).max(16).optional().meta({
    description:
      'only a worker holding every one of these labels runs it (queue mode: `baton worker --labels`); embedded executors hold none',
  }),
  ref: GitRef.optional(),
};

export const SubmitRunBody = z.strictObject(RUN_SPEC_FIELDS).meta({ id: 'SubmitRunBody' });
export type SubmitRunBody = z.infer<typeof SubmitRunBody>;

/** One host's counts from ansible's final playbook_on_stats. */
export const HostCounts = z
  .object({
    ok: z.number().int(),
    changed: z.number().int(),
    failed: z.number().int(),
    unreachable: z.number().int(),
    skipped: z.number().int(),
    rescued: z.number().int(),
    ignored: z.number().int(),
    reason: z
      .string()
      .optional()
      .meta({ description: 'why the host was unreachable when Baton knows: `host key changed`, `host key unknown`' }),
  })
  .meta({ id: 'HostCounts' });
export type HostCounts = z.infer<typeof HostCounts>;

/** Hosts by final outcome: unreachable beats failed beats changed beats ok. */
export const HostOutcomeSummary = z
  .object({
    total: z.number().int(),
    ok: z.number().int(),
    changed: z.number().int(),
    failed: z.number().int(),
    unreachable: z.number().int(),
  })
  .meta({ id: 'HostOutcomeSummary' });
export type HostOutcomeSummary = z.infer<typeof HostOutcomeSummary>;

export const Run = z
  .object({
    id: z.string(),
    kind: RunKind,
    parent_id: z.string().nullable(),
    shard_index: z.number().int().nullable(),
    shard_count: z.number().int().nullable(),
    retry_of: z.string().nullable(),
    status: RunStatus,
    conclusion: RunConclusion.nullable(),
    reason: z.string().nullable(),
    playbook: z.string().meta({ description: 'the path inside the project, or "(inline)" for inline content' }),
    project_id: z.string().nullable(),
    commit: z.string().nullable(),
    ref: z
      .string()
      .nullable()
      .meta({ description: 'the branch, tag or commit asked for; commit is what it resolved to' }),
    origin: RunOrigin,
    template_id: z.string().nullable(),
    schedule_id: z.string().nullable(),
    trigger_id: z.string().nullable(),
    step_index: z.number().int().nullable().meta({ description: 'a pipeline step: its place, from 0' }),
    step_name: z.string().nullable(),
    run_if: RunIf.nullable(),
    survey_answers: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'the survey answers it was launched with; password answers are left out' }),
    inventory_id: z.string().nullable(),
    limit: z.string().nullable(),
    hosts: z
      .array(z.string())
      .nullable()
      .meta({ description: 'the host set of a shard or a retry; null when the whole inventory (after limit) applies' }),
    extra_vars: z.record(z.string(), z.unknown()).nullable(),
    credential_ids: z.array(z.string()),
    check: z.boolean(),
    forks: z.number().int().nullable(),
    verbosity: z.number().int().nullable(),
    timeout_s: z.number().int().nullable(),
    labels: z
      .array(z.string())
      .meta({ description: 'worker labels the run asked for; only a worker holding all of them runs it' }),
    submitted_by: z.string(),
    worker: z.string().nullable(),
    exit_code: z.number().int().nullable(),
    host_summary: HostOutcomeSummary.nullable(),
    host_stats: z
      .record(z.string(), HostCounts)
      .nullable()
      .meta({ description: 'per-host counts; only in GET /v1/runs/{id}' })
      .optional(),
    last_seq: z.number().int(),
    log_lines: z.number().int(),
    output_truncated: z.boolean().meta({
      description:
        'the run printed more than BATON_RUN_OUTPUT_LIMIT_MB: its log ends with a notice line and later events carry only their metadata (no `res`)',
    }),
    output_pruned_at: Timestamp.nullable().meta({
      description:
        'when retention (BATON_RETENTION_DAYS) removed the log and events of this finished run: its log then reads empty and its events as [], while outcomes, host counts and log_lines stay',
    }),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    cancel_requested_at: Timestamp.nullable(),
    held_by: z.array(z.string()).nullable().meta({
      description:
        'ids of the approval policies that held it for approval (empty for a run held because of its origin: ai, reconcile); null when never held',
    }),
    hold_expires_at: Timestamp.nullable().meta({
      description: 'when a held run finishes `rejected` with reason `expired` (the earliest expiry of its policies)',
    }),
    approvals_needed: z
      .array(
        z.object({
          policy_id: z.string(),
          name: z.string(),
          min_approvals: z.number().int(),
          approved: z.number().int().meta({ description: 'approvals so far that count toward this policy' }),
        }),
      )
      .nullable()
      .meta({
        description: 'per holding policy (as it was when the run was held), how many approvals it needs and has',
      }),
    approvals: z.array(RunApproval).meta({ description: 'every decision on the run, oldest first' }),
  })
  .meta({ id: 'Run' });
export type Run = z.infer<typeof Run>;

export const RunIdParams = z.strictObject({ id: idOf('run') });

const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

export const RunListQuery = z.strictObject({
  limit: PageLimit,
  cursor: PageCursor.optional(),
  status: RunStatus.optional(),
  conclusion: RunConclusion.optional(),
  project: idOf('prj').optional(),
  template: idOf('tpl').optional(),
  schedule: idOf('sch').optional(),
  trigger: idOf('trg').optional(),
  origin: RunOrigin.optional(),
  kind: RunKind.optional().meta({
    description: '`run`, `split` or `pipeline` (top-level kinds); `shard` and `step` need include_shards=true',
  }),
  inventory: idOf('inv').optional(),
  host: z.string().min(1).max(255).optional().meta({ description: 'runs that reported an outcome for this host' }),
  since: z.iso.datetime({ offset: true }).optional().meta({ description: 'created at or after this time' }),
  include_shards: flag
    .optional()
    .meta({ description: 'also list shard and step runs (by default only top-level runs)' }),
  awaiting: z
    .literal('me')
    .optional()
    .meta({ description: '`me`: held runs the caller may decide on and has not decided on yet (never their own)' }),
});
export type RunListQuery = z.infer<typeof RunListQuery>;

export const RunLogQuery = z.strictObject({
  offset: decimalInteger(0, Number.MAX_SAFE_INTEGER).optional().meta({ description: 'lines to skip' }),
  limit: decimalInteger(1, 1_000_000).optional().meta({ description: 'lines to return' }),
});

export const RunEventsQuery = z.strictObject({
  after_seq: decimalInteger(0, Number.MAX_SAFE_INTEGER).optional(),
  kind: z.string().min(1).max(100).optional(),
  host: z.string().min(1).max(255).optional(),
  limit: decimalInteger(1, 10_000)
    .prefault('1000')
    .meta({ description: 'most events returned (max 10000); page on with after_seq' }),
});

export const WorkerFreshness = z.enum(['fresh', 'stale', 'dead']);
export const Worker = z
  .object({
    id: z.string(),
    name: z.string(),
    host: z.string(),
    mode: z.enum(['embedded', 'daemon']),
    labels: z.array(z.string()),
    capacity: z.number().int(),
    running: z
      .array(z.string())
      .meta({ description: 'ids of the runs it holds that the caller may see (admins: all)' }),
    running_count: z.number().int().meta({ description: 'how many runs it holds, seen or not' }),
    started_at: Timestamp,
    last_heartbeat: Timestamp,
    lease_expires_at: Timestamp,
    freshness: WorkerFreshness,
    paused: z.enum(['event_buffer_full']).nullable().meta({
      description:
        'why the worker leases no new run, or null while it leases: event_buffer_full = it cannot reach Redis and its unsent events passed BATON_WORKER_BUFFER_MB (none is dropped; it leases again once they are sent)',
    }),
  })
  .meta({ id: 'Worker' });
export type Worker = z.infer<typeof Worker>;
