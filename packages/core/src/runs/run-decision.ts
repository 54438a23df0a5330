// Deciding on held runs (issue 12): approve, reject, and the expiry of a hold. Each decision is recorded on the run
// (run_approvals), audited and emitted as a `status` event on its stream, in one transaction; a run whose every
// holding policy has its approvals moves held → pending (a pipeline starts its first step) and is enqueued after
// commit. A crash before the enqueue is repaired by the recovery sweep (pending in the database, absent from the queue).
import type { RunConclusion, RunDecision, RunEvent } from '@baton/contracts';
import {
  type AuditRepo,
  type HeldPolicy,
  DuplicateKeyError,
  type RunApprovalRepo,
  type RunApprovalRow,
  type RunRow,
  type TeamRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ForbiddenError } from '../common/errors.js';
import { advancePipeline, type ReadySink } from '../pipelines/pipeline-advance.js';
import { appendStatusEvent } from './run-ingest.rows.js';
import { decisionRights } from './run-hold.js';
import { hasShards } from './run-rows.js';
import type { SplitTx } from './run-split.js';
import { approvalsFor } from './run.view.js';

export type DecisionTx = SplitTx & {
  runApprovals: Pick<RunApprovalRepo, 'insert' | 'forRuns'>;
  audit: Pick<AuditRepo, 'append'>;
};

export interface RunDecisionDeps {
  transaction: <T>(fn: (r: DecisionTx) => Promise<T>) => Promise<T>;
  runs: { listHoldExpired(now: string): Promise<RunRow[]> };
  teams: Pick<TeamRepo, 'teamIdsOf'>;
  /** the EventBus's publish: after commit */
  publish: (event: RunEvent) => Promise<void>;
  /** the RunQueue's enqueue: after commit; a failure is left to the recovery sweep */
  enqueue: (job: { runId: string; labels?: string[] }) => Promise<void>;
  onError: (err: unknown) => void;
  clock: Clock;
}

/** What a held run needs: every holding policy its min_approvals; held for its origin alone, one admin's approval. */
export function approvalsComplete(policies: readonly HeldPolicy[], approvals: readonly RunApprovalRow[]): boolean {
  if (policies.length === 0) return approvals.some((a) => a.decision === 'approve');
  return policies.every((pol) => approvalsFor(pol.id, approvals) >= pol.min_approvals);
}

/** Finishes a held unit (its shards, its steps and their shards first) with `outcome`; the parent's event carries `data`. */
async function concludeHeld(
  r: DecisionTx,
  run: RunRow,
  outcome: { conclusion: RunConclusion; reason: string },
  at: string,
  data: Record<string, unknown>,
): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  const finish = async (row: RunRow, extra: Record<string, unknown> = {}) => {
    const moved = await r.runs.transition(row.id, ['held', 'waiting'], {
      status: 'finished',
      ...outcome,
      finished_at: at,
    });
    if (moved) events.push(await appendStatusEvent(r, row.id, at, { status: 'finished', ...outcome, ...extra }));
  };
  for (const child of await r.runs.children(run.id)) {
    if (hasShards(child)) for (const shard of await r.runs.children(child.id)) await finish(shard);
    await finish(child);
  }
  await finish(run, data);
  return events;
}

/** Moves a held unit to pending: what an executor runs goes to `sink` (a pipeline starts its first step). */
async function releaseHeld(
  r: DecisionTx,
  run: RunRow,
  at: string,
  sink: ReadySink,
  data: Record<string, unknown>,
): Promise<RunEvent[]> {
  if (!(await r.runs.transition(run.id, ['held'], { status: 'pending' }))) return [];
  const events = [await appendStatusEvent(r, run.id, at, { status: 'pending', ...data })];
  if (run.kind === 'pipeline') events.push(...(await advancePipeline(r, run.id, at, sink)));
  else if (run.kind === 'split') {
    for (const shard of await r.runs.children(run.id))
      if (await r.runs.transition(shard.id, ['held'], { status: 'pending' }))
        sink.ready.push({ ...shard, status: 'pending' });
  } else sink.ready.push({ ...run, status: 'pending' });
  return events;
}

export function createRunDecisions(deps: RunDecisionDeps) {
  async function afterCommit(events: RunEvent[], sink: ReadySink): Promise<void> {
    for (const e of events) await deps.publish(e).catch(deps.onError);
    for (const run of sink.ready) {
      await deps
        .enqueue({ runId: run.id, ...(run.labels.length > 0 ? { labels: run.labels } : {}) })
        .catch((err: unknown) =>
          deps.onError(
            new Error(`run ${run.id} approved but not enqueued (the recovery sweep will): ${(err as Error)?.message}`),
          ),
        );
    }
  }

  /** Whether `p` may decide on `run` and which of its policies an approval of theirs counts toward. */
  async function rightsOf(p: Principal, run: RunRow) {
    const teamIds = p.role === 'admin' ? [] : await deps.teams.teamIdsOf(p.id);
    return decisionRights({ id: p.id, role: p.role, teamIds }, run.hold_policies ?? []);
  }

  return {
    rightsOf,

    /**
     * Records `p`'s decision on held run `run` (already checked visible to `p`). Approve: released once every holding
     * policy has its approvals. Reject: finished `rejected` at once. 409 when not held (or a shard or step), 403 for
     * someone no holding policy names (admins may always decide) and for the submitter's own approval (four eyes).
     */
    async decide(p: Principal, run: RunRow, decision: RunDecision, comment: string | undefined): Promise<void> {
      if (run.kind === 'shard' || run.kind === 'step')
        throw new ConflictError(
          `run ${run.id} is a ${run.kind}; approve or reject its ${run.kind === 'shard' ? 'split' : 'pipeline'} ${run.parent_id}`,
        );
      if (run.status !== 'held')
        throw new ConflictError(
          `run ${run.id} is ${run.status}${run.conclusion ? ` (${run.conclusion})` : ''}, not held for approval`,
        );
      const policies = run.hold_policies ?? [];
      const { mayDecide, countsFor } = await rightsOf(p, run);
      if (!mayDecide)
        throw new ForbiddenError(
          policies.length
            ? `only an approver named by ${policies.map((pol) => `policy ${pol.name}`).join(' or ')}, or an admin, may decide on run ${run.id}`
            : `run ${run.id} is held because of its origin (${run.origin}): only an admin may decide on it`,
        );
      if (decision === 'approve' && run.submitted_by === p.id)
        throw new ForbiddenError(`four eyes: ${p.username} submitted run ${run.id} and cannot approve it`);

      const at = iso(deps.clock());
      const sink: ReadySink = { ready: [] };
      const record = { user_id: p.id, username: p.username, decision, comment: comment ?? null, at };
      const events = await deps.transaction(async (r) => {
        sink.ready.length = 0;
        // The same-value CAS takes the run's row lock: decisions on one run queue up, and a run that moved meanwhile is a 409.
        if (!(await r.runs.transition(run.id, ['held'], { status: 'held' })))
          throw new ConflictError(`run ${run.id} is no longer held for approval`);
        const earlier = await r.runApprovals.forRuns([run.id]);
        if (earlier.some((a) => a.user_id === p.id))
          throw new ConflictError(`${p.username} has already decided on run ${run.id}; one person counts once`);
        const row: RunApprovalRow = { run_id: run.id, ...record, counts_for: decision === 'approve' ? countsFor : [] };
        try {
          await r.runApprovals.insert(row);
        } catch (err) {
          if (err instanceof DuplicateKeyError)
            throw new ConflictError(`${p.username} has already decided on run ${run.id}; one person counts once`);
          throw err;
        }
        const approvals = [...earlier, row];
        const data = { decision: record };
        let out: RunEvent[];
        let summary: string;
        if (decision === 'reject') {
          out = await concludeHeld(r, run, { conclusion: 'rejected', reason: 'rejected' }, at, data);
          summary = `rejected run ${run.id}${comment ? `: ${comment}` : ''}`;
        } else if (approvalsComplete(policies, approvals)) {
          out = await releaseHeld(r, run, at, sink, data);
          summary = `approved run ${run.id} (counts toward ${countsFor.join(', ') || 'its origin hold'}); every holding policy has its approvals: released`;
        } else {
          out = [await appendStatusEvent(r, run.id, at, { status: 'held', ...data })];
          const missing = policies
            .filter((pol) => approvalsFor(pol.id, approvals) < pol.min_approvals)
            .map((pol) => `${pol.name} ${approvalsFor(pol.id, approvals)}/${pol.min_approvals}`);
          summary = `approved run ${run.id} (counts toward ${countsFor.join(', ')}); still waiting for ${missing.join(', ')}`;
        }
        await recordAudit(r.audit, { actor: p.id, action: `run.${decision}`, object: run.id, summary }, deps.clock);
        return out;
      });
      await afterCommit(events, sink);
    },

    /** Finishes `rejected` / `expired` every held run whose hold has expired (the recovery sweep; its leader in queue mode). */
    async expireHolds(): Promise<string[]> {
      const now = deps.clock();
      const expired: string[] = [];
      for (const run of await deps.runs.listHoldExpired(iso(now))) {
        const at = iso(deps.clock());
        const events = await deps.transaction(async (r) => {
          if (!(await r.runs.transition(run.id, ['held'], { status: 'held' }))) return [];
          const out = await concludeHeld(r, run, { conclusion: 'rejected', reason: 'expired' }, at, {});
          await recordAudit(
            r.audit,
            {
              actor: 'system',
              action: 'run.expire',
              object: run.id,
              summary: `run ${run.id} held since ${run.created_at} expired at ${run.hold_expires_at} without the approvals it needed: rejected`,
            },
            deps.clock,
          );
          return out;
        });
        if (events.length) expired.push(run.id);
        await afterCommit(events, { ready: [] });
      }
      return expired;
    },
  };
}
export type RunDecisions = ReturnType<typeof createRunDecisions>;
