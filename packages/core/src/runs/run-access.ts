import type { PolicyApprovers } from '@baton/contracts';
import type { HeldPolicy, RunRepo, RunRow, RunVisibility, TeamRepo } from '@baton/db';
import { approverMatches } from '../policies/policy-match.js';
import { type Authorizer, type Principal, visibleOr404 } from '../authz/authorize.js';
import { ForbiddenError } from '../common/errors.js';

/**
 * Who sees a run (the runs domain's own rule, built on THE authorization rule): admins, its submitter, and
 * whoever holds `use` on its project, template or inventory, and the approvers its holding policies name (a run held
 * for approval must be visible to who decides on it). Anyone else gets the same 404 as for an unknown id. Acting on a run (cancel, retry) needs what submitting needs: a creator role and `use` on
 * every object it references.
 */
export function createRunAccess(deps: {
  runs: Pick<RunRepo, 'findById'>;
  authz: Pick<Authorizer, 'levelOn' | 'visibleIds' | 'requireCreator'>;
  teams: Pick<TeamRepo, 'teamIdsOf'>;
}) {
  async function canSee(p: Principal, run: RunRow): Promise<boolean> {
    if (p.role === 'admin' || run.submitted_by === p.id) return true;
    for (const objectId of [run.project_id, run.template_id, run.inventory_id]) {
      if (objectId && (await deps.authz.levelOn(p, objectId)) !== null) return true;
    }
    const policies = await holdPoliciesOf(run);
    if (policies.length === 0) return false;
    const who = { id: p.id, role: p.role, teamIds: await deps.teams.teamIdsOf(p.id) };
    return policies.some((pol) => approverMatches(pol.approvers as PolicyApprovers, who));
  }

  /** The policies that held a run's unit: its own, or its split's or pipeline's (a shard of a split step: two up). */
  async function holdPoliciesOf(run: RunRow, depth = 0): Promise<HeldPolicy[]> {
    if (run.hold_policies?.length) return run.hold_policies;
    if (run.parent_id === null || depth >= 2) return [];
    const parent = await deps.runs.findById(run.parent_id);
    return parent ? holdPoliciesOf(parent, depth + 1) : [];
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
