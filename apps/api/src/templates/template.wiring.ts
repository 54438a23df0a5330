// Composes the templates domain (issue 11): the template service, which is also the launcher's TemplateLauncher.
import { createTemplateService, type PipelineService } from '@baton/core';
import type { Database } from '@baton/db';
import type { LaunchingDeps } from '../launching/launching.wiring.js';

export function createTemplateServices(db: Database, deps: LaunchingDeps & { pipelines: PipelineService }) {
  const { repos } = db;
  const templates = createTemplateService({
    templates: repos.templates,
    users: repos.users,
    launchRefs: repos.launchRefs,
    transaction: db.transaction,
    authz: deps.authz,
    clock: deps.clock,
    seal: (plaintext) => deps.keyring.encrypt(plaintext),
    open: (sealed) => deps.keyring.decrypt(sealed).toString('utf8'),
    runs: deps.runs,
    pipelines: deps.pipelines,
  });
  return { templates };
}
