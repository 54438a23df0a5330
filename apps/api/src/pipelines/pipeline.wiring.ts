import { createPipelineService } from '@baton/core';
import type { Database } from '@baton/db';

export function createPipelineServices(db: Database, deps: { runServices: unknown }) {
  void db;
  void deps;
  return { pipelines: createPipelineService() };
}
