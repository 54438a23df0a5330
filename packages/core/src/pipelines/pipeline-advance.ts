// Moving a pipeline on (issue 11, "Pipelines"; ARCHITECTURE.md "A run's path" step 5): after a step finishes, in
// the same transaction, the next step whose run_if holds is made pending (the ones whose run_if does not hold finish
// `canceled`/`skipped`), or, when every step has finished, the pipeline concludes. Where the run engine finishes runs
// (the ingester), so embedded and queue mode advance alike; the recovery sweep calls it too, so a step whose
// predecessor finished while nothing advanced still starts.
import type { RunConclusion, RunEvent } from '@baton/contracts';
import type { RunRow } from '@baton/db';
import { appendStatusEvent } from '../runs/run-ingest.rows.js';
import { hasShards } from '../runs/run-rows.js';
import { lockParent, mergeShardStats, type SplitTx } from '../runs/run-split.js';
import { toRunHostRows } from '../runs/run.view.js';

/** What an advance made ready to run: the caller enqueues them once its transaction has committed. */
export interface ReadySink {
  ready: RunRow[];
}

export const SKIPPED = { conclusion: 'canceled', reason: 'skipped' } as const;
const ACTIVE: readonly string[] = ['pending', 'held', 'running'];
const FAILED: readonly (string | null)[] = ['failed', 'error', 'rejected'];

const ran = (s: RunRow) => s.status === 'finished' && s.reason !== SKIPPED.reason;
/** A step someone canceled (not one skipped): the pipeline stops there, as if it were canceled. */
const canceledByHand = (s: RunRow) =>
  s.status === 'finished' && s.conclusion === 'canceled' && s.reason !== SKIPPED.reason;

/** Whether a step's run_if holds after `earlier` (its predecessors, all finished). */
export function runIfHolds(runIf: string | null, earlier: RunRow[]): boolean {
  const failed = earlier.some((s) => ran(s) && FAILED.includes(s.conclusion));
  if (runIf === 'always') return true;
  if (runIf === 'failure') return failed;
  return !failed;
}

/** Canceled when canceled; failed when any step failed (even if a `failure` step then succeeded); else succeeded. */
export function pipelineConclusion(pipeline: RunRow, steps: RunRow[]): RunConclusion {
  if (pipeline.cancel_requested_at !== null || steps.some(canceledByHand)) return 'canceled';
  if (steps.some((s) => ran(s) && FAILED.includes(s.conclusion))) return 'failed';
  return 'succeeded';
}

async function finishSkipped(r: SplitTx, run: RunRow, at: string): Promise<RunEvent[]> {
  const moved = await r.runs.transition(run.id, ['waiting'], { status: 'finished', ...SKIPPED, finished_at: at });
  return moved ? [await appendStatusEvent(r, run.id, at, { status: 'finished', ...SKIPPED })] : [];
}

/** Skips a waiting step (and the shards of a split step). */
async function skip(r: SplitTx, step: RunRow, at: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  if (hasShards(step))
    for (const shard of await r.runs.children(step.id)) events.push(...(await finishSkipped(r, shard, at)));
  events.push(...(await finishSkipped(r, step, at)));
  return events;
}

/** Makes a waiting step pending; what an executor runs (the step, or its shards) goes to `sink`. */
async function start(r: SplitTx, step: RunRow, sink: ReadySink): Promise<void> {
  if (!(await r.runs.transition(step.id, ['waiting'], { status: 'pending' }))) return;
  if (!hasShards(step)) {
    sink.ready.push({ ...step, status: 'pending' });
    return;
  }
  for (const shard of await r.runs.children(step.id)) {
    if (await r.runs.transition(shard.id, ['waiting'], { status: 'pending' }))
      sink.ready.push({ ...shard, status: 'pending' });
  }
}

/**
 * Moves pipeline `pipelineId` on, in the caller's transaction: nothing while a step is active; else the next waiting
 * step whose run_if holds starts, those before it whose run_if does not hold are skipped; a canceled pipeline (or one
 * with a step canceled by hand) skips every waiting step; once every step has finished, the pipeline concludes with
 * the steps' summed per-host counts. Idempotent. Returns the status events to publish after commit.
 */
export async function advancePipeline(
  r: SplitTx,
  pipelineId: string,
  at: string,
  sink: ReadySink,
): Promise<RunEvent[]> {
  const pipeline = await lockParent(r, pipelineId);
  if (!pipeline || pipeline.kind !== 'pipeline') return [];
  // Held for approval: nothing starts until it is approved (a cancel still skips every step and concludes it).
  if (pipeline.status === 'held' && pipeline.cancel_requested_at === null) return [];
  const steps = await r.runs.children(pipelineId);
  const events: RunEvent[] = [];
  const stopped = pipeline.cancel_requested_at !== null || steps.some(canceledByHand);
  const active = steps.some((s) => ACTIVE.includes(s.status));
  for (const [i, step] of steps.entries()) {
    if (step.status !== 'waiting') continue;
    if (stopped) events.push(...(await skip(r, step, at)));
    else if (active) break;
    else if (runIfHolds(step.run_if, steps.slice(0, i))) {
      await start(r, step, sink);
      return events;
    } else {
      events.push(...(await skip(r, step, at)));
      // Later steps judge by what ran: a skipped step counts for nothing.
      steps[i] = { ...step, status: 'finished', ...SKIPPED };
    }
  }
  const now = await r.runs.children(pipelineId);
  if (now.some((s) => s.status !== 'finished')) return events;
  const conclusion = pipelineConclusion(pipeline, now);
  const stats = mergeShardStats(now);
  const moved = await r.runs.transition(pipelineId, ['pending', 'held', 'running'], {
    status: 'finished',
    conclusion,
    reason: null,
    exit_code: null,
    stats,
    finished_at: at,
  });
  if (!moved) return events;
  await r.runs.replaceHosts(pipelineId, toRunHostRows(pipelineId, stats));
  events.push(await appendStatusEvent(r, pipelineId, at, { status: 'finished', conclusion }));
  return events;
}
