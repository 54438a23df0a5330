import type { PipelineService } from '@baton/core';
import type { Database } from '@baton/db';

/** The pipeline service lives with the run engine (it advances where runs finish); launching gets it from there. */
export function createPipelineServices(db: Database, deps: { runServices: { pipelines: PipelineService } }) {
  void db;
  return { pipelines: deps.runServices.pipelines };
}
