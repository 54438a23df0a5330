// Composes the launching domains (issue 11): pipelines, templates, the launcher that schedules and triggers start
// their targets with, schedules and triggers. Each domain wires itself from this one bag of dependencies.
import { type Authorizer, type Clock, createLauncher, type Keyring, type RunService } from '@baton/core';
import type { Database } from '@baton/db';
import { createPipelineServices } from '../pipelines/pipeline.wiring.js';
import { createScheduleServices } from '../schedules/schedule.wiring.js';
import { createTemplateServices } from '../templates/template.wiring.js';
import { createTriggerServices } from '../triggers/trigger.wiring.js';

export interface LaunchingDeps {
  authz: Authorizer;
  clock: Clock;
  keyring: Keyring;
  runs: RunService;
  /** the run domain's services the pipeline service builds on */
  runServices: Parameters<typeof createPipelineServices>[1]['runServices'];
  /** BATON_PUBLIC_URL, without a trailing slash */
  publicUrl: string;
  /** errors no request can be told of (a schedule that fails to fire, say) */
  reportError: (err: unknown) => void;
}

export function createLaunchingServices(db: Database, deps: LaunchingDeps) {
  const pipelineServices = createPipelineServices(db, deps);
  const templateServices = createTemplateServices(db, { ...deps, pipelines: pipelineServices.pipelines });
  const launcher = createLauncher({
    runs: deps.runs,
    pipelines: pipelineServices.pipelines,
    templates: templateServices.templates,
  });
  return {
    ...pipelineServices,
    ...templateServices,
    launcher,
    ...createScheduleServices(db, { ...deps, launcher }),
    ...createTriggerServices(db, { ...deps, launcher }),
  };
}
