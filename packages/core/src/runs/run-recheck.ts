import type { RunRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { ConflictError, NotFoundError } from '../common/errors.js';
import type { CredentialService } from '../credentials/credential.service.js';
import type { InventoryService } from '../inventories/inventory.service.js';
import type { ProjectService } from '../projects/project.service.js';
import { RUN_CREDENTIAL_TYPES } from './run-rows.js';

export interface RecheckDeps {
  projects: Pick<ProjectService, 'playbookSource'>;
  inventories: Pick<InventoryService, 'requireUsable'>;
  credentials: Pick<CredentialService, 'requireUsable'>;
}

/**
 * Retry re-checks what submitting checks: the caller still has use on the project, inventory and credentials, and
 * they exist (409 naming the one that does not). Answers the inventory's content as the retry would run with it (a
 * stored inventory as it is now).
 */
export async function recheckRunInputs(deps: RecheckDeps, p: Principal, run: RunRow): Promise<string | null> {
  const gone = (what: string) => (err: unknown) => {
    if (err instanceof NotFoundError)
      throw new ConflictError(`run ${run.id} uses ${what}, which no longer exists or is not visible to you`);
    throw err;
  };
  if (run.project_id) await deps.projects.playbookSource(p, run.project_id).catch(gone(`project ${run.project_id}`));
  const inventory = run.inventory_id
    ? await deps.inventories.requireUsable(p, run.inventory_id).catch(gone(`inventory ${run.inventory_id}`))
    : undefined;
  for (const [i, id] of run.credential_ids.entries()) {
    await deps.credentials
      .requireUsable(p, id, `credential_ids.${i}`, RUN_CREDENTIAL_TYPES)
      .catch(gone(`credential ${id}`));
  }
  return run.inventory_content ?? inventory?.content ?? null;
}
