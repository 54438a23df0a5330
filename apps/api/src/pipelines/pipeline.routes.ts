import { Run, SubmitPipelineBody } from '@baton/contracts';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function pipelineRoutes(s: Pick<Services, 'pipelines'>): Operation[] {
  return [
    defineOperation({
      operationId: 'submitPipeline',
      method: 'post',
      path: '/pipelines',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary:
        'Submit ordered playbook steps as one pipeline run (kind pipeline); the steps run one after another, each when its run_if holds.',
      description:
        'Each step is a run spec (shards ≥ 2 make it a split) with an optional name and run_if: `success` (default: every earlier step that ran succeeded), `failure` (an earlier step failed: clean-up or rollback) or `always`. Steps inherit the pipeline’s inventory, extra vars (merged, the step’s win), credentials and labels unless they set their own. Everything is checked before any step runs: every referenced object exists and is usable by the caller, and every project playbook exists at the commit resolved now (each step records it). A step whose run_if does not hold finishes `canceled` with reason `skipped`. The pipeline concludes `succeeded` when no step failed, `failed` when any step failed (even if a `failure` step then succeeded), `canceled` when canceled. GET /v1/runs/{id}/steps lists the steps; cancel skips the waiting steps and stops the running one; retry of a finished pipeline starts a new pipeline from its first failed step.',
      body: SubmitPipelineBody,
      responses: {
        201: { description: 'Submitted: the pipeline run; its first step is pending (or skipped)', schema: Run },
        400: { description: 'Invalid body or step (errors at body.steps.<i>.…)' },
        403: { description: 'Viewer role, or no use grant on an object a step references' },
        404: { description: 'A referenced project, inventory or credential is unknown or not visible' },
        422: { description: 'git cannot fetch a step’s project or ref, or its playbook is missing at that commit' },
      },
      async handle({ principal, body }) {
        const run = await s.pipelines.submit(principal, body);
        return { status: 201, body: run, headers: { Location: `/v1/runs/${run.id}` } };
      },
    }),
  ];
}
