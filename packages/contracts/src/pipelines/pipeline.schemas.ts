import { z } from 'zod';
import { idOf, ObjectName } from '../common/common.schemas.js';
import { MAX_INVENTORY_CONTENT_CHARS } from '../inventories/inventory.schemas.js';
import { RUN_SPEC_FIELDS, RunIf, WorkerLabel } from '../runs/run.schemas.js';

export const MAX_PIPELINE_STEPS = 50;

/** One step: a run spec (a split when shards ≥ 2) with a name and the condition it runs under. */
export const PipelineStep = z
  .strictObject({
    ...RUN_SPEC_FIELDS,
    name: ObjectName.optional(),
    run_if: RunIf.optional().meta({
      description:
        '`success` (default): every earlier step that ran succeeded; `failure`: an earlier step failed; `always`',
    }),
  })
  .meta({ id: 'PipelineStep' });
export type PipelineStep = z.infer<typeof PipelineStep>;

/** Steps inherit the pipeline's inventory, vars, credentials and labels unless they set their own (vars merge, the step's win). */
export const SubmitPipelineBody = z
  .strictObject({
    name: ObjectName.optional(),
    steps: z.array(PipelineStep).min(1).max(MAX_PIPELINE_STEPS),
    inventory_id: idOf('inv').optional(),
    inventory: z.string().min(1).max(MAX_INVENTORY_CONTENT_CHARS).optional(),
    extra_vars: z.record(z.string(), z.unknown()).optional(),
    credential_ids: z.array(idOf('cred')).max(16).optional(),
    labels: z.array(WorkerLabel).max(16).optional(),
  })
  .meta({ id: 'SubmitPipelineBody' });
export type SubmitPipelineBody = z.infer<typeof SubmitPipelineBody>;
