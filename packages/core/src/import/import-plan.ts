// What a mapper (AWX or Semaphore) makes of a document: Baton objects to create, in terms of each other. The
// applier (import-apply.ts) resolves the references, checks each object against the API's own create schemas, and
// writes them in one transaction. Mappers are pure: they never throw, never touch the database or the network.
import type {
  CredentialType,
  GrantLevel,
  ImportFormat,
  ImportSkipped,
  OverridableField,
  Role,
  SurveyQuestion,
  TriggerFilters,
} from '@baton/contracts';

/**
 * A reference, inside a spec or a target, to another planned object by its key. The applier replaces it with that
 * object's id (or the id of the existing object it was matched to); a reference to a key the plan lacks or that was
 * skipped drops the object holding it, with the reason in the report.
 */
export interface PlanRef {
  $ref: string;
}
export const ref = (key: string): PlanRef => ({ $ref: key });

interface Planned {
  /** unique in the plan; the report's id_map key. Convention: `<source kind>:<source name>`, e.g. `job_template:Eng/deploy` */
  key: string;
  /** the Baton name (ObjectName rules: the applier reports names the schema refuses as skipped) */
  name: string;
}

export interface PlannedUser extends Planned {
  kind: 'user';
  role: Role;
  email?: string | undefined;
}
export interface PlannedTeam extends Planned {
  kind: 'team';
}
/** `name` is only for the report, e.g. `bob in SRE` */
export interface PlannedMembership extends Planned {
  kind: 'membership';
  team: string;
  user: string;
}
/** `name` is only for the report, e.g. `SRE use deploy-web` */
export interface PlannedGrant extends Planned {
  kind: 'grant';
  /** key of a planned user or team */
  subject: string;
  /** key of any planned object that can be granted (team, credential, project, inventory, source, template, schedule, trigger) */
  object: string;
  level: GrantLevel;
}
/** Imported without the secrets the export lacks (AWX and Semaphore never write them): listed in the report's needs_secret. */
export interface PlannedCredential extends Planned {
  kind: 'credential';
  type: CredentialType;
  description?: string | undefined;
  /** the type's non-secret inputs only (ssh_key: username; vault_password: vault_id; become_password: method, user; registry: url, username) */
  inputs: Record<string, string>;
  /**
   * secret inputs the export does carry in clear (a Semaphore environment's `env` values: `{variables: {NAME: value}}`);
   * sealed like any credential's. A credential whose type's required secret is still missing is listed in needs_secret.
   */
  secret_inputs?: Record<string, unknown> | undefined;
}
/** Created never synced: no git server is contacted at import. */
export interface PlannedProject extends Planned {
  kind: 'project';
  git_url: string;
  branch: string;
  /** key of a planned credential (token or ssh_key) */
  credential?: string | undefined;
}
/** Content in INI, YAML or JSON, as POST /v1/inventories takes it (checked by ansible-inventory before writing). */
export interface PlannedInventory extends Planned {
  kind: 'inventory';
  content: string;
}
/** Created never refreshed. */
export interface PlannedInventorySource extends Planned {
  kind: 'inventory_source';
  source_kind: 'script' | 'plugin';
  inventory: string;
  project: string;
  path: string;
}
/**
 * `spec` is a POST /v1/runs body (kind run) or a POST /v1/pipelines body (kind pipeline), except that id fields
 * (`project_id`, `inventory_id`, `credential_ids[i]`, in steps too) hold PlanRefs.
 */
export interface PlannedTemplate extends Planned {
  kind: 'template';
  template_kind: 'run' | 'pipeline';
  description?: string | undefined;
  spec: Record<string, unknown>;
  survey?: SurveyQuestion[] | undefined;
  allow_overrides?: OverridableField[] | undefined;
}
export interface PlannedSchedule extends Planned {
  kind: 'schedule';
  cron: string;
  timezone: string;
  enabled: boolean;
  /** key of a planned template */
  template: string;
  /** a TemplateOverrides body; id fields may hold PlanRefs */
  overrides?: Record<string, unknown> | undefined;
  survey_answers?: Record<string, unknown> | undefined;
}
/** Imported triggers always require signatures; their secret is new (the report says to rotate it to read it). */
export interface PlannedTrigger extends Planned {
  kind: 'trigger';
  template: string;
  filters?: TriggerFilters | undefined;
}
/** An approval policy holding every run of the given templates. */
export interface PlannedPolicy extends Planned {
  kind: 'policy';
  description?: string | undefined;
  templates: string[];
  approvers: { users?: string[]; teams?: string[]; roles?: Role[] };
  expires_after_s?: number | undefined;
}

export type PlannedObject =
  | PlannedUser
  | PlannedTeam
  | PlannedMembership
  | PlannedGrant
  | PlannedCredential
  | PlannedProject
  | PlannedInventory
  | PlannedInventorySource
  | PlannedTemplate
  | PlannedSchedule
  | PlannedTrigger
  | PlannedPolicy;

export interface ImportPlan {
  format: ImportFormat;
  source_version?: string | undefined;
  objects: PlannedObject[];
  /** source objects the mapper did not turn into anything, each with why (unknown kinds, unmappable types…) */
  skipped: ImportSkipped[];
  warnings: string[];
}

/** A document that is not what the format says: the first problem, at its JSON path (`body.templates.2.name`). */
export interface DocumentProblem {
  path: string;
  message: string;
}

export type MapResult = { ok: true; plan: ImportPlan } | { ok: false; problem: DocumentProblem };

/** A mapper: the parsed JSON document in, a plan or the document's first structural problem out. Never throws. */
export type ImportMapper = (doc: unknown) => MapResult;
