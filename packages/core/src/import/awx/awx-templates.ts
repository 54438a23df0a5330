// AWX job templates, workflow job templates and schedules as Baton templates, pipeline templates, approval
// policies and schedules.
import type {
  AwxJobTemplate,
  AwxSchedule,
  AwxWorkflowJobTemplate,
  AwxWorkflowNode,
  OverridableField,
  SurveyQuestion,
} from '@baton/contracts';
import { type ChainEdge, type ChainNode, chainSteps, type EdgeCondition } from '../import-chain.js';
import { type PlannedPolicy, type PlannedTemplate, ref } from '../import-plan.js';
import { readVars } from '../import-text.js';
import type { AwxContext } from './awx-context.js';
import { BECOME_SUFFIX } from './awx-inputs.js';
import { keyOf, keyOfObject, orgOf } from './awx-keys.js';
import { rruleToCron } from './awx-rrule.js';
import { mapSurvey } from './awx-survey.js';

const RUN_CREDENTIAL_TYPES = new Set(['ssh_key', 'become_password', 'vault_password', 'env']);
type Spec = Record<string, unknown>;
type Built = { ok: true; spec: Spec; overrides: OverridableField[] } | { ok: false; reason: string };

function surveyOf(ctx: AwxContext, t: AwxJobTemplate | AwxWorkflowJobTemplate, where: string): SurveyQuestion[] {
  const spec = t.related?.survey_spec?.spec ?? [];
  if (!spec.length) return [];
  if (!t.survey_enabled) {
    ctx.warn(`${where}: its survey is disabled in AWX and was not imported`);
    return [];
  }
  return mapSurvey(spec, where, (m) => ctx.warn(m));
}

/** A job template's run spec (ids as PlanRefs) and what its launcher may override. */
function jobSpec(ctx: AwxContext, jt: AwxJobTemplate): Built {
  const where = `job template ${jt.name}`;
  const project = keyOf(jt.project);
  if (!project || !ctx.planned.has(project)) return { ok: false, reason: 'its project was not imported' };
  if (!jt.playbook) return { ok: false, reason: 'it names no playbook' };
  const spec: Spec = { playbook: jt.playbook, project_id: ref(project) };
  const inventory = keyOf(jt.inventory);
  if (inventory) {
    if (!ctx.planned.has(inventory)) return { ok: false, reason: 'its inventory was not imported' };
    spec.inventory_id = ref(inventory);
  }
  const credentials: string[] = [];
  for (const nk of jt.related?.credentials ?? []) {
    const key = keyOf(nk);
    const planned = key ? ctx.planned.get(key) : undefined;
    if (!planned || planned.kind !== 'credential' || !RUN_CREDENTIAL_TYPES.has(planned.type)) {
      ctx.warn(
        `${where}: credential ${nk.name ?? '?'} is not one a Baton run uses, or was not imported; it was left out`,
      );
      continue;
    }
    credentials.push(planned.key);
    if (ctx.planned.has(planned.key + BECOME_SUFFIX)) credentials.push(planned.key + BECOME_SUFFIX);
  }
  if (credentials.length) spec.credential_ids = credentials.map(ref);
  const vars = readVars(jt.extra_vars);
  if (!vars.ok) ctx.warn(`${where}: its extra_vars ${vars.reason}; they were left out`);
  else if (Object.keys(vars.vars).length) spec.extra_vars = vars.vars;
  if (jt.limit) spec.limit = jt.limit;
  if (jt.forks && jt.forks > 0) spec.forks = Math.min(jt.forks, 500);
  if (jt.verbosity && jt.verbosity > 0) spec.verbosity = Math.min(jt.verbosity, 4);
  if (jt.timeout && jt.timeout > 0) spec.timeout_s = jt.timeout;
  if (jt.job_slice_count && jt.job_slice_count > 1) spec.shards = jt.job_slice_count;
  if (jt.job_type === 'check') spec.check = true;
  if (jt.scm_branch) spec.ref = jt.scm_branch;
  if (jt.job_tags || jt.skip_tags) ctx.warn(`${where}: job tags and skip tags have no Baton field; they were left out`);
  const overrides: OverridableField[] = [];
  const asks: Array<[boolean | null | undefined, OverridableField]> = [
    [jt.ask_limit_on_launch, 'limit'],
    [jt.ask_variables_on_launch, 'extra_vars'],
    [jt.ask_inventory_on_launch, 'inventory_id'],
    [jt.ask_credential_on_launch, 'credential_ids'],
    [jt.ask_job_type_on_launch, 'check'],
    [jt.ask_verbosity_on_launch, 'verbosity'],
    [jt.ask_job_slice_count_on_launch, 'shards'],
    [jt.ask_scm_branch_on_launch, 'ref'],
  ];
  for (const [asked, field] of asks) if (asked) overrides.push(field);
  return { ok: true, spec, overrides };
}

export function planJobTemplates(ctx: AwxContext): Map<string, Built> {
  const specs = new Map<string, Built>();
  for (const jt of ctx.doc.job_templates ?? []) {
    const key = keyOfObject(jt, 'job_template');
    if (!key) continue;
    const built = jobSpec(ctx, jt);
    specs.set(key, built);
    if (!built.ok) {
      ctx.skip('job_template', jt.name, built.reason);
      continue;
    }
    const t: PlannedTemplate = {
      kind: 'template',
      key,
      name: ctx.names.claim('template', jt.name, orgOf(jt) || undefined),
      template_kind: 'run',
      description: jt.description || undefined,
      spec: built.spec,
      survey: surveyOf(ctx, jt, `job template ${jt.name}`),
      allow_overrides: built.overrides,
    };
    ctx.add(t);
  }
  return specs;
}

const nodeKey = (wf: string, n: AwxWorkflowNode, i: number) => `${wf}#${n.identifier ?? `node-${i + 1}`}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A workflow as a pipeline template (and an approval policy when it has approval nodes), or skipped with why. */
function planWorkflow(ctx: AwxContext, wf: AwxWorkflowJobTemplate, jobs: Map<string, Built>): void {
  const key = keyOfObject(wf, 'workflow_job_template');
  if (!key) return;
  const where = `workflow ${wf.name}`;
  const nodes = wf.related?.workflow_nodes ?? [];
  const hasEdges = nodes.some(
    (n) => n.related && ['success_nodes', 'failure_nodes', 'always_nodes'].some((e) => e in n.related!),
  );
  if (nodes.length > 1 && !hasEdges)
    return ctx.skip(
      'workflow_job_template',
      wf.name,
      'the export holds its nodes without their edges (awxkit 22.4–22.7 drops them), so their order is unknown',
    );
  const chainNodes: Array<ChainNode<Spec | null>> = [];
  const edges: ChainEdge[] = [];
  const approvals: Array<{ name: string; description?: string; timeout?: number }> = [];
  for (const [i, n] of nodes.entries()) {
    const id = nodeKey(key, n, i);
    const approval = n.related?.create_approval_template;
    const ujt = keyOf(n.unified_job_template);
    let value: Spec | null = null;
    if (approval || !ujt) {
      approvals.push({
        name: approval?.name ?? 'approval',
        description: approval?.description ?? undefined,
        timeout: approval?.timeout ?? undefined,
      });
    } else if (ujt.startsWith('job_template:')) {
      const built = jobs.get(ujt);
      if (!built?.ok)
        return ctx.skip(
          'workflow_job_template',
          wf.name,
          `node ${n.identifier ?? i + 1} runs a job template that was not imported`,
        );
      const step: Spec = {
        ...built.spec,
        name: n.identifier && !UUID.test(n.identifier) ? n.identifier : String(n.unified_job_template?.name ?? ''),
      };
      const extra = n.extra_data && Object.keys(n.extra_data).length ? n.extra_data : undefined;
      if (extra) step.extra_vars = { ...(step.extra_vars as Spec | undefined), ...extra };
      if (n.limit) step.limit = n.limit;
      const inv = keyOf(n.inventory);
      if (inv && ctx.planned.has(inv)) step.inventory_id = ref(inv);
      value = step;
    } else if (ujt.startsWith('project:') || ujt.startsWith('inventory_source:')) {
      ctx.warn(
        `${where}: node ${n.identifier ?? i + 1} updates a ${ujt.split(':')[0]!.replace('_', ' ')}; Baton resolves the project at each run, so the step was left out`,
      );
    } else {
      return ctx.skip(
        'workflow_job_template',
        wf.name,
        `node ${n.identifier ?? i + 1} runs a ${ujt.split(':')[0]}, which a pipeline step cannot`,
      );
    }
    chainNodes.push({ id, approval: Boolean(approval || !ujt), value });
    for (const [field, condition] of [
      ['success_nodes', 'success'],
      ['failure_nodes', 'failure'],
      ['always_nodes', 'always'],
    ] as const)
      for (const to of n.related?.[field] ?? [])
        // Edges never leave their workflow: the target is this workflow's node with that identifier.
        edges.push({ from: id, to: `${key}#${String(to.identifier ?? '?')}`, condition: condition as EdgeCondition });
  }
  // Update nodes carry no step: they pass through like approvals, but need no policy.
  const chain = chainSteps(
    chainNodes.map((n) => ({ ...n, approval: n.approval || n.value === null })),
    edges,
  );
  if (!chain.ok) return ctx.skip('workflow_job_template', wf.name, `it is not a chain of steps: ${chain.reason}`);
  const steps: Spec[] = chain.steps.map((s) => ({
    ...s.value!,
    ...(s.run_if !== 'success' ? { run_if: s.run_if } : {}),
  }));
  if (!steps.length) return ctx.skip('workflow_job_template', wf.name, 'it has no job template nodes');
  const spec: Spec = { name: wf.name.slice(0, 100), steps };
  const vars = readVars(wf.extra_vars);
  if (vars.ok && Object.keys(vars.vars).length) spec.extra_vars = vars.vars;
  else if (!vars.ok) ctx.warn(`${where}: its extra_vars ${vars.reason}; they were left out`);
  const inv = keyOf(wf.inventory);
  if (inv && ctx.planned.has(inv)) {
    // AWX applies the workflow's inventory to every node; a step's own inventory would win in Baton.
    spec.inventory_id = ref(inv);
    for (const s of steps) delete s.inventory_id;
  }
  if (wf.limit) for (const s of steps) s.limit ??= wf.limit;
  const overrides: OverridableField[] = [];
  if (wf.ask_limit_on_launch) overrides.push('limit');
  if (wf.ask_variables_on_launch) overrides.push('extra_vars');
  if (wf.ask_inventory_on_launch) overrides.push('inventory_id');
  if (wf.ask_scm_branch_on_launch) overrides.push('ref');
  const name = ctx.names.claim('template', wf.name, orgOf(wf) || undefined);
  ctx.add({
    kind: 'template',
    key,
    name,
    template_kind: 'pipeline',
    description: wf.description || undefined,
    spec,
    survey: surveyOf(ctx, wf, where),
    allow_overrides: overrides,
  });
  const realApprovals = approvals;
  if (realApprovals.length) {
    const timeouts = realApprovals.map((a) => a.timeout ?? 0).filter((t) => t > 0);
    const policy: PlannedPolicy = {
      kind: 'policy',
      key: `${key}#approval`,
      name: ctx.names.claim('policy', `${wf.name} approval`),
      description: realApprovals
        .map((a) => [a.name, a.description].filter(Boolean).join(': '))
        .join('; ')
        .slice(0, 2000),
      templates: [key],
      approvers: {},
      ...(timeouts.length ? { expires_after_s: Math.max(60, Math.min(Math.min(...timeouts), 30 * 24 * 3600)) } : {}),
    };
    ctx.add(policy);
    ctx.warn(
      `${where}: its approval (${realApprovals.map((a) => a.name).join(', ')}) holds the whole pipeline before it starts in Baton, not between steps`,
    );
  }
}

export function planWorkflows(ctx: AwxContext, jobs: Map<string, Built>): void {
  for (const wf of ctx.doc.workflow_job_templates ?? []) planWorkflow(ctx, wf, jobs);
}

/** Schedules of templates and workflows (written nested and again at top level: each once). */
export function planSchedules(ctx: AwxContext): void {
  const nested = [...(ctx.doc.job_templates ?? []), ...(ctx.doc.workflow_job_templates ?? [])].flatMap(
    (t) => t.related?.schedules ?? [],
  );
  const sourceSchedules = (ctx.doc.inventory_sources ?? []).flatMap((s) => s.related?.schedules ?? []);
  const seen = new Set<string>();
  for (const s of [...(ctx.doc.schedules ?? []), ...nested, ...sourceSchedules] as AwxSchedule[]) {
    const target = keyOf(s.unified_job_template);
    const id = `schedule:${target ?? '?'}/${s.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const template = target ? ctx.planned.get(target) : undefined;
    if (!template || template.kind !== 'template') {
      const what = String(s.unified_job_template?.type ?? 'nothing').replaceAll('_', ' ');
      ctx.skip(
        'schedule',
        s.name,
        template === undefined && target?.match(/^(job_template|workflow_job_template):/)
          ? 'its template was not imported'
          : `it starts ${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what}, which Baton schedules cannot`,
      );
      continue;
    }
    const cron = rruleToCron(s.rrule, ctx.now);
    if (!cron.ok) {
      ctx.skip('schedule', s.name, `its rule ${s.rrule} does not map to cron exactly: ${cron.reason}`);
      ctx.warn(`schedule ${s.name}: not imported, its rule ${s.rrule} has no exact cron equivalent (${cron.reason})`);
      continue;
    }
    if (cron.note) ctx.warn(`schedule ${s.name}: ${cron.note}`);
    const allowed = new Set(template.allow_overrides ?? []);
    const questions = new Set((template.survey ?? []).map((q) => q.variable));
    const answers: Record<string, unknown> = {};
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s.extra_data ?? {})) (questions.has(k) ? answers : extra)[k] = v;
    const overrides: Record<string, unknown> = {};
    if (Object.keys(extra).length) {
      if (allowed.has('extra_vars')) overrides.extra_vars = extra;
      else
        ctx.warn(
          `schedule ${s.name}: its extra vars were left out (template ${template.name} does not let a launcher set them)`,
        );
    }
    if (s.limit) {
      if (allowed.has('limit')) overrides.limit = s.limit;
      else
        ctx.warn(
          `schedule ${s.name}: its limit was left out (template ${template.name} does not let a launcher set it)`,
        );
    }
    ctx.add({
      kind: 'schedule',
      key: id,
      name: ctx.names.claim('schedule', s.name),
      cron: cron.cron,
      timezone: cron.timezone,
      enabled: s.enabled ?? true,
      template: template.key,
      ...(Object.keys(overrides).length ? { overrides } : {}),
      ...(Object.keys(answers).length ? { survey_answers: answers } : {}),
    });
  }
}
