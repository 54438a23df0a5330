// Webhook triggers (issue 11): the trigger service on the launching dependencies.
import { createTriggerService, type Launcher } from '@baton/core';
import type { Database } from '@baton/db';
import type { LaunchingDeps } from '../launching/launching.wiring.js';

export function createTriggerServices(db: Database, deps: LaunchingDeps & { launcher: Launcher }) {
  const { repos, transaction } = db;
  return {
    triggers: createTriggerService({
      triggers: repos.triggers,
      users: repos.users,
      projects: repos.projects,
      transaction,
      authz: deps.authz,
      clock: deps.clock,
      keyring: deps.keyring,
      launcher: deps.launcher,
      publicUrl: deps.publicUrl,
    }),
  };
}
