// What schedules and triggers start (issue 11): a LaunchTarget, launched through the same submission path as
// everything else. The launcher turns a target into the call of the runs, pipelines or templates service.
import type {
  LaunchTarget,
  LaunchTemplateBody,
  Run,
  RunOrigin,
  SubmitPipelineBody,
  SubmitRunBody,
} from '@baton/contracts';
import type { Principal } from '../authz/authorize.js';
import type { LaunchContext } from '../runs/run-launch.js';

/** How a schedule or trigger launches: its origin and id; a push's commit for a trigger. */
export interface TargetLaunchContext {
  origin: RunOrigin;
  scheduleId?: string | undefined;
  triggerId?: string | undefined;
  /** run this commit (or ref) of the project instead of the spec's own ref or branch head */
  ref?: string | undefined;
  /** check, store nothing (creating or updating a schedule or trigger) */
  validateOnly?: boolean | undefined;
}

/** What the templates domain offers launchers (its service implements it). */
export interface TemplateLauncher {
  /** Launches template `id` as `p` would with POST /v1/templates/{id}/launch, recording `ctx`'s origin and ids. */
  launch(p: Principal, id: string, body: LaunchTemplateBody, ctx: TargetLaunchContext): Promise<Run>;
  /** The variables of its password questions (their answers are sealed wherever a target stores them). */
  passwordVariables(p: Principal, id: string): Promise<string[]>;
  /** The projects its spec runs playbooks of (a trigger matches them against the pushed repository). */
  projectIdsOf(p: Principal, id: string): Promise<string[]>;
}

export interface LauncherDeps {
  runs: { submit(p: Principal, body: SubmitRunBody, ctx?: LaunchContext): Promise<Run> };
  pipelines: { submit(p: Principal, body: SubmitPipelineBody, ctx?: LaunchContext): Promise<Run> };
  templates: TemplateLauncher;
}

export function createLauncher(deps: LauncherDeps) {
  const withRef = <T extends { project_id?: string | undefined; ref?: string | undefined }>(
    spec: T,
    ref: string | undefined,
  ): T => (ref !== undefined && spec.project_id !== undefined ? { ...spec, ref } : spec);

  return {
    /** Launches `target` as `p` (a schedule's or trigger's owner). With `ctx.validateOnly`, checks and stores nothing. */
    async launch(p: Principal, target: LaunchTarget, ctx: TargetLaunchContext): Promise<Run> {
      const launch: LaunchContext = {
        origin: ctx.origin,
        scheduleId: ctx.scheduleId,
        triggerId: ctx.triggerId,
        validateOnly: ctx.validateOnly,
      };
      if (target.run) return deps.runs.submit(p, withRef(target.run, ctx.ref), launch);
      if (target.pipeline) {
        const steps = target.pipeline.steps.map((s) => withRef(s, ctx.ref));
        return deps.pipelines.submit(p, { ...target.pipeline, steps }, launch);
      }
      const body: LaunchTemplateBody = {
        ...(target.survey_answers ? { survey_answers: target.survey_answers } : {}),
        ...(target.overrides ? { overrides: target.overrides } : {}),
      };
      return deps.templates.launch(p, target.template_id!, body, ctx);
    },

    /**
     * A target as stored: a template target's password answers taken out (to be sealed apart), the rest as given.
     * `secrets` is null when there are none.
     */
    async splitSecrets(
      p: Principal,
      target: LaunchTarget,
    ): Promise<{ target: LaunchTarget; secrets: Record<string, string> | null }> {
      if (target.template_id === undefined || !target.survey_answers) return { target, secrets: null };
      const passwords = new Set(await deps.templates.passwordVariables(p, target.template_id));
      const kept: Record<string, unknown> = {};
      const secrets: Record<string, string> = {};
      for (const [k, v] of Object.entries(target.survey_answers)) {
        if (passwords.has(k) && typeof v === 'string') secrets[k] = v;
        else kept[k] = v;
      }
      return {
        target: { ...target, survey_answers: kept },
        secrets: Object.keys(secrets).length ? secrets : null,
      };
    },

    /** The stored target with its sealed answers put back, ready to launch. */
    joinSecrets(target: LaunchTarget, secrets: Record<string, string> | null): LaunchTarget {
      if (!secrets) return target;
      return { ...target, survey_answers: { ...target.survey_answers, ...secrets } };
    },

    /** The projects the target runs playbooks of. */
    async projectIds(p: Principal, target: LaunchTarget): Promise<string[]> {
      if (target.run) return target.run.project_id ? [target.run.project_id] : [];
      if (target.pipeline)
        return [...new Set(target.pipeline.steps.flatMap((s) => (s.project_id ? [s.project_id] : [])))];
      return deps.templates.projectIdsOf(p, target.template_id!);
    },

    /** Every object id the target names (for launch_refs: deleting one of them while referenced is a 409). */
    referencedIds(target: LaunchTarget): string[] {
      return [...new Set(referencedIdsOf(target))];
    },
  };
}
export type Launcher = ReturnType<typeof createLauncher>;

type SpecRefs = {
  project_id?: string | undefined;
  inventory_id?: string | undefined;
  credential_ids?: string[] | undefined;
};

/** The project, inventory and credential ids of a run spec or a pipeline spec (its steps too). */
export function specReferences(spec: SpecRefs & { steps?: SpecRefs[] }): string[] {
  const one = (s: SpecRefs) => [
    ...(s.project_id ? [s.project_id] : []),
    ...(s.inventory_id ? [s.inventory_id] : []),
    ...(s.credential_ids ?? []),
  ];
  return [...new Set([...one(spec), ...(spec.steps ?? []).flatMap(one)])];
}

function referencedIdsOf(target: LaunchTarget): string[] {
  if (target.run) return specReferences(target.run);
  if (target.pipeline) return specReferences(target.pipeline);
  const o = target.overrides;
  return [target.template_id!, ...(o ? specReferences(o) : [])];
}
