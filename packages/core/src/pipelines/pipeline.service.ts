// Pipelines (issue 11): ordered steps submitted as one run of kind `pipeline`. Every step is checked at submit, the
// way POST /v1/runs checks a run (run-prepare.ts), before any step runs; the steps then run one after another as
// pipeline-advance.ts moves the pipeline on.
import type { Run, SubmitPipelineBody, SubmitRunBody } from '@baton/contracts';
import type { AuditRepo, RunRepo, RunRow } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { API_LAUNCH, ENCRYPTED_PLACEHOLDER, type LaunchContext } from '../runs/run-launch.js';
import { originWords, type PreparedRun, type RunPreparer } from '../runs/run-prepare.js';
import { type RecheckDeps, recheckRunInputs } from '../runs/run-recheck.js';
import { heldRows, holdWords, type HoldUnit, type RunHolder } from '../runs/run-hold.js';
import { freshRunState, hasShards } from '../runs/run-rows.js';
import { toRunView } from '../runs/run.view.js';

/** What a pipeline's `playbook` field shows when it has no name. */
export const PIPELINE_LABEL = '(pipeline)';

type TxRepos = { runs: Pick<RunRepo, 'insert'>; audit: Pick<AuditRepo, 'append'> };

export interface PipelineServiceDeps {
  runs: Pick<RunRepo, 'children' | 'findById'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator'>;
  clock: Clock;
  preparer: Pick<RunPreparer, 'prepare'>;
  recheck: RecheckDeps;
  /** approval policies: whether a pipeline is held (as one unit, its steps waiting with it) */
  holder: RunHolder;
  /** a step's target hosts, for policies with host globs (retry: from its recorded inventory) */
  inventoryTool: { hosts(opts: { content: string; limit?: string | undefined }): Promise<{ hosts: string[] }> };
  /** the ingester's advance: makes the first step pending (or skips it) after the rows are committed */
  advance: (pipelineId: string) => Promise<void>;
  /** told when a committed pipeline could not be advanced (the recovery sweep advances it later) */
  onAdvanceError?: (pipelineId: string, err: unknown) => void;
}

const FAILED: readonly (string | null)[] = ['failed', 'error'];

/** A step's run spec: its own fields, the pipeline's inventory, credentials and labels unless it sets them, vars merged. */
function stepSpec(body: SubmitPipelineBody, step: SubmitPipelineBody['steps'][number]): SubmitRunBody {
  const { name: _name, run_if: _runIf, ...spec } = step;
  const ownInventory = spec.inventory_id !== undefined || spec.inventory !== undefined;
  const merged: SubmitRunBody = { ...spec };
  if (!ownInventory) {
    if (body.inventory_id !== undefined) merged.inventory_id = body.inventory_id;
    if (body.inventory !== undefined) merged.inventory = body.inventory;
  }
  if (body.extra_vars !== undefined || spec.extra_vars !== undefined)
    merged.extra_vars = { ...body.extra_vars, ...spec.extra_vars };
  const credentials = spec.credential_ids ?? body.credential_ids;
  if (credentials !== undefined) merged.credential_ids = credentials;
  const labels = spec.labels ?? body.labels;
  if (labels !== undefined) merged.labels = labels;
  return merged;
}

export function createPipelineService(deps: PipelineServiceDeps) {
  /**
   * Evaluates the approval policies over every step (any match holds the whole pipeline), inserts the rows (pipeline,
   * steps, shards) and the audit entry in one transaction, then starts the first step unless held.
   */
  async function store(
    p: Principal,
    given: RunRow[],
    units: HoldUnit[],
    action: string,
    summary: string,
  ): Promise<void> {
    const hold = await deps.holder.holdFor(p, units, deps.clock());
    const rows = hold ? heldRows(given, hold) : given;
    if (hold) summary += holdWords(hold, given[0]!.origin);
    await deps.transaction(async (r) => {
      for (const row of rows) await r.runs.insert(row);
      await recordAudit(r.audit, { actor: p.id, action, object: rows[0]!.id, summary }, deps.clock);
    });
    // A crash or failure here leaves every step waiting: the recovery sweep advances the pipeline later.
    await deps.advance(rows[0]!.id).catch((err: unknown) => deps.onAdvanceError?.(rows[0]!.id, err));
  }

  /** A prepared step's rows as steps of `pipelineId`: all waiting until the pipeline reaches them. */
  function asStep(prepared: PreparedRun, pipelineId: string, index: number, name: string | null, runIf: string) {
    const [step, ...shards] = prepared.rows;
    return [
      {
        ...step!,
        kind: 'step',
        parent_id: pipelineId,
        step_index: index,
        step_name: name,
        run_if: runIf,
        status: 'waiting',
      },
      ...shards.map((s) => ({ ...s, status: 'waiting' })),
    ];
  }

  return {
    /**
     * 201 with the pipeline run. Every step is prepared (objects exist and are usable, playbooks exist at the commit
     * resolved now) before anything is stored; a bad step answers at `body.steps.<i>.…`.
     */
    async submit(p: Principal, body: SubmitPipelineBody, ctx: LaunchContext = API_LAUNCH): Promise<Run> {
      deps.authz.requireCreator(p);
      if (body.inventory_id !== undefined && body.inventory !== undefined) {
        const message = 'give at most one of inventory_id and inventory (inline content)';
        throw new ValidationError(message, [{ path: 'body.inventory_id', message }]);
      }
      const now = deps.clock();
      const prepared: PreparedRun[] = [];
      for (const [i, step] of body.steps.entries())
        prepared.push(await deps.preparer.prepare(p, stepSpec(body, step), ctx, { at: now, field: `body.steps.${i}` }));

      const secretNames = Object.keys(ctx.secretVars ?? {});
      const pipeline: RunRow = {
        ...prepared[0]!.base,
        id: newId('run', now.getTime()),
        kind: 'pipeline',
        shard_count: null,
        playbook_source: 'pipeline',
        playbook: body.name ?? PIPELINE_LABEL,
        project_id: null,
        git_commit: null,
        git_ref: null,
        secret_vars_enc: null,
        inventory_id: body.inventory_id ?? null,
        inventory_content: body.inventory ?? null,
        inventory_format: null,
        host_limit: null,
        hosts: null,
        extra_vars:
          body.extra_vars === undefined && secretNames.length === 0
            ? null
            : { ...body.extra_vars, ...Object.fromEntries(secretNames.map((k) => [k, ENCRYPTED_PLACEHOLDER])) },
        credential_ids: body.credential_ids ?? [],
        check_mode: 0,
        forks: null,
        verbosity: null,
        timeout_s: null,
        labels: [...new Set(body.labels ?? [])].sort(),
        ...freshRunState(p, iso(now)),
      };
      if (ctx.validateOnly) return toRunView(pipeline);
      const rows: RunRow[] = [
        pipeline,
        ...prepared.flatMap((prep, i) =>
          asStep(prep, pipeline.id, i, body.steps[i]!.name ?? null, body.steps[i]!.run_if ?? 'success'),
        ),
      ];
      const steps = prepared.map(
        (prep, i) =>
          `${i + 1}. ${body.steps[i]!.name ? `${body.steps[i]!.name} ` : ''}(${prep.base.id}, run_if ${body.steps[i]!.run_if ?? 'success'}): ${prep.what.join(', ')}`,
      );
      await store(
        p,
        rows,
        prepared.map((prep) => ({ row: prep.base, hosts: prep.hosts })),
        'pipeline.submit',
        `submitted pipeline ${pipeline.id}${body.name ? ` ${body.name}` : ''}${originWords(ctx)} of ${steps.length} step${steps.length === 1 ? '' : 's'}: ${steps.join('; ')}`,
      );
      return toRunView((await deps.runs.findById(pipeline.id)) ?? pipeline);
    },

    /**
     * Retry of a finished pipeline: a new pipeline of its steps from the first failed one on, each run again as it
     * was submitted (same commit), with `retry_of` pointing back. The caller still needs use on what they use.
     */
    async retry(p: Principal, run: RunRow): Promise<Run> {
      const steps = await deps.runs.children(run.id);
      const first = steps.findIndex((s) => FAILED.includes(s.conclusion));
      if (first < 0)
        throw new ConflictError(`no step of pipeline ${run.id} failed (${run.conclusion}); there is nothing to retry`);
      const again = steps.slice(first);
      const units: HoldUnit[] = [];
      for (const step of again) {
        const parts = hasShards(step) ? await deps.runs.children(step.id) : [step];
        const contents: Array<{ content: string | null; row: RunRow }> = [];
        for (const unit of parts) contents.push({ content: await recheckRunInputs(deps.recheck, p, unit), row: unit });
        units.push({
          row: step,
          hosts: async () => {
            const all: string[] = [];
            for (const { content, row } of contents)
              all.push(
                ...(row.hosts ??
                  (content === null
                    ? []
                    : (await deps.inventoryTool.hosts({ content, limit: row.host_limit ?? undefined })).hosts)),
              );
            return all;
          },
        });
      }
      const now = deps.clock();
      const fresh = freshRunState(p, iso(now));
      const pipeline: RunRow = { ...run, ...fresh, id: newId('run', now.getTime()), retry_of: run.id };
      const rows: RunRow[] = [pipeline];
      for (const [k, step] of again.entries()) {
        const copy: RunRow = {
          ...step,
          ...fresh,
          status: 'waiting',
          id: newId('run', now.getTime()),
          parent_id: pipeline.id,
          step_index: k,
          retry_of: step.id,
        };
        rows.push(copy);
        if (hasShards(step))
          for (const shard of await deps.runs.children(step.id))
            rows.push({
              ...shard,
              ...fresh,
              status: 'waiting',
              id: newId('run', now.getTime()),
              parent_id: copy.id,
              retry_of: shard.id,
            });
      }
      await store(
        p,
        rows,
        units,
        'run.retry',
        `retried pipeline ${run.id} as ${pipeline.id} from its first failed step ${steps[first]!.id} (step ${first + 1} of ${steps.length})`,
      );
      return toRunView((await deps.runs.findById(pipeline.id)) ?? pipeline);
    },
  };
}
export type PipelineService = ReturnType<typeof createPipelineService>;
