// Filled in by the templates domain (issue 11).
import type { Run } from '@baton/contracts';
import type { PipelineService, TemplateLauncher } from '@baton/core';
import type { Database } from '@baton/db';
import type { LaunchingDeps } from '../launching/launching.wiring.js';

export function createTemplateServices(db: Database, deps: LaunchingDeps & { pipelines: PipelineService }) {
  void db;
  void deps;
  const notYet = (): Promise<never> => Promise.reject(new Error('templates are not built yet'));
  const templates: TemplateLauncher = {
    launch: (): Promise<Run> => notYet(),
    passwordVariables: () => notYet(),
    projectIdsOf: () => notYet(),
  };
  return { templates };
}
