// Pipelines (issue 11): filled in next.
import type { Run, SubmitPipelineBody } from '@baton/contracts';
import type { Principal } from '../authz/authorize.js';
import type { LaunchContext } from '../runs/run-launch.js';

export function createPipelineService() {
  return {
    async submit(p: Principal, body: SubmitPipelineBody, ctx?: LaunchContext): Promise<Run> {
      void p;
      void body;
      void ctx;
      throw new Error('pipelines are not built yet');
    },
  };
}
export type PipelineService = ReturnType<typeof createPipelineService>;
