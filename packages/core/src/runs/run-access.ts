import type { RunRepo, RunRow, RunVisibility } from '@baton/db';
import { type Authorizer, type Principal, visibleOr404 } from '../authz/authorize.js';
import { ForbiddenError } from '../common/errors.js';

/**
 * Who sees a run (the runs domain's own rule, built on THE authorization rule): admins, its submitter, and
 * whoever holds `use` on its project, template or inventory. Anyone else gets the same 404 as for an
 * unknown id. Acting on a run (cancel, retry) needs what submitting needs: a creator role and `use` on
 * every object it references.
 */
export function createRunAccess(deps: {
  runs: Pick<RunRepo, 'findById'>;
  authz: Pick<Authorizer, 'levelOn' | 'visibleIds' | 'requireCreator'>;
}) {
  async function canSee(p: Principal, run: RunRow): Promise<boolean> {
    if (p.role === 'admin' || run.submitted_by === p.id) return true;
    for (const objectId of [run.project_id, run.template_id, run.inventory_id]) {
      if (objectId && (await deps.authz.levelOn(p, objectId)) !== null) return true;
    }
    return false;
  }

  return {
    canSee,

    /** The run if the caller may see it; unknown and invisible both answer 404. */
    async visibleRun(p: Principal, id: string): Promise<RunRow> {
      return visibleOr404('run', id, await deps.runs.findById(id), (run) => canSee(p, run));
    },

    /** For list filtering. */
    async visibility(p: Principal): Promise<RunVisibility> {
      if (p.role === 'admin') return 'all';
      const [projectIds, inventoryIds, templateIds] = await Promise.all([
        deps.authz.visibleIds(p, 'prj'),
        deps.authz.visibleIds(p, 'inv'),
        deps.authz.visibleIds(p, 'tpl'),
      ]);
      const ids = (v: 'all' | string[]) => (v === 'all' ? [] : v);
      return {
        submittedBy: p.id,
        projectIds: ids(projectIds),
        inventoryIds: ids(inventoryIds),
        templateIds: ids(templateIds),
      };
    },

    /** Cancel and retry: a creator role and `use` on every object the run references (403 otherwise). */
    async requireActOn(p: Principal, run: RunRow): Promise<void> {
      deps.authz.requireCreator(p);
      if (p.role === 'admin') return;
      const refs = [run.project_id, run.template_id, run.inventory_id, ...run.credential_ids].filter((x): x is string =>
        Boolean(x),
      );
      for (const objectId of refs) {
        if ((await deps.authz.levelOn(p, objectId)) === null)
          throw new ForbiddenError(`acting on run ${run.id} needs use on ${objectId}`);
      }
    },
  };
}
export type RunAccess = ReturnType<typeof createRunAccess>;
