// Semaphore task templates → Baton run templates. Only ansible templates map (v2.10.2–26 wrote no `app`: all
// ansible then). The spec gathers what Semaphore spread over the template, its inventory (ssh and become keys),
// vaults and environments; Semaphore-only features (build/deploy types, views, autorun…) are warned, once per kind.
import {
  branchNameProblem,
  OVERRIDABLE_FIELDS,
  ProjectRelativePath,
  type OverridableField,
  type SemaphoreTemplate,
} from '@baton/contracts';
import { ref, type PlannedTemplate } from '../import-plan.js';
import { batonName, cut, listed, planKey, skip, text, type MapContext } from './semaphore-context.js';
import type { DecodedTemplate } from './semaphore-decode.js';
import { mapSurvey, readArguments } from './semaphore-fields.js';
import type { KeyBook } from './semaphore-keys.js';

export type Resolved<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface RepositoryRef {
  key: string;
  branch: string;
}
export interface InventoryRef {
  key: string;
  credentials: string[];
}
export interface EnvironmentRef {
  json: Record<string, unknown>;
  credential?: string | undefined;
}

export interface TemplateSources {
  keys: KeyBook;
  repository(name: string | null | undefined): Resolved<RepositoryRef>;
  inventory(name: string | null | undefined): Resolved<InventoryRef> | undefined;
  environment(name: string, where: string): EnvironmentRef | undefined;
}

/** A planned template as later parts (schedules, triggers, workflows) need it. */
export interface TemplateRef {
  key: string;
  name: string;
  spec: Record<string, unknown>;
  allowOverrides: OverridableField[];
}

const MAX_CREDENTIALS = 16;

/** Semaphore-only features, by what the warning says about them; `uses` answers a detail to show, or true. */
const FEATURES: Array<{ what: string; uses: (t: SemaphoreTemplate) => string | true | undefined }> = [
  {
    what: 'build and deploy template types (versions, build templates) have no Baton counterpart: imported as plain templates',
    uses: (t) => (t.type === 'build' || t.type === 'deploy' ? t.type : undefined),
  },
  { what: 'start versions are not imported', uses: (t) => text(t.start_version) },
  { what: 'build templates of deploy templates are not imported', uses: (t) => text(t.build_template) },
  { what: 'autorun (deploy after each build) is not imported', uses: (t) => t.autorun || undefined },
  { what: 'views are not imported', uses: (t) => text(t.view) },
  {
    what: 'suppressed success alerts are not imported (Baton notifications are set up separately)',
    uses: (t) => t.suppress_success_alerts || undefined,
  },
  { what: 'runner tags are not imported: use worker labels', uses: (t) => text(t.runner_tag) },
  {
    what: 'template roles are not imported: grant access to the templates after import',
    uses: (t) => ((t.roles ?? []).length ? (t.roles ?? []).map((r) => r.role ?? '?').join(', ') : undefined),
  },
  {
    what: 'tags and skip tags are not imported (Baton run specs have no tags)',
    uses: (t) =>
      [...(t.task_params?.tags ?? []), ...(t.task_params?.skip_tags ?? [])].join(', ') ||
      (t.task_params?.allow_override_tags || t.task_params?.allow_override_skip_tags ? 'overridable' : undefined),
  },
];

/** One warning per Semaphore-only feature, naming the templates that use it. */
export function warnFeatures(ctx: MapContext, templates: readonly SemaphoreTemplate[]): void {
  for (const f of FEATURES) {
    const users = templates.flatMap((t) => {
      const use = f.uses(t);
      return use === undefined ? [] : [use === true ? t.name : `${t.name} (${use})`];
    });
    if (users.length) ctx.warnings.push(`${f.what}: ${listed(users)}`);
  }
}

export const isAnsible = (t: SemaphoreTemplate) => {
  const app = text(t.app);
  return app === undefined || app === 'ansible';
};

/** Plans the template, or skips it with the reason; answers what later parts need. */
export function mapTemplate(
  ctx: MapContext,
  t: SemaphoreTemplate,
  decoded: DecodedTemplate,
  from: TemplateSources,
): TemplateRef | undefined {
  const where = `template "${t.name}"`;
  const key = planKey(ctx, 'template', t.name);
  const refuse = (reason: string) => {
    skip(ctx, 'template', t.name, reason, key);
    return undefined;
  };
  if (!isAnsible(t)) return refuse(`app ${t.app} is not ansible`);
  const playbook = text(t.playbook);
  if (!playbook) return refuse('it names no playbook');
  if (!ProjectRelativePath.safeParse(playbook).success)
    return refuse(`its playbook ${cut(playbook, 200)} is not a path inside its repository (relative, no ..)`);
  const repo = from.repository(t.repository);
  if (!repo.ok) return refuse(repo.reason);
  const inventory = from.inventory(t.inventory);
  if (inventory && !inventory.ok) return refuse(inventory.reason);

  const credentials: string[] = [...(inventory?.value.credentials ?? [])];
  const vaults = [
    ...(t.vault_key ? [{ name: null, vault_key: t.vault_key }] : []),
    ...(t.vaults ?? []).filter((v) => !(v.vault_key === t.vault_key && !text(v.name))),
  ];
  for (const v of vaults) {
    const cred = from.keys.credential(v.vault_key, { as: 'vault', vaultName: v.name }, where);
    if (cred) credentials.push(cred);
  }
  const envNames = [...(t.environment ? [t.environment] : []), ...(t.environments ?? [])].filter(
    (n, i, all) => all.indexOf(n) === i,
  );
  if (envNames.length > 1)
    ctx.warnings.push(
      `${where} has ${envNames.length} environments (${listed(envNames)}): their variables are merged in that order`,
    );
  let extraVars: Record<string, unknown> = {};
  for (const n of envNames) {
    const env = from.environment(n, where);
    if (!env) continue;
    // Spread defines own properties: a variable named __proto__ stays a variable.
    extraVars = { ...extraVars, ...env.json };
    if (env.credential) credentials.push(env.credential);
  }
  const credentialIds = [...new Set(credentials)];
  if (credentialIds.length > MAX_CREDENTIALS)
    ctx.warnings.push(`${where} keeps its first ${MAX_CREDENTIALS} of ${credentialIds.length} credentials`);

  const { fields, dropped } = readArguments(decoded.arguments);
  if (dropped.length) ctx.warnings.push(`${where}: arguments with no Baton field are not imported: ${listed(dropped)}`);
  const params = t.task_params;
  const limit = fields.limit ?? ((params?.limit ?? []).filter(Boolean).join(',') || undefined);

  const spec: Record<string, unknown> = { playbook, project_id: ref(repo.value.key) };
  if (inventory) spec.inventory_id = ref(inventory.value.key);
  if (credentialIds.length) spec.credential_ids = credentialIds.slice(0, MAX_CREDENTIALS).map(ref);
  if (Object.keys(extraVars).length) spec.extra_vars = extraVars;
  if (limit) spec.limit = cut(limit, 4096);
  if (fields.forks !== undefined) spec.forks = fields.forks;
  if (fields.verbosity !== undefined) spec.verbosity = fields.verbosity;
  if (fields.check) spec.check = true;
  const branch = text(t.git_branch);
  if (branch && branch !== repo.value.branch) {
    const problem = branchNameProblem(branch);
    if (problem) ctx.warnings.push(`${where}: branch "${cut(branch, 100)}" is not imported: ${problem}`);
    else spec.ref = branch;
  }

  const allowed = new Set<OverridableField>();
  if (t.allow_override_args_in_task)
    for (const f of ['limit', 'extra_vars', 'check', 'verbosity'] as const) allowed.add(f);
  if (params?.allow_override_limit) allowed.add('limit');
  if (params?.allow_override_inventory) allowed.add('inventory_id');
  if (t.allow_override_branch_in_task) allowed.add('ref');
  const allowOverrides = OVERRIDABLE_FIELDS.filter((f) => allowed.has(f));

  const name = batonName(ctx, 'template', t.name, 'template');
  const planned: PlannedTemplate = { kind: 'template', key, name, template_kind: 'run', spec };
  const description = text(t.description);
  if (description) {
    if (description.length > 1000) ctx.warnings.push(`${where}: its description is cut to 1000 characters`);
    planned.description = cut(description, 1000);
  }
  const survey = mapSurvey(decoded.survey, where, ctx.warnings);
  if (survey) planned.survey = survey;
  if (allowOverrides.length) planned.allow_overrides = allowOverrides;
  ctx.objects.push(planned);
  return { key, name, spec, allowOverrides };
}
