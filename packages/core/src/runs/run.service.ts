// Submitting and acting on runs (issue 4, "Submitting", "Cancel and retry"; ARCHITECTURE.md "A run's path" step 1):
// checks, one transaction for the run (or split and shards) and its audit entry, then the queue.
import {
  InventoryParseError,
  type Run,
  type RunConclusion,
  type RunDecision,
  type RunListQuery,
  type RunStatus,
  type SubmitRunBody,
} from '@baton/contracts';
import type { AuditRepo, RunApprovalRepo, RunRepo, RunRow } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, notFound, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, UnprocessableError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';
import type { RunDecisions } from './run-decision.js';
import { heldRows, holdWords, type RunHolder } from './run-hold.js';
import type { CredentialService } from '../credentials/credential.service.js';
import type { InventoryService } from '../inventories/inventory.service.js';
import type { ProjectService } from '../projects/project.service.js';
import type { RunAccess } from './run-access.js';
import type { RunIngester } from './run-ingest.js';
import { API_LAUNCH, type LaunchContext } from './run-launch.js';
import { type InventoryTool, originWords, type RunPreparer } from './run-prepare.js';
import { recheckRunInputs } from './run-recheck.js';
import { freshRunState, hasShards, isDispatchable } from './run-rows.js';
import { toRunView } from './run.view.js';

type TxRepos = { runs: Pick<RunRepo, 'insert'>; audit: Pick<AuditRepo, 'append'> };

export interface RunServiceDeps {
  runs: Pick<RunRepo, 'findById' | 'list' | 'children' | 'hostsOf' | 'transition' | 'listHeld'>;
  runApprovals: Pick<RunApprovalRepo, 'forRuns'>;
  /** approval policies: whether a submission is held */
  holder: RunHolder;
  decisions: Pick<RunDecisions, 'decide' | 'rightsOf'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator'>;
  access: Pick<RunAccess, 'visibleRun' | 'visibility' | 'requireActOn'>;
  clock: Clock;
  projects: Pick<ProjectService, 'playbookSource'>;
  preparer: RunPreparer;
  inventories: Pick<InventoryService, 'requireUsable'>;
  credentials: Pick<CredentialService, 'requireUsable'>;
  inventoryTool: InventoryTool;
  queue: { enqueue(job: { runId: string; labels?: string[] }): Promise<void>; cancel(runId: string): Promise<boolean> };
  /** told when a committed run could not be enqueued (the recovery sweep enqueues it later) */
  onEnqueueError?: (runId: string, err: unknown) => void;
  finish: RunIngester['finish'];
  /** moves a pipeline on after a cancel (skips its waiting steps; concludes it when nothing runs) */
  advance: RunIngester['advance'];
  /** retry of a finished pipeline: the pipeline service's */
  retryPipeline: (p: Principal, pipeline: RunRow) => Promise<Run>;
}

export interface CancelResult {
  run: Run;
  /** true: a running run was asked to stop and finishes when its executor has stopped ansible (202) */
  accepted: boolean;
}

const CANCELED = { conclusion: 'canceled', reason: 'canceled' } as const satisfies {
  conclusion: RunConclusion;
  reason: string;
};
const UNFINISHED: readonly RunStatus[] = ['pending', 'held', 'waiting', 'running'];
const RETRYABLE: readonly (string | null)[] = ['failed', 'error'];
/** How many held runs `awaiting=me` looks through (held runs are few: they wait for people). */
const MAX_HELD_SCANNED = 5_000;
/** The labels a run asks of its worker, as the queue wants them (none: any worker). */
const labelsOf = (row: RunRow): { labels?: string[] } => (row.labels.length > 0 ? { labels: row.labels } : {});

export function createRunService(deps: RunServiceDeps) {
  const rowOf = async (id: string): Promise<RunRow> => {
    const row = await deps.runs.findById(id);
    if (!row) throw notFound('run', id);
    return row;
  };

  /**
   * Evaluates the approval policies (held: the whole unit waits), then inserts the rows (a parent before its children)
   * and the audit entry in one transaction, then enqueues what can run. Returns the parent as stored.
   */
  async function store(
    p: Principal,
    given: RunRow[],
    hosts: () => Promise<string[]>,
    action: string,
    summary: string,
  ): Promise<RunRow> {
    const hold = await deps.holder.holdFor(p, [{ row: given[0]!, hosts }], deps.clock());
    const rows = hold ? heldRows(given, hold) : given;
    if (hold) summary += holdWords(hold, given[0]!.origin);
    await deps.transaction(async (r) => {
      for (const row of rows) await r.runs.insert(row);
      await recordAudit(r.audit, { actor: p.id, action, object: rows[0]!.id, summary }, deps.clock);
    });
    // A crash before these enqueues is repaired by the recovery sweep (pending in the database, absent from the queue).
    // An enqueue that fails (a queue closing at shutdown, Redis away) is repaired the same way: the run is committed,
    // so answer 201. After one failure the rest are left to the sweep too, so 500 shards do not wait 500 timeouts.
    for (const row of rows) {
      if (!isDispatchable(row) || row.status !== 'pending') continue;
      const failed = await deps.queue.enqueue({ runId: row.id, ...labelsOf(row) }).then(
        () => false,
        (err: unknown) => (deps.onEnqueueError?.(row.id, err), true),
      );
      if (failed) break;
    }
    return rows[0]!;
  }

  /** Views of `rows` with their decisions. */
  async function views(rows: RunRow[], opts: { withHostStats?: boolean } = {}): Promise<Run[]> {
    const approvals = await deps.runApprovals.forRuns(rows.filter((r) => r.held_by !== null).map((r) => r.id));
    return rows.map((r) => toRunView(r, { ...opts, approvals }));
  }

  /** Held runs `p` may decide on and has not decided on, newest first, one page (filters applied in memory). */
  async function awaiting(p: Principal, query: RunListQuery): Promise<Page<Run>> {
    if (query.status !== undefined && query.status !== 'held') {
      const message = 'awaiting=me lists held runs only: leave status out or give status=held';
      throw new ValidationError(message, [{ path: 'query.awaiting', message }]);
    }
    const before = decodeCursor(query.cursor);
    const since = query.since === undefined ? undefined : iso(new Date(query.since));
    // A held run has no conclusion and no per-host outcome yet: filtering by either finds none.
    if (query.conclusion !== undefined || query.host !== undefined) return { items: [] };
    const held = (await deps.runs.listHeld({ limit: MAX_HELD_SCANNED })).filter(
      (r) =>
        (before === undefined || r.id < before) &&
        r.submitted_by !== p.id &&
        (query.project === undefined || r.project_id === query.project) &&
        (query.template === undefined || r.template_id === query.template) &&
        (query.schedule === undefined || r.schedule_id === query.schedule) &&
        (query.trigger === undefined || r.trigger_id === query.trigger) &&
        (query.origin === undefined || r.origin === query.origin) &&
        (query.kind === undefined || r.kind === query.kind) &&
        (query.inventory === undefined || r.inventory_id === query.inventory) &&
        (since === undefined || r.created_at >= since),
    );
    const decided = new Set(
      (await deps.runApprovals.forRuns(held.map((r) => r.id))).filter((a) => a.user_id === p.id).map((a) => a.run_id),
    );
    const mine: RunRow[] = [];
    for (const run of held) {
      if (mine.length > query.limit) break;
      if (!decided.has(run.id) && (await deps.decisions.rightsOf(p, run)).mayDecide) mine.push(run);
    }
    const page = toPage(mine, query.limit, (r) => r.id);
    return { items: await views(page.items), next: page.next };
  }

  /**
   * Cancels one run that is not a split. Pending or held: finished at once. Running: marked, and its executor
   * told to stop ('stopping'), or finished at once when no executor holds it. A run that moved meanwhile is
   * handled by its new state.
   */
  async function cancelOne(run: RunRow): Promise<'finished' | 'stopping'> {
    let current = run;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (current.status === 'finished') return 'finished';
      if (current.status === 'running') {
        if (await deps.runs.transition(current.id, ['running'], { cancel_requested_at: iso(deps.clock()) })) {
          if (await deps.queue.cancel(current.id)) return 'stopping';
          if (await deps.finish(current.id, CANCELED, ['running'])) return 'finished';
        }
      } else {
        await deps.queue.cancel(current.id);
        if (await deps.finish(current.id, CANCELED, ['pending', 'held', 'waiting'])) return 'finished';
      }
      current = await rowOf(current.id);
    }
    return current.status === 'finished' ? 'finished' : 'stopping';
  }

  /** Cancels a split's (or split step's) unfinished shards, marking it first so it concludes `canceled`. */
  async function cancelShards(id: string): Promise<Array<'finished' | 'stopping'>> {
    await deps.runs.transition(id, UNFINISHED, { cancel_requested_at: iso(deps.clock()) });
    const shards = (await deps.runs.children(id)).filter((s) => s.status !== 'finished');
    const outcomes: Array<'finished' | 'stopping'> = [];
    for (const shard of shards) outcomes.push(await cancelOne(shard));
    return outcomes;
  }

  const recheckInputs = (p: Principal, run: RunRow) => recheckRunInputs(deps, p, run);

  /**
   * An inventory of only `hosts`, built the way shards get theirs: never a `--limit` made of host names, which
   * ansible would read as patterns (`a,b` is two hosts, `@/etc/hostname` reads a file). 409 when a host is no
   * longer in the inventory, 422 when ansible no longer reads the inventory.
   */
  async function inventoryOfOnly(run: RunRow, content: string, hosts: string[]): Promise<string> {
    let list: Record<string, unknown>;
    try {
      list = (await deps.inventoryTool.hosts({ content })).list;
    } catch (err) {
      if (!(err instanceof InventoryParseError)) throw err;
      throw new UnprocessableError(`ansible-inventory no longer reads the inventory of run ${run.id}: ${err.message}`);
    }
    try {
      return deps.inventoryTool.forHosts(list, hosts);
    } catch (err) {
      if (!(err instanceof InventoryParseError)) throw err;
      throw new ConflictError(`run ${run.id} cannot be retried on its failed hosts: ${err.message}`);
    }
  }

  return {
    /**
     * 201 with the run, or with the split when `shards` ≥ 2. THE submission path: every launcher ends here (or in
     * the pipeline service, which prepares each step the same way). With `ctx.validateOnly`, checks and stores nothing.
     */
    async submit(p: Principal, body: SubmitRunBody, ctx: LaunchContext = API_LAUNCH): Promise<Run> {
      deps.authz.requireCreator(p);
      const { base, rows, what, hosts } = await deps.preparer.prepare(p, body, ctx, { at: deps.clock() });
      if (ctx.requireHosts && (await hosts()).length === 0)
        throw new UnprocessableError('the run would target no host', [
          { path: 'body.limit', message: `matches no host of the inventory${body.limit ? ` (${body.limit})` : ''}` },
        ]);
      if (ctx.validateOnly) return toRunView(base);
      const stored = await store(
        p,
        rows,
        hosts,
        'run.submit',
        `submitted ${base.kind} ${base.id}${originWords(ctx)}: ${what.join(', ')}`,
      );
      return toRunView(stored);
    },

    async list(p: Principal, query: RunListQuery): Promise<Page<Run>> {
      if (query.awaiting === 'me') return awaiting(p, query);
      const visible = await deps.access.visibility(p);
      const rows = await deps.runs.list(
        {
          status: query.status,
          conclusion: query.conclusion,
          projectId: query.project,
          templateId: query.template,
          scheduleId: query.schedule,
          triggerId: query.trigger,
          origin: query.origin,
          kind: query.kind,
          inventoryId: query.inventory,
          host: query.host,
          since: query.since === undefined ? undefined : iso(new Date(query.since)),
          includeShards: query.include_shards,
        },
        { limit: query.limit + 1, before: decodeCursor(query.cursor) },
        visible,
      );
      const page = toPage(rows, query.limit, (r) => r.id);
      return { items: await views(page.items), next: page.next };
    },

    /** One run with its per-host counts and its decisions. */
    async get(p: Principal, id: string): Promise<Run> {
      return (await views([await deps.access.visibleRun(p, id)], { withHostStats: true }))[0]!;
    },

    /**
     * Approve or reject a held run (200 with the run): see run-decision.ts. Anyone who may decide may see the run (its
     * holding policies name them), so a run they may not see is the usual 404.
     */
    async decide(p: Principal, id: string, decision: RunDecision, comment: string | undefined): Promise<Run> {
      await deps.decisions.decide(p, await deps.access.visibleRun(p, id), decision, comment);
      return (await views([await rowOf(id)]))[0]!;
    },

    /** The shards of a split (or of a split pipeline step) in shard order; any other run has none. */
    async shards(p: Principal, id: string): Promise<Run[]> {
      const run = await deps.access.visibleRun(p, id);
      if (!hasShards(run)) return [];
      return (await deps.runs.children(id)).map((r) => toRunView(r));
    },

    /** The steps of a pipeline in order; any other run has none. */
    async steps(p: Principal, id: string): Promise<Run[]> {
      const run = await deps.access.visibleRun(p, id);
      if (run.kind !== 'pipeline') return [];
      return (await deps.runs.children(id)).map((r) => toRunView(r));
    },

    async cancel(p: Principal, id: string): Promise<CancelResult> {
      const run = await deps.access.visibleRun(p, id);
      await deps.access.requireActOn(p, run);
      if (run.status === 'finished') throw new ConflictError(`run ${id} is already finished (${run.conclusion})`);
      let accepted: boolean;
      let summary: string;
      if (run.kind === 'pipeline') {
        // Marked first: the advance after this (and after the running step stops) skips every waiting step and then
        // concludes the pipeline `canceled`.
        await deps.runs.transition(id, UNFINISHED, { cancel_requested_at: iso(deps.clock()) });
        const active = (await deps.runs.children(id)).filter((s) => s.status !== 'finished' && s.status !== 'waiting');
        const outcomes: Array<'finished' | 'stopping'> = [];
        for (const step of active)
          outcomes.push(...(hasShards(step) ? await cancelShards(step.id) : [await cancelOne(step)]));
        await deps.advance(id);
        const stopping = outcomes.filter((o) => o === 'stopping').length;
        accepted = stopping > 0;
        summary = `canceled pipeline ${id}: its waiting steps skipped${stopping ? `, ${stopping} run(s) stopping` : ''}`;
      } else if (hasShards(run)) {
        const outcomes = await cancelShards(id);
        const stopping = outcomes.filter((o) => o === 'stopping').length;
        accepted = stopping > 0;
        summary = `canceled split ${id}: ${outcomes.length - stopping} shards finished, ${stopping} stopping`;
      } else {
        accepted = (await cancelOne(run)) === 'stopping';
        summary = accepted ? `asked the executor to stop run ${id}` : `canceled run ${id}`;
      }
      await deps.transaction((r) =>
        recordAudit(r.audit, { actor: p.id, action: 'run.cancel', object: id, summary }, deps.clock),
      );
      return { run: (await views([await rowOf(id)]))[0]!, accepted };
    },

    /**
     * A finished split with failed or errored shards: a new split of only those shards, each with its host set and
     * inventory. A failed ordinary run: the same run again, limited to its failed and unreachable hosts if it has any.
     */
    async retry(p: Principal, id: string): Promise<Run> {
      const run = await deps.access.visibleRun(p, id);
      await deps.access.requireActOn(p, run);
      if (run.status !== 'finished')
        throw new ConflictError(`run ${id} is ${run.status}; only a finished run can be retried`);
      if (run.kind === 'shard')
        throw new ConflictError(`run ${id} is a shard; retry its split ${run.parent_id} instead`);
      if (run.kind === 'step')
        throw new ConflictError(`run ${id} is a pipeline step; retry its pipeline ${run.parent_id} instead`);
      if (run.kind === 'pipeline') return deps.retryPipeline(p, run);
      const failedShards =
        run.kind === 'split' ? (await deps.runs.children(id)).filter((s) => RETRYABLE.includes(s.conclusion)) : [];
      if (run.kind === 'split' ? failedShards.length === 0 : !RETRYABLE.includes(run.conclusion)) {
        throw new ConflictError(`nothing of run ${id} failed (${run.conclusion}); there is nothing to retry`);
      }
      const inventoryContent = await recheckInputs(p, run);

      const now = deps.clock();
      const fresh = freshRunState(p, iso(now));
      const again: RunRow = { ...run, ...fresh, id: newId('run', now.getTime()), retry_of: run.id };
      const rows: RunRow[] = [again];
      let summary: string;
      if (run.kind === 'split') {
        const count = failedShards.length;
        again.shard_count = count;
        again.hosts = failedShards.flatMap((s) => s.hosts ?? []).sort();
        failedShards.forEach((shard, k) => {
          rows.push({
            ...shard,
            ...fresh,
            id: newId('run', now.getTime()),
            parent_id: again.id,
            shard_index: k,
            shard_count: count,
            retry_of: shard.id,
          });
        });
        summary = `retried split ${id} as ${again.id} with its ${count} failed shard${count === 1 ? '' : 's'}: ${failedShards.map((s) => s.id).join(', ')}`;
      } else {
        const failedHosts = (await deps.runs.hostsOf(id))
          .filter((h) => h.outcome === 'failed' || h.outcome === 'unreachable')
          .map((h) => h.host);
        if (failedHosts.length && inventoryContent !== null) {
          again.hosts = failedHosts;
          again.host_limit = null;
          again.inventory_content = await inventoryOfOnly(run, inventoryContent, failedHosts);
          again.inventory_format = 'yaml';
        }
        summary = `retried run ${id} as ${again.id}${failedHosts.length ? ` on its ${failedHosts.length} failed or unreachable hosts` : ''}`;
      }
      const retryHosts = async () =>
        again.hosts ??
        (inventoryContent === null
          ? []
          : (await deps.inventoryTool.hosts({ content: inventoryContent, limit: again.host_limit ?? undefined }))
              .hosts);
      return toRunView(await store(p, rows, retryHosts, 'run.retry', summary));
    },
  };
}
export type RunService = ReturnType<typeof createRunService>;
