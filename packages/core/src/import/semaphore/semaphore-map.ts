// A Semaphore project backup (any edition: test/fixtures/import/README.md) → an import plan (issue 16). Pure: the
// document is checked for shape (depth, storable text), then structure (the loose schema), then its JSON-holding
// strings; past that every source object either becomes planned Baton objects or a skipped entry with the reason.
import {
  CREDENTIAL_LIMITS,
  documentShapeIssue,
  ENV_NAME_PATTERN,
  gitUrlProblem,
  branchNameProblem,
  MAX_IMPORT_DEPTH,
  parseDocument,
  ProjectRelativePath,
  reservedEnvNameReason,
  SEMAPHORE_BACKUP_KEYS,
  SemaphoreBackup,
  type SemaphoreTemplate,
} from '@baton/contracts';
import type { ImportMapper, ImportPlan, PlannedCredential, PlannedInventory, PlannedProject } from '../import-plan.js';
import { batonName, cut, listed, newContext, planKey, skip, text, type MapContext } from './semaphore-context.js';
import { decodeBackup, type Decoded } from './semaphore-decode.js';
import { mapKeys, type KeyBook } from './semaphore-keys.js';
import {
  isAnsible,
  mapTemplate,
  warnFeatures,
  type EnvironmentRef,
  type InventoryRef,
  type RepositoryRef,
  type Resolved,
  type TemplateRef,
} from './semaphore-templates.js';
import { batonCron, mapIntegration, mapSchedule, type TemplateLookup } from './semaphore-triggers.js';
import { mapWorkflow } from './semaphore-workflows.js';

const SHARED_KIND_NAMES: ReadonlySet<string> = new Set(['schedules', 'roles']);
const EMPTY_INVENTORY = 'all:\n  hosts: {}\n';
const WORKSPACE_TYPES = new Set(['terraform-workspace', 'tofu-workspace', 'terragrunt-workspace']);

export const mapSemaphoreBackup: ImportMapper = (doc) => {
  const shape = documentShapeIssue(doc, MAX_IMPORT_DEPTH);
  if (shape) return { ok: false, problem: shape };
  const parsed = parseDocument(SemaphoreBackup, doc);
  if (!parsed.ok) return { ok: false, problem: parsed.issue };
  // Another tool's export (an AWX one sent to the wrong format) would otherwise import as an empty plan.
  // The schema took it as an object: only an object passes z.object.
  const raw = typeof doc === 'object' && doc !== null ? doc : {};
  // `schedules` and `roles` are words an AWX export uses too: only Semaphore's own kinds tell its backups apart.
  if (!Object.keys(raw).some((k) => SEMAPHORE_BACKUP_KEYS.has(k) && !SHARED_KIND_NAMES.has(k)))
    return {
      ok: false,
      problem: { path: 'body', message: 'is not a Semaphore project backup (it has no meta, keys, templates…)' },
    };
  const decoded = decodeBackup(parsed.value);
  if (!decoded.ok) return { ok: false, problem: decoded.problem };
  return { ok: true, plan: buildPlan(raw, parsed.value, decoded.value) };
};

/** Resolves names to what they became, first object of each name winning. */
function byName<T>(
  ctx: MapContext,
  kind: string,
  items: ReadonlyArray<{ name: string }>,
  map: (i: number) => T,
): Map<string, T> {
  const out = new Map<string, T>();
  items.forEach((item, i) => {
    if (out.has(item.name))
      skip(ctx, kind, item.name, `another ${kind} has the same name (the backup refers to them by name)`);
    else out.set(item.name, map(i));
  });
  return out;
}

function mapRepositories(
  ctx: MapContext,
  backup: SemaphoreBackup,
  keys: KeyBook,
): Map<string, Resolved<RepositoryRef>> {
  const repos = backup.repositories ?? [];
  return byName(ctx, 'repository', repos, (i) => {
    const r = repos[i]!;
    const key = planKey(ctx, 'repository', r.name);
    const url = r.git_url ?? '';
    const urlProblem = gitUrlProblem(url);
    if (urlProblem) {
      const reason = `git URL ${cut(url, 200) || '(none)'}: ${urlProblem}`;
      skip(ctx, 'repository', r.name, reason, key);
      return { ok: false, reason: `its repository "${r.name}" was not imported (${reason})` };
    }
    let branch = text(r.git_branch);
    const branchProblem = branch === undefined ? 'none is given' : branchNameProblem(branch);
    if (branchProblem) {
      ctx.warnings.push(
        `repository "${r.name}": branch ${branch === undefined ? '' : `"${cut(branch, 100)}" `}(${branchProblem}): imported with branch main`,
      );
      branch = 'main';
    }
    const project: PlannedProject = {
      kind: 'project',
      key,
      name: batonName(ctx, 'project', r.name, 'repository'),
      git_url: url,
      branch: branch!,
    };
    const credential = keys.credential(r.ssh_key, { as: 'repository' }, `repository "${r.name}"`);
    if (credential) project.credential = credential;
    ctx.objects.push(project);
    return { ok: true, value: { key, branch: branch! } };
  });
}

/** The repository a `file` inventory's path lives in: the backup does not say, so the first template using it tells. */
function fileInventoryProject(
  users: readonly SemaphoreTemplate[],
  repos: Map<string, Resolved<RepositoryRef>>,
): Resolved<RepositoryRef> {
  if (!users.length)
    return {
      ok: false,
      reason: 'the backup does not say which repository holds its file, and no ansible template uses it',
    };
  const first = repos.get(users[0]!.repository ?? '');
  if (first) return first;
  return { ok: false, reason: `the repository of template "${users[0]!.name}" is not in the backup` };
}

function mapInventories(
  ctx: MapContext,
  backup: SemaphoreBackup,
  keys: KeyBook,
  repos: Map<string, Resolved<RepositoryRef>>,
): Map<string, Resolved<InventoryRef>> {
  const inventories = backup.inventories ?? [];
  const usersOf = new Map<string, SemaphoreTemplate[]>();
  for (const t of backup.templates ?? []) {
    if (!t.inventory || !isAnsible(t)) continue;
    const users = usersOf.get(t.inventory) ?? [];
    users.push(t);
    usersOf.set(t.inventory, users);
  }
  return byName(ctx, 'inventory', inventories, (i): Resolved<InventoryRef> => {
    const inv = inventories[i]!;
    const key = planKey(ctx, 'inventory', inv.name);
    const type = text(inv.type) ?? '';
    const refuse = (reason: string): Resolved<InventoryRef> => {
      skip(ctx, 'inventory', inv.name, reason, key);
      return { ok: false, reason: `its inventory "${inv.name}" was not imported (${reason})` };
    };
    let source: { project: string; path: string } | undefined;
    if (WORKSPACE_TYPES.has(type)) return refuse(`a ${type} (terraform state): Baton has no such inventories`);
    if (type === 'file') {
      const users = usersOf.get(inv.name) ?? [];
      const project = fileInventoryProject(users, repos);
      if (!project.ok) return refuse(project.reason);
      const path = (inv.inventory ?? '').trim();
      if (!ProjectRelativePath.safeParse(path).success)
        return refuse(`its file ${cut(path, 200) || '(none)'} is not a path inside a repository (relative, no ..)`);
      const others = users.filter((t) => repos.get(t.repository ?? '') !== project).map((t) => t.name);
      if (others.length)
        ctx.warnings.push(
          `inventory "${inv.name}" is read from the first template's repository; ${listed(others)} use another`,
        );
      source = { project: project.value.key, path };
    } else if (type !== 'static' && type !== 'static-yaml') return refuse(`its type ${type || '(none)'} is unknown`);

    const where = `inventory "${inv.name}"`;
    const credentials = [
      keys.credential(inv.ssh_key, { as: 'login' }, where),
      keys.credential(inv.become_key, { as: 'become' }, where),
    ].filter((c): c is string => c !== undefined);
    const name = batonName(ctx, 'inventory', inv.name, 'inventory');
    const planned: PlannedInventory = {
      kind: 'inventory',
      key,
      name,
      content: source ? EMPTY_INVENTORY : (inv.inventory ?? ''),
    };
    ctx.objects.push(planned);
    if (source) {
      ctx.objects.push({
        kind: 'inventory_source',
        key: planKey(ctx, 'inventory_source', inv.name),
        name: batonName(ctx, 'inventory_source', inv.name, 'inventory source'),
        source_kind: 'plugin',
        inventory: key,
        project: source.project,
        path: source.path,
      });
    }
    return { ok: true, value: { key, credentials } };
  });
}

/** The `env` variables a Baton env credential can hold, each dropped one warned. */
function envVariables(ctx: MapContext, name: string, env: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const drop = (variable: string, why: string) =>
    ctx.warnings.push(`environment "${name}": variable ${cut(variable, 128)} is not imported: ${why}`);
  for (const [variable, value] of Object.entries(env)) {
    const reserved = reservedEnvNameReason(variable);
    if (variable.length > CREDENTIAL_LIMITS.envName || !ENV_NAME_PATTERN.test(variable))
      drop(variable, 'not a variable name (letters, digits and _)');
    else if (reserved !== undefined) drop(variable, `Baton reserves it: ${reserved}`);
    else if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      drop(variable, 'its value is not text');
    else if (String(value).length > CREDENTIAL_LIMITS.envValue)
      drop(variable, `its value is longer than ${CREDENTIAL_LIMITS.envValue} characters`);
    else if (Object.keys(out).length >= CREDENTIAL_LIMITS.envVariables)
      drop(variable, `a credential holds at most ${CREDENTIAL_LIMITS.envVariables} variables`);
    // defineProperty: a variable named __proto__ stays a variable instead of replacing the prototype.
    else
      Object.defineProperty(out, variable, {
        value: String(value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

function mapEnvironments(ctx: MapContext, backup: SemaphoreBackup, decoded: Decoded): Map<string, EnvironmentRef> {
  const envs = backup.environments ?? [];
  return byName(ctx, 'environment', envs, (i) => {
    const e = envs[i]!;
    const { json, env } = decoded.environments[i]!;
    const variables = envVariables(ctx, e.name, env);
    if (!Object.keys(variables).length) return { json };
    const key = planKey(ctx, 'environment', e.name);
    const credential: PlannedCredential = {
      kind: 'credential',
      key,
      name: batonName(ctx, 'credential', `${cut(e.name, 96)} env`, 'environment'),
      type: 'env',
      inputs: {},
      secret_inputs: { variables },
    };
    ctx.objects.push(credential);
    return { json, credential: key };
  });
}

/** Named kinds Baton has no counterpart for, with why. */
const UNMAPPED: Array<{
  field: 'views' | 'runners' | 'proxies' | 'secret_storages' | 'roles';
  kind: string;
  reason: string;
}> = [
  { field: 'views', kind: 'view', reason: 'views group templates in Semaphore’s UI; Baton has none' },
  { field: 'runners', kind: 'runner', reason: 'runners are Semaphore’s own workers: register Baton workers instead' },
  { field: 'proxies', kind: 'proxy', reason: 'Baton has no per-repository proxies' },
  {
    field: 'secret_storages',
    kind: 'secret_storage',
    reason: 'Baton keeps secrets itself; set the secrets of the imported credentials',
  },
  {
    field: 'roles',
    kind: 'role',
    reason: 'Baton has fixed roles (admin, operator, viewer): grant access to the imported objects instead',
  },
];

/**
 * The edition the document looks like. Guesses from shape only (no edition writes a version): a string survey or
 * views with `name` are v2.10.2–26 (plain encoding/json), secret storages, roles or template `environments` lists
 * are the newest, integrations without those are v2.10.27 or later.
 */
function sourceVersion(doc: object, backup: SemaphoreBackup): string | undefined {
  const raw = doc as Record<string, unknown>;
  const templates = Array.isArray(raw.templates) ? (raw.templates as unknown[]) : [];
  const hasKey = (o: unknown, k: string) => typeof o === 'object' && o !== null && k in o;
  if ('secret_storages' in raw || 'roles' in raw || templates.some((t) => hasKey(t, 'environments')))
    return 'newer than v2.11';
  if (
    (backup.templates ?? []).some((t) => typeof t.survey_vars === 'string') ||
    (backup.views ?? []).some((v) => v.name)
  )
    return 'v2.10.2–v2.10.26';
  if ('integrations' in raw) return 'schedules' in raw ? 'v2.10.27+ (with top-level schedules)' : 'v2.10.27+';
  return undefined;
}

function buildPlan(doc: object, backup: SemaphoreBackup, decoded: Decoded): ImportPlan {
  const ctx = newContext();
  for (const k of Object.keys(doc))
    if (!SEMAPHORE_BACKUP_KEYS.has(k))
      ctx.warnings.push(`top-level "${cut(k, 100)}" is not part of a Semaphore backup Baton knows: ignored`);

  const keys = mapKeys(ctx, backup);
  const repos = mapRepositories(ctx, backup, keys);
  const inventories = mapInventories(ctx, backup, keys, repos);
  const environments = mapEnvironments(ctx, backup, decoded);

  const sourceTemplates = backup.templates ?? [];
  warnFeatures(ctx, sourceTemplates.filter(isAnsible));
  const templates = byName(ctx, 'template', sourceTemplates, (i) =>
    mapTemplate(ctx, sourceTemplates[i]!, decoded.templates[i]!, {
      keys,
      repository: (name) =>
        repos.get(name ?? '') ??
        ({
          ok: false,
          reason: name ? `its repository "${name}" is not in the backup` : 'it names no repository',
        } as const),
      inventory: (name) =>
        name
          ? (inventories.get(name) ?? { ok: false, reason: `its inventory "${name}" is not in the backup` })
          : undefined,
      environment: (name, where) => {
        const env = environments.get(name);
        if (!env)
          ctx.warnings.push(`${where} names environment "${name}", which the backup lacks: imported without it`);
        return env;
      },
    }),
  );
  const templateFor: TemplateLookup = (name) => {
    if (!name) return { ok: false, reason: 'it names no template' };
    if (!templates.has(name)) return { ok: false, reason: `its template "${name}" is not in the backup` };
    const t: TemplateRef | undefined = templates.get(name);
    if (t) return { ok: true, value: t };
    const why = ctx.notImported.get(`template:${name}`) ?? 'skipped';
    return { ok: false, reason: `its template "${name}" was not imported (${why})` };
  };

  // Top-level schedules first: a transition-edition backup repeats a template's first cron there, with a name.
  const scheduled = new Set<string>();
  let schedules = 0;
  for (const s of backup.schedules ?? []) {
    const name = text(s.name) ?? `${s.template ?? 'template'} schedule`;
    const type = text(s.type) ?? '';
    if (type === 'run_at') {
      skip(ctx, 'schedule', name, `a one-off run at ${cut(s.run_at ?? '(no time)', 100)}, not a repeating schedule`);
      continue;
    }
    if (type !== '') {
      skip(ctx, 'schedule', name, `its type ${cut(type, 50)} is unknown`);
      continue;
    }
    const cron = s.cron_format ?? '';
    const read = batonCron(ctx, cron);
    if (read.ok) scheduled.add(`${s.template ?? ''}\u0000${read.cron}`);
    if (mapSchedule(ctx, { name, cron, enabled: s.active ?? true, template: s.template, source: s }, templateFor))
      schedules++;
  }
  for (const t of sourceTemplates) {
    const cron = text(t.cron);
    if (!cron) continue;
    const read = batonCron(ctx, cron);
    if (read.ok && scheduled.has(`${t.name}\u0000${read.cron}`)) continue;
    if (mapSchedule(ctx, { name: t.name, cron, enabled: true, template: t.name }, templateFor)) schedules++;
  }
  if (schedules)
    ctx.warnings.push(
      'Semaphore read schedules in its server’s time zone; imported schedules run in UTC: check their times',
    );

  for (const i of backup.integrations ?? []) mapIntegration(ctx, i, templateFor);
  if ((backup.integration_aliases ?? []).length)
    ctx.warnings.push('the project’s integration alias URLs are not imported: each trigger has its own URL');
  for (const w of backup.workflows ?? []) mapWorkflow(ctx, w, templateFor);

  for (const u of UNMAPPED) {
    const items: ReadonlyArray<{ name?: string | null | undefined; title?: string | null | undefined }> =
      backup[u.field] ?? [];
    items.forEach((o, i) => skip(ctx, u.kind, text(o.title ?? o.name) ?? `#${i + 1}`, u.reason));
  }

  const plan: ImportPlan = { format: 'semaphore', objects: ctx.objects, skipped: ctx.skipped, warnings: ctx.warnings };
  const version = sourceVersion(doc, backup);
  if (version) plan.source_version = version;
  return plan;
}
