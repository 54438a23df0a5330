// The structure of `awx export` JSON (awxkit), as loose as the tool is: every kind optional or null (a kind the
// exporting user could not read is null), unknown fields allowed (the field set follows the AWX version), references
// as natural keys. Only what the mapper reads is typed; a value of the wrong type there is the document's problem.
import { z } from 'zod';
import { MAX_INVENTORY_CONTENT_CHARS } from '../inventories/inventory.schemas.js';

const Name = z.string().max(1024);
const Text = z.string().max(64 * 1024);
const Flag = z.boolean().nullish();
const Int = z.number().int().nullish();
/** Variables: text holding YAML or JSON (what awxkit writes), or an object. */
const Vars = z.union([z.string().max(MAX_INVENTORY_CONTENT_CHARS), z.record(z.string(), z.unknown())]).nullish();
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish();

/** A natural key: `{type, ...the NATURAL_KEY fields}`; nested keys are read by the mapper defensively. */
export const AwxNaturalKey = z.looseObject({
  type: z.string().max(100),
  name: Name.nullish(),
  username: Name.nullish(),
  identifier: Name.nullish(),
  kind: z.string().max(100).nullish(),
});
export type AwxNaturalKey = z.infer<typeof AwxNaturalKey>;
const Key = AwxNaturalKey.nullish();

const Role = z.looseObject({ name: Name, content_object: Key });
const Roles = z.looseObject({ roles: list(Role) }).nullish();

const User = z.looseObject({
  username: Name,
  email: z.string().max(1024).nullish(),
  is_superuser: Flag,
  is_system_auditor: Flag,
  related: Roles,
});
const Organization = z.looseObject({ name: Name, description: Text.nullish() });
const Team = z.looseObject({ name: Name, organization: Key, related: Roles });
const CredentialType = z.looseObject({ name: Name, kind: z.string().max(100).nullish() });
const Credential = z.looseObject({
  name: Name,
  description: Text.nullish(),
  organization: Key,
  credential_type: AwxNaturalKey,
  inputs: z.record(z.string(), z.unknown()).nullish(),
});
const Project = z.looseObject({
  name: Name,
  description: Text.nullish(),
  organization: Key,
  scm_type: z.string().max(100).nullish(),
  scm_url: z.string().max(4096).nullish(),
  scm_branch: z.string().max(1024).nullish(),
  allow_override: Flag,
  credential: Key,
});
const Host = z.looseObject({
  name: Name,
  enabled: Flag,
  variables: Vars,
  related: z.looseObject({ groups: list(AwxNaturalKey) }).nullish(),
});
const Group = z.looseObject({
  name: Name,
  variables: Vars,
  related: z.looseObject({ hosts: list(AwxNaturalKey), children: list(AwxNaturalKey) }).nullish(),
});
const Inventory = z.looseObject({
  name: Name,
  description: Text.nullish(),
  organization: Key,
  kind: z.string().max(100).nullish(),
  variables: Vars,
  related: z.looseObject({ hosts: list(Host), groups: list(Group) }).nullish(),
});

const SurveyQuestion = z.looseObject({
  question_name: z.string().max(4096).nullish(),
  question_description: z.string().max(4096).nullish(),
  required: Flag,
  type: z.string().max(100),
  variable: z.string().max(1024),
  min: z.number().nullish(),
  max: z.number().nullish(),
  default: z.unknown(),
  choices: z.union([z.string().max(64 * 1024), z.array(z.string().max(4096))]).nullish(),
});
/** `{}` when there is no survey. */
const SurveySpec = z.looseObject({ spec: list(SurveyQuestion) }).nullish();

export const AwxSchedule = z.looseObject({
  name: Name,
  description: Text.nullish(),
  rrule: z.string().max(4096),
  enabled: Flag,
  unified_job_template: Key,
  extra_data: z.record(z.string(), z.unknown()).nullish(),
  limit: z.string().max(4096).nullish(),
});
export type AwxSchedule = z.infer<typeof AwxSchedule>;

const Prompts = {
  extra_vars: Vars,
  limit: z.string().max(4096).nullish(),
  scm_branch: z.string().max(1024).nullish(),
  job_tags: z.string().max(4096).nullish(),
  skip_tags: z.string().max(4096).nullish(),
  inventory: Key,
  survey_enabled: Flag,
  ask_variables_on_launch: Flag,
  ask_limit_on_launch: Flag,
  ask_inventory_on_launch: Flag,
  ask_scm_branch_on_launch: Flag,
};

const InventorySource = z.looseObject({
  name: Name,
  source: z.string().max(100),
  source_path: z.string().max(4096).nullish(),
  source_project: Key,
  source_vars: Vars,
  inventory: AwxNaturalKey,
  related: z.looseObject({ schedules: list(AwxSchedule) }).nullish(),
});

const JobTemplate = z.looseObject({
  ...Prompts,
  name: Name,
  description: Text.nullish(),
  job_type: z.string().max(100).nullish(),
  playbook: z.string().max(4096).nullish(),
  forks: Int,
  verbosity: Int,
  timeout: Int,
  job_slice_count: Int,
  project: Key,
  ask_credential_on_launch: Flag,
  ask_job_type_on_launch: Flag,
  ask_verbosity_on_launch: Flag,
  ask_job_slice_count_on_launch: Flag,
  related: z
    .looseObject({ credentials: list(AwxNaturalKey), survey_spec: SurveySpec, schedules: list(AwxSchedule) })
    .nullish(),
});
export type AwxJobTemplate = z.infer<typeof JobTemplate>;

const WorkflowNode = z.looseObject({
  identifier: Name.nullish(),
  unified_job_template: Key,
  extra_data: z.record(z.string(), z.unknown()).nullish(),
  limit: z.string().max(4096).nullish(),
  inventory: Key,
  related: z
    .looseObject({
      success_nodes: list(AwxNaturalKey),
      failure_nodes: list(AwxNaturalKey),
      always_nodes: list(AwxNaturalKey),
      create_approval_template: z
        .looseObject({ name: Name.nullish(), description: Text.nullish(), timeout: Int })
        .nullish(),
    })
    .nullish(),
});
export type AwxWorkflowNode = z.infer<typeof WorkflowNode>;

const WorkflowJobTemplate = z.looseObject({
  ...Prompts,
  name: Name,
  description: Text.nullish(),
  organization: Key,
  related: z
    .looseObject({ workflow_nodes: list(WorkflowNode), survey_spec: SurveySpec, schedules: list(AwxSchedule) })
    .nullish(),
});
export type AwxWorkflowJobTemplate = z.infer<typeof WorkflowJobTemplate>;

const Named = z.looseObject({ name: Name });

/** The kinds awxkit writes (EXPORTABLE_RESOURCES); `inventory` is singular there. */
export const AWX_EXPORT_KINDS = [
  'users',
  'organizations',
  'teams',
  'credential_types',
  'credentials',
  'notification_templates',
  'projects',
  'inventory',
  'inventory_sources',
  'job_templates',
  'workflow_job_templates',
  'execution_environments',
  'applications',
  'schedules',
] as const;

export const AwxExport = z.looseObject({
  users: list(User),
  organizations: list(Organization),
  teams: list(Team),
  credential_types: list(CredentialType),
  credentials: list(Credential),
  notification_templates: list(Named),
  projects: list(Project),
  inventory: list(Inventory),
  inventory_sources: list(InventorySource),
  job_templates: list(JobTemplate),
  workflow_job_templates: list(WorkflowJobTemplate),
  execution_environments: list(Named),
  applications: list(Named),
  schedules: list(AwxSchedule),
});
export type AwxExport = z.infer<typeof AwxExport>;
export type AwxSurveyQuestion = z.infer<typeof SurveyQuestion>;
export type AwxInventory = z.infer<typeof Inventory>;
export type AwxCredential = z.infer<typeof Credential>;
export type AwxRole = z.infer<typeof Role>;
