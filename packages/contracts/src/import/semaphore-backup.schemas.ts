// The structure of a Semaphore project backup (GET /api/project/{id}/backup), every edition at once (issue 16; the
// editions are described in test/fixtures/import/README.md). Loose on purpose: unknown keys are ignored, every
// field any edition may omit or write as null is nullish. Strict on types: a number where a name belongs, an object
// where a list belongs, is the document's problem at that path. Strings are bounded by what Baton can keep; text
// that holds JSON (`arguments`, environment `json`/`env`, old `survey_vars`) is decoded and checked by the mapper.
import { z } from 'zod';
import { MAX_INVENTORY_CONTENT_CHARS } from '../inventories/inventory.schemas.js';

/** Names are cut to Baton's 100 characters by the mapper; longer than this is not a name. */
export const MAX_SEMAPHORE_NAME_CHARS = 1024;
/** URLs, branches, paths, crons, header names, match values. */
export const MAX_SEMAPHORE_FIELD_CHARS = 4096;
/** Descriptions and messages (cut to Baton's limits by the mapper, with a warning). */
export const MAX_SEMAPHORE_TEXT_CHARS = 64 * 1024;
/** Text holding JSON: environment variables, CLI arguments, a v2.10 survey. */
export const MAX_SEMAPHORE_JSON_CHARS = 1024 * 1024;

const bounded = (max: number) => z.string().max(max, `must be at most ${max} characters`);
const Name = bounded(MAX_SEMAPHORE_NAME_CHARS);
const Field = bounded(MAX_SEMAPHORE_FIELD_CHARS);
const Text = bounded(MAX_SEMAPHORE_TEXT_CHARS);
const Json = bounded(MAX_SEMAPHORE_JSON_CHARS);
const opt = <T extends z.ZodType>(t: T) => t.nullish();
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish();
/** Source-server ids: written by newer editions, never references. */
const SourceId = z.union([z.number(), Field]).nullish();

export const SemaphoreMeta = z.object({
  name: opt(Name),
  alert: opt(z.boolean()),
  alert_chat: opt(Field),
  max_parallel_tasks: opt(z.number()),
  type: opt(Field),
});

export const SemaphoreKey = z.object({ name: Name, type: opt(Field) });

export const SemaphoreRepository = z.object({
  name: Name,
  git_url: opt(Field),
  git_branch: opt(Field),
  ssh_key: opt(Name),
});

export const SemaphoreInventory = z.object({
  name: Name,
  type: opt(Field),
  inventory: opt(bounded(MAX_INVENTORY_CONTENT_CHARS)),
  ssh_key: opt(Name),
  become_key: opt(Name),
});

export const SemaphoreEnvironment = z.object({ name: Name, json: opt(Json), env: opt(Json) });

export const SemaphoreView = z.object({ name: opt(Name), title: opt(Name), position: opt(z.number()) });

export const SemaphoreSurveyVar = z.object({
  name: opt(Name),
  title: opt(Text),
  description: opt(Text),
  type: opt(Field),
  required: opt(z.boolean()),
  default_value: opt(Text),
  values: list(z.object({ name: opt(Text), value: opt(Text) })),
});
export const SemaphoreSurveyVars = z.array(SemaphoreSurveyVar);

export const SemaphoreTaskParams = z.object({
  allow_debug: opt(z.boolean()),
  allow_override_inventory: opt(z.boolean()),
  allow_override_limit: opt(z.boolean()),
  allow_override_tags: opt(z.boolean()),
  allow_override_skip_tags: opt(z.boolean()),
  limit: list(Field),
  tags: list(Field),
  skip_tags: list(Field),
});

export const SemaphoreTemplate = z.object({
  name: Name,
  app: opt(Field),
  playbook: opt(Field),
  arguments: opt(Json),
  allow_override_args_in_task: opt(z.boolean()),
  allow_override_branch_in_task: opt(z.boolean()),
  allow_parallel_tasks: opt(z.boolean()),
  description: opt(Text),
  type: opt(Field),
  start_version: opt(Field),
  build_template: opt(Name),
  autorun: opt(z.boolean()),
  view: opt(Name),
  suppress_success_alerts: opt(z.boolean()),
  inventory: opt(Name),
  repository: opt(Name),
  environment: opt(Name),
  environments: list(Name),
  cron: opt(Field),
  survey_vars: z.union([Json, SemaphoreSurveyVars]).nullish(),
  vault_key: opt(Name),
  vaults: list(z.object({ name: opt(Name), vault_key: opt(Name) })),
  git_branch: opt(Field),
  task_params: opt(SemaphoreTaskParams),
  runner_tag: opt(Field),
  roles: list(z.object({ role: opt(Name) })),
});

export const SemaphoreSchedule = z.object({
  name: opt(Name),
  cron_format: opt(Field),
  active: opt(z.boolean()),
  type: opt(Field),
  delete_after_run: opt(z.boolean()),
  run_at: opt(Field),
  template: opt(Name),
  checkable_repository: opt(Name),
  task_params: opt(z.record(z.string(), z.unknown())),
});

const Matcher = z.object({
  name: opt(Name),
  match_type: opt(Field),
  method: opt(Field),
  body_data_type: opt(Field),
  key: opt(Field),
  value: opt(Field),
});
const ExtractValue = z.object({
  name: opt(Name),
  value_source: opt(Field),
  body_data_type: opt(Field),
  key: opt(Field),
  variable: opt(Field),
});

export const SemaphoreIntegration = z.object({
  name: Name,
  auth_method: opt(Field),
  auth_header: opt(Field),
  auth_secret: opt(Name),
  searchable: opt(z.boolean()),
  template: opt(Name),
  aliases: list(Field),
  matchers: list(Matcher),
  extract_values: list(ExtractValue),
  task_params: opt(z.record(z.string(), z.unknown())),
});

export const SemaphoreWorkflowNode = z.object({
  id: SourceId,
  template: opt(Name),
  kind: opt(Field),
  convergence_mode: opt(Field),
  approval_timeout: opt(z.number()),
  approval_message: opt(Text),
  inventory_id: SourceId,
  environment_id: SourceId,
  template_id: SourceId,
});
export const SemaphoreWorkflowEdge = z.object({
  source_node_id: z.union([z.number(), Field]),
  destination_node_id: z.union([z.number(), Field]),
  condition: opt(Field),
});
export const SemaphoreWorkflow = z.object({
  name: Name,
  description: opt(Text),
  nodes: list(SemaphoreWorkflowNode),
  edges: list(SemaphoreWorkflowEdge),
});

/** Kinds Baton has no counterpart for: only their names are read, for the report. */
const Named = z.object({ name: opt(Name) });

/** The keys a backup of any known edition writes at its top level, in the order they are checked. */
export const SemaphoreBackup = z.object({
  meta: opt(SemaphoreMeta),
  keys: list(SemaphoreKey),
  repositories: list(SemaphoreRepository),
  inventories: list(SemaphoreInventory),
  environments: list(SemaphoreEnvironment),
  views: list(SemaphoreView),
  templates: list(SemaphoreTemplate),
  schedules: list(SemaphoreSchedule),
  integrations: list(SemaphoreIntegration),
  integration_aliases: list(Field),
  secret_storages: list(Named),
  roles: list(Named),
  runners: list(Named),
  proxies: list(Named),
  workflows: list(SemaphoreWorkflow),
});
export type SemaphoreBackup = z.infer<typeof SemaphoreBackup>;
export type SemaphoreTemplate = z.infer<typeof SemaphoreTemplate>;
export type SemaphoreSurveyVar = z.infer<typeof SemaphoreSurveyVar>;
export type SemaphoreSchedule = z.infer<typeof SemaphoreSchedule>;
export type SemaphoreIntegration = z.infer<typeof SemaphoreIntegration>;
export type SemaphoreWorkflow = z.infer<typeof SemaphoreWorkflow>;

/** Top-level keys the mapper reads; any other is reported as ignored. */
export const SEMAPHORE_BACKUP_KEYS: ReadonlySet<string> = new Set(Object.keys(SemaphoreBackup.shape));
