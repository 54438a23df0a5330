// Finishing a run that has a parent: a shard aggregates into its split (or split pipeline step), a step moves its
// pipeline on, and a split step that has just finished moves its pipeline on in turn. Always in the caller's
// transaction, locks taken child first, then parent, then grandparent: the order every ingest transaction uses.
import type { RunEvent } from '@baton/contracts';
import { advancePipeline, type ReadySink } from '../pipelines/pipeline-advance.js';
import { aggregateParentFinish, type SplitTx } from './run-split.js';

export async function finishUnderParent(
  r: SplitTx,
  parentId: string,
  finishChild: () => Promise<boolean>,
  at: string,
  sink: ReadySink,
): Promise<RunEvent[]> {
  const parent = await r.runs.findById(parentId);
  if (parent?.kind === 'pipeline') {
    if (!(await finishChild())) return [];
    return advancePipeline(r, parentId, at, sink);
  }
  const events = await aggregateParentFinish(r, parentId, finishChild, at);
  const finished = events.some((e) => e.run_id === parentId && e.data.status === 'finished');
  if (finished && parent?.parent_id) events.push(...(await advancePipeline(r, parent.parent_id, at, sink)));
  return events;
}
