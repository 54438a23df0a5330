import { type Kysely, type Selectable, sql } from 'kysely';
import { type DialectName, toNumber } from '../dialect.js';
import { type Decoded, jsonColumns } from '../json-columns.js';
import { keysetPage, type PageQuery } from '../page.js';
import type { RunHostTable, RunTable, RunTaskResultTable, Schema } from '../schema.js';
import { recordRunStatus } from '../notifiers/notification-outbox.js';

/** A host's final counters (contracts' HostCounts, which db does not import). */
export interface RunHostCounts {
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  skipped: number;
  rescued: number;
  ignored: number;
}
/** A run's JSON columns, parsed. */
export interface RunJson {
  /** a shard's (or a retry's) host set */
  hosts: string[] | null;
  extra_vars: Record<string, unknown> | null;
  credential_ids: string[];
  /** worker labels, sorted */
  labels: string[];
  /** per-host counters of a finished run */
  stats: Record<string, RunHostCounts> | null;
  /** the non-secret answers of a template's survey */
  survey_answers: Record<string, unknown> | null;
  /** ids of the approval policies that hold it */
  held_by: string[] | null;
  /** those policies as they were when the run was held */
  hold_policies: HeldPolicy[] | null;
}

/** An approval policy as it was when it held a run: what decides its release, whatever later edits do. */
export interface HeldPolicy {
  id: string;
  name: string;
  approvers: { roles?: string[] | undefined; users?: string[] | undefined; teams?: string[] | undefined };
  min_approvals: number;
  expires_after_s: number | null;
}
const json = jsonColumns<RunJson>({
  hosts: true,
  extra_vars: true,
  credential_ids: true,
  labels: true,
  stats: true,
  survey_answers: true,
  held_by: true,
  hold_policies: true,
});

export type RunRow = Decoded<Selectable<RunTable>, RunJson>;
export type RunPatch = Partial<Omit<RunRow, 'id' | 'kind' | 'created_at' | 'submitted_by'>>;
export type RunHostRow = Selectable<RunHostTable>;
export type RunTaskResultRow = Selectable<RunTaskResultTable>;

export interface RunFilter {
  status?: string | undefined;
  conclusion?: string | undefined;
  projectId?: string | undefined;
  templateId?: string | undefined;
  scheduleId?: string | undefined;
  triggerId?: string | undefined;
  origin?: string | undefined;
  kind?: string | undefined;
  inventoryId?: string | undefined;
  /** runs with a per-host outcome row for this host */
  host?: string | undefined;
  /** created at or after (RFC 3339) */
  since?: string | undefined;
  /** false: top-level runs only (no shards) */
  includeShards?: boolean | undefined;
}

/** Who sees which runs (the runs domain's visibility rule): all, or the union of these. */
export type RunVisibility =
  'all' | { submittedBy: string; projectIds: string[]; inventoryIds: string[]; templateIds: string[] };

/** Keeps each INSERT well under SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_CHUNK = 200;

export function createRunRepo(db: Kysely<Schema>, dialect: DialectName) {
  return {
    async insert(row: RunRow): Promise<void> {
      await db.insertInto('runs').values(json.encode(row)).execute();
      await recordRunStatus(db, row.id, row.status, row.created_at);
    },
    async findById(id: string): Promise<RunRow | undefined> {
      const row = await db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && json.decode(row);
    },
    async findMany(ids: string[]): Promise<RunRow[]> {
      if (ids.length === 0) return [];
      return (await db.selectFrom('runs').selectAll().where('id', 'in', ids).execute()).map(json.decode);
    },
    /**
     * findMany inside a transaction, holding the rows until it ends: two API replicas ingesting one run's events
     * take turns instead of both reading the same last seq. PostgreSQL locks the rows (in id order, so two batches
     * cannot deadlock); SQLite has one writer per database already.
     */
    async findManyLocked(ids: string[]): Promise<RunRow[]> {
      if (ids.length === 0) return [];
      const q = db.selectFrom('runs').selectAll().where('id', 'in', ids).orderBy('id');
      return (await (dialect === 'postgres' ? q.forUpdate() : q).execute()).map(json.decode);
    },
    /** Newest first. */
    async list(filter: RunFilter, page: PageQuery, visible: RunVisibility): Promise<RunRow[]> {
      let q = keysetPage(db.selectFrom('runs').selectAll(), 'id', page);
      if (filter.status) q = q.where('status', '=', filter.status);
      if (filter.conclusion) q = q.where('conclusion', '=', filter.conclusion);
      if (filter.projectId) q = q.where('project_id', '=', filter.projectId);
      if (filter.templateId) q = q.where('template_id', '=', filter.templateId);
      if (filter.inventoryId) q = q.where('inventory_id', '=', filter.inventoryId);
      if (filter.scheduleId) q = q.where('schedule_id', '=', filter.scheduleId);
      if (filter.triggerId) q = q.where('trigger_id', '=', filter.triggerId);
      if (filter.origin) q = q.where('origin', '=', filter.origin);
      if (filter.kind) q = q.where('kind', '=', filter.kind);
      if (filter.since) q = q.where('created_at', '>=', filter.since);
      // Top-level runs only: no shards, no pipeline steps (GET /runs/{id}/steps and /shards list those).
      if (!filter.includeShards) q = q.where('parent_id', 'is', null);
      if (filter.host) {
        const host = filter.host;
        q = q.where('id', 'in', (sub) => sub.selectFrom('run_hosts').select('run_id').where('host', '=', host));
      }
      if (visible !== 'all') {
        const v = visible;
        q = q.where((eb) => {
          const ors = [eb('submitted_by', '=', v.submittedBy)];
          if (v.projectIds.length) ors.push(eb('project_id', 'in', v.projectIds));
          if (v.inventoryIds.length) ors.push(eb('inventory_id', 'in', v.inventoryIds));
          if (v.templateIds.length) ors.push(eb('template_id', 'in', v.templateIds));
          return eb.or(ors);
        });
      }
      return (await q.execute()).map(json.decode);
    },
    /** Shards of a split in shard order; steps of a pipeline in step order. */
    async children(parentId: string): Promise<RunRow[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('parent_id', '=', parentId)
        .orderBy('step_index', 'asc')
        .orderBy('shard_index', 'asc')
        .orderBy('id', 'asc')
        .execute();
      return rows.map(json.decode);
    },
    /** Oldest first: the recovery sweep re-dispatches in submit order. */
    async listByStatus(status: string, opts: { kinds?: string[] } = {}): Promise<RunRow[]> {
      let q = db.selectFrom('runs').selectAll().where('status', '=', status).orderBy('id', 'asc');
      if (opts.kinds) q = q.where('kind', 'in', opts.kinds);
      return (await q.execute()).map(json.decode);
    },
    /** Top-level runs waiting for approval, newest first (`GET /v1/runs?awaiting=me` filters them per caller). */
    async listHeld(opts: { limit: number }): Promise<RunRow[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('status', '=', 'held')
        .where('parent_id', 'is', null)
        .orderBy('id', 'desc')
        .limit(opts.limit)
        .execute();
      return rows.map(json.decode);
    },
    /** Held runs whose hold has expired at `now`, oldest first (the recovery sweep rejects them). */
    async listHoldExpired(now: string): Promise<RunRow[]> {
      const rows = await db
        .selectFrom('runs')
        .selectAll()
        .where('status', '=', 'held')
        .where('hold_expires_at', '<=', now)
        .orderBy('id', 'asc')
        .execute();
      return rows.map(json.decode);
    },
    /**
     * Compare-and-set: applies `patch` only while the run's status is one of `from`. The one way a status
     * changes, so two actors (a cancel and an executor's claim, say) can never both win.
     */
    async transition(id: string, from: readonly string[], patch: RunPatch): Promise<boolean> {
      const r = await db
        .updateTable('runs')
        .set(json.encode(patch))
        .where('id', '=', id)
        .where('status', 'in', [...from])
        .executeTakeFirst();
      const moved = toNumber(r.numUpdatedRows) > 0;
      if (moved && patch.status !== undefined)
        await recordRunStatus(db, id, patch.status, patch.finished_at ?? patch.started_at);
      return moved;
    },
    async update(id: string, patch: RunPatch): Promise<boolean> {
      const r = await db.updateTable('runs').set(json.encode(patch)).where('id', '=', id).executeTakeFirst();
      const moved = toNumber(r.numUpdatedRows) > 0;
      if (moved && patch.status !== undefined)
        await recordRunStatus(db, id, patch.status, patch.finished_at ?? patch.started_at);
      return moved;
    },
    /**
     * Moves the ingest high-water marks forward, never back (a replayed batch leaves them as they are);
     * `outputTruncated` only ever sets the flag.
     */
    async advanceProgress(
      id: string,
      progress: { lastSeq: number; logLines: number; logBytes: number; outputTruncated?: boolean | undefined },
    ): Promise<void> {
      await db
        .updateTable('runs')
        .set({
          last_seq: progress.lastSeq,
          log_lines: progress.logLines,
          log_bytes: progress.logBytes,
          ...(progress.outputTruncated ? { output_truncated: 1 } : {}),
        })
        .where('id', '=', id)
        .where('last_seq', '<', progress.lastSeq)
        .execute();
    },
    async replaceHosts(runId: string, rows: RunHostRow[]): Promise<void> {
      await db.deleteFrom('run_hosts').where('run_id', '=', runId).execute();
      for (let i = 0; i < rows.length; i += INSERT_CHUNK)
        await db
          .insertInto('run_hosts')
          .values(rows.slice(i, i + INSERT_CHUNK))
          .execute();
    },
    /** In host name order. */
    async hostsOf(runId: string): Promise<RunHostRow[]> {
      return db.selectFrom('run_hosts').selectAll().where('run_id', '=', runId).orderBy('host', 'asc').execute();
    },
    /** Idempotent on (run_id, seq): a replayed batch inserts nothing twice. */
    async insertTaskResults(rows: RunTaskResultRow[]): Promise<void> {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await db
          .insertInto('run_task_results')
          .values(rows.slice(i, i + INSERT_CHUNK))
          .onConflict((oc) => oc.columns(['run_id', 'seq']).doNothing())
          .execute();
      }
    },
    async taskResultsOf(runId: string): Promise<RunTaskResultRow[]> {
      return db.selectFrom('run_task_results').selectAll().where('run_id', '=', runId).orderBy('seq', 'asc').execute();
    },
    /** How many runs are in each status (for /metrics). */
    async countByStatus(): Promise<Record<string, number>> {
      const rows = await db
        .selectFrom('runs')
        .select(['status', sql<number>`count(*)`.as('n')])
        .groupBy('status')
        .execute();
      return Object.fromEntries(rows.map((r) => [r.status, toNumber(r.n)]));
    },
    /** Pending runs an executor runs itself (core's isDispatchable: runs, shards, steps not split): the queue depth of /metrics. */
    async countQueued(): Promise<number> {
      const row = await db
        .selectFrom('runs')
        .select(sql<number>`count(*)`.as('n'))
        .where('status', '=', 'pending')
        .where((eb) =>
          eb.or([eb('kind', 'in', ['run', 'shard']), eb.and([eb('kind', '=', 'step'), eb('shard_count', 'is', null)])]),
        )
        .executeTakeFirstOrThrow();
      return toNumber(row.n);
    },
  };
}
export type RunRepo = ReturnType<typeof createRunRepo>;
