// Submitting and acting on runs (issue 4, "Submitting", "Cancel and retry"; ARCHITECTURE.md "A run's path" step 1):
// checks, one transaction for the run (or split and shards) and its audit entry, then the queue.
import {
  GitError,
  HostPatternError,
  type InventoryFormat,
  InventoryParseError,
  type Run,
  type RunConclusion,
  type RunListQuery,
  type RunStatus,
  type SubmitRunBody,
} from '@baton/contracts';
import type { AuditRepo, RunRepo, RunRow } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, notFound, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';
import type { CredentialService } from '../credentials/credential.service.js';
import type { InventoryService } from '../inventories/inventory.service.js';
import type { ProjectService } from '../projects/project.service.js';
import type { RunAccess } from './run-access.js';
import type { RunIngester } from './run-ingest.js';
import {
  checkHostLimit,
  checkNoDuplicateCredentials,
  freshRunState,
  projectPlaybookPath,
  RUN_CREDENTIAL_TYPES,
  shardHosts,
} from './run-rows.js';
import { toRunView } from './run.view.js';

type GitTarget = Awaited<ReturnType<ProjectService['playbookSource']>>;

/** The executor's resolvePlaybookAtBranch, injected: core never imports the executor. Fails with a GitError. */
export type PlaybookResolver = (
  opts: GitTarget & { path: string },
) => Promise<{ commit: string; entry: 'file' | 'symlink' | 'directory' | 'missing' }>;

/** The executor's inventory functions, injected. Failures are InventoryParseError or HostPatternError (declared in contracts). */
export interface InventoryTool {
  parse(content: string): Promise<{ format: InventoryFormat }>;
  hosts(opts: {
    content: string;
    limit?: string | undefined;
  }): Promise<{ hosts: string[]; list: Record<string, unknown> }>;
  forHosts(list: Record<string, unknown>, hosts: string[]): string;
}

type TxRepos = { runs: Pick<RunRepo, 'insert'>; audit: Pick<AuditRepo, 'append'> };

export interface RunServiceDeps {
  runs: Pick<RunRepo, 'findById' | 'list' | 'children' | 'hostsOf' | 'transition'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator'>;
  access: Pick<RunAccess, 'visibleRun' | 'visibility' | 'requireActOn'>;
  clock: Clock;
  projects: Pick<ProjectService, 'playbookSource'>;
  resolvePlaybook: PlaybookResolver;
  inventories: Pick<InventoryService, 'requireUsable'>;
  credentials: Pick<CredentialService, 'requireUsable'>;
  inventoryTool: InventoryTool;
  queue: { enqueue(job: { runId: string; labels?: string[] }): Promise<void>; cancel(runId: string): Promise<boolean> };
  /** told when a committed run could not be enqueued (the recovery sweep enqueues it later) */
  onEnqueueError?: (runId: string, err: unknown) => void;
  finish: RunIngester['finish'];
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
const UNFINISHED: readonly RunStatus[] = ['pending', 'held', 'running'];
const RETRYABLE: readonly (string | null)[] = ['failed', 'error'];
/** The labels a run asks of its worker, as the queue wants them (none: any worker). */
const labelsOf = (row: RunRow): { labels?: string[] } => (row.labels.length > 0 ? { labels: row.labels } : {});

export function createRunService(deps: RunServiceDeps) {
  const rowOf = async (id: string): Promise<RunRow> => {
    const row = await deps.runs.findById(id);
    if (!row) throw notFound('run', id);
    return row;
  };

  /** The branch head and the playbook in it; git's refusal is a 422 with git's (scrubbed) reason. */
  async function resolveProjectPlaybook(projectId: string, source: GitTarget, path: string): Promise<string> {
    let found: Awaited<ReturnType<PlaybookResolver>>;
    try {
      found = await deps.resolvePlaybook({ ...source, path });
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      throw new UnprocessableError(
        `git could not fetch branch ${source.branch} of project ${projectId}: ${err.reason}`,
        [{ path: 'body.project_id', message: err.reason }],
      );
    }
    if (found.entry === 'missing' || found.entry === 'directory') {
      const message =
        found.entry === 'missing'
          ? `${path} does not exist in project ${projectId} at commit ${found.commit}`
          : `${path} is a directory in project ${projectId} at commit ${found.commit}, not a playbook`;
      throw new UnprocessableError(message, [{ path: 'body.playbook', message }]);
    }
    return found.commit;
  }

  async function parseInline(content: string): Promise<InventoryFormat> {
    try {
      return (await deps.inventoryTool.parse(content)).format;
    } catch (err) {
      if (!(err instanceof InventoryParseError)) throw err;
      throw new ValidationError(err.message, [{ path: 'body.inventory', message: err.message }]);
    }
  }

  async function targetHosts(
    content: string,
    limit: string | undefined,
    inline: boolean,
  ): Promise<{ hosts: string[]; list: Record<string, unknown> }> {
    try {
      return await deps.inventoryTool.hosts({ content, limit });
    } catch (err) {
      if (err instanceof HostPatternError)
        throw new ValidationError(err.message, [{ path: 'body.limit', message: err.message }]);
      if (!(err instanceof InventoryParseError)) throw err;
      if (inline) throw new ValidationError(err.message, [{ path: 'body.inventory', message: err.message }]);
      throw new UnprocessableError(`ansible-inventory no longer reads the stored inventory: ${err.message}`, [
        { path: 'body.inventory_id', message: err.message },
      ]);
    }
  }

  /** Inserts the rows (a split before its shards) and the audit entry in one transaction, then enqueues what can run. */
  async function store(p: Principal, rows: RunRow[], action: string, summary: string): Promise<void> {
    await deps.transaction(async (r) => {
      for (const row of rows) await r.runs.insert(row);
      await recordAudit(r.audit, { actor: p.id, action, object: rows[0]!.id, summary }, deps.clock);
    });
    // A crash before these enqueues is repaired by the recovery sweep (pending in the database, absent from the queue).
    // An enqueue that fails (a queue closing at shutdown, Redis away) is repaired the same way: the run is committed,
    // so answer 201. After one failure the rest are left to the sweep too, so 500 shards do not wait 500 timeouts.
    for (const row of rows) {
      if (row.kind === 'split' || row.status !== 'pending') continue;
      const failed = await deps.queue.enqueue({ runId: row.id, ...labelsOf(row) }).then(
        () => false,
        (err: unknown) => (deps.onEnqueueError?.(row.id, err), true),
      );
      if (failed) break;
    }
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
        if (await deps.finish(current.id, CANCELED, ['pending', 'held'])) return 'finished';
      }
      current = await rowOf(current.id);
    }
    return current.status === 'finished' ? 'finished' : 'stopping';
  }

  /**
   * Retry re-checks what submitting checks: the caller still has use on the project, inventory and credentials, and
   * they exist. Answers the inventory's content as the retry would run with it (a stored inventory as it is now).
   */
  async function recheckInputs(p: Principal, run: RunRow): Promise<string | null> {
    const gone = (what: string) => (err: unknown) => {
      if (err instanceof NotFoundError)
        throw new ConflictError(`run ${run.id} uses ${what}, which no longer exists or is not visible to you`);
      throw err;
    };
    if (run.project_id) await deps.projects.playbookSource(p, run.project_id).catch(gone(`project ${run.project_id}`));
    const inventory = run.inventory_id
      ? await deps.inventories.requireUsable(p, run.inventory_id).catch(gone(`inventory ${run.inventory_id}`))
      : undefined;
    for (const [i, id] of run.credential_ids.entries()) {
      await deps.credentials
        .requireUsable(p, id, `credential_ids.${i}`, RUN_CREDENTIAL_TYPES)
        .catch(gone(`credential ${id}`));
    }
    return run.inventory_content ?? inventory?.content ?? null;
  }

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
    /** 201 with the run, or with the split when `shards` ≥ 2. */
    async submit(p: Principal, body: SubmitRunBody): Promise<Run> {
      deps.authz.requireCreator(p);
      if ((body.inventory_id === undefined) === (body.inventory === undefined)) {
        const message = 'give exactly one of inventory_id and inventory (inline content)';
        throw new ValidationError(message, [{ path: 'body.inventory_id', message }]);
      }
      const credentialIds = body.credential_ids ?? [];
      checkNoDuplicateCredentials(credentialIds);
      checkHostLimit(body.limit);
      const playbookPath = body.project_id === undefined ? undefined : projectPlaybookPath(body.playbook);

      // Access first (404/403 before any slow work), then git and ansible.
      const source = body.project_id === undefined ? undefined : await deps.projects.playbookSource(p, body.project_id);
      const inventory =
        body.inventory_id === undefined ? undefined : await deps.inventories.requireUsable(p, body.inventory_id);
      for (const [i, id] of credentialIds.entries())
        await deps.credentials.requireUsable(p, id, `body.credential_ids.${i}`, RUN_CREDENTIAL_TYPES);
      const commit =
        source && playbookPath !== undefined
          ? await resolveProjectPlaybook(body.project_id!, source, playbookPath)
          : null;
      const inlineFormat = body.inventory === undefined ? null : await parseInline(body.inventory);

      const shardCount = body.shards !== undefined && body.shards >= 2 ? body.shards : 1;
      const content = inventory?.content ?? body.inventory!;
      const targets = shardCount > 1 ? await targetHosts(content, body.limit, inventory === undefined) : undefined;
      if (targets && shardCount > targets.hosts.length) {
        const message = `${shardCount} shards need at least ${shardCount} hosts, but ${targets.hosts.length} host${targets.hosts.length === 1 ? '' : 's'} match${body.limit ? ` the limit ${body.limit}` : ''}`;
        throw new ValidationError(message, [{ path: 'body.shards', message }]);
      }

      const now = deps.clock();
      const at = iso(now);
      const base: RunRow = {
        id: newId('run', now.getTime()),
        kind: 'run',
        parent_id: null,
        shard_index: null,
        shard_count: null,
        retry_of: null,
        playbook_source: source ? 'project' : 'inline',
        playbook: playbookPath ?? body.playbook,
        project_id: body.project_id ?? null,
        git_commit: commit,
        template_id: null,
        inventory_id: body.inventory_id ?? null,
        inventory_content: body.inventory ?? null,
        inventory_format: inlineFormat,
        host_limit: body.limit ?? null,
        hosts: null,
        extra_vars: body.extra_vars ?? null,
        credential_ids: credentialIds,
        check_mode: body.check ? 1 : 0,
        forks: body.forks ?? null,
        verbosity: body.verbosity ?? null,
        timeout_s: body.timeout_s ?? null,
        labels: [...new Set(body.labels ?? [])].sort(),
        ...freshRunState(p, at),
      };
      const rows: RunRow[] = [base];
      if (targets) {
        base.kind = 'split';
        base.shard_count = shardCount;
        shardHosts(targets.hosts, shardCount).forEach((hosts, k) => {
          rows.push({
            ...base,
            id: newId('run', now.getTime()),
            kind: 'shard',
            parent_id: base.id,
            shard_index: k,
            shard_count: shardCount,
            hosts,
            inventory_content: deps.inventoryTool.forHosts(targets.list, hosts),
            inventory_format: 'yaml',
          });
        });
      }

      const what = [
        source ? `playbook ${base.playbook} of project ${body.project_id} at ${commit}` : 'an inline playbook',
        body.inventory_id ? `inventory ${body.inventory_id}` : 'an inline inventory',
        ...(body.limit ? [`limit ${body.limit}`] : []),
        ...(credentialIds.length ? [`credentials ${credentialIds.join(', ')}`] : []),
        ...(body.extra_vars ? [`${Object.keys(body.extra_vars).length} extra vars`] : []),
        ...(body.check ? ['check mode'] : []),
        ...(targets ? [`${shardCount} shards`] : []),
        ...(body.labels?.length ? [`worker labels ${[...new Set(body.labels)].sort().join(', ')}`] : []),
      ];
      await store(p, rows, 'run.submit', `submitted ${base.kind} ${base.id}: ${what.join(', ')}`);
      return toRunView(base);
    },

    async list(p: Principal, query: RunListQuery): Promise<Page<Run>> {
      const visible = await deps.access.visibility(p);
      const rows = await deps.runs.list(
        {
          status: query.status,
          conclusion: query.conclusion,
          projectId: query.project,
          templateId: query.template,
          inventoryId: query.inventory,
          host: query.host,
          since: query.since === undefined ? undefined : iso(new Date(query.since)),
          includeShards: query.include_shards,
        },
        { limit: query.limit + 1, before: decodeCursor(query.cursor) },
        visible,
      );
      const page = toPage(rows, query.limit, (r) => r.id);
      return { items: page.items.map((r) => toRunView(r)), next: page.next };
    },

    /** One run with its per-host counts. */
    async get(p: Principal, id: string): Promise<Run> {
      return toRunView(await deps.access.visibleRun(p, id), { withHostStats: true });
    },

    /** The shards of a split in shard order; any other run has none. */
    async shards(p: Principal, id: string): Promise<Run[]> {
      const run = await deps.access.visibleRun(p, id);
      if (run.kind !== 'split') return [];
      return (await deps.runs.children(id)).map((r) => toRunView(r));
    },

    /** Step runs of a pipeline: pipelines do not exist yet. */
    async steps(p: Principal, id: string): Promise<Run[]> {
      await deps.access.visibleRun(p, id);
      return [];
    },

    async cancel(p: Principal, id: string): Promise<CancelResult> {
      const run = await deps.access.visibleRun(p, id);
      await deps.access.requireActOn(p, run);
      if (run.status === 'finished') throw new ConflictError(`run ${id} is already finished (${run.conclusion})`);
      let accepted: boolean;
      let summary: string;
      if (run.kind === 'split') {
        // Marked first: when its last shard finishes, the split then concludes `canceled`.
        await deps.runs.transition(id, UNFINISHED, { cancel_requested_at: iso(deps.clock()) });
        const shards = (await deps.runs.children(id)).filter((s) => s.status !== 'finished');
        const outcomes: Array<'finished' | 'stopping'> = [];
        for (const shard of shards) outcomes.push(await cancelOne(shard));
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
      return { run: toRunView(await rowOf(id)), accepted };
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
      await store(p, rows, 'run.retry', summary);
      return toRunView(again);
    },
  };
}
export type RunService = ReturnType<typeof createRunService>;
