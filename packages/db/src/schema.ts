import type { ColumnType } from 'kysely';
// Table shapes shared by both dialects. Timestamps are RFC 3339 UTC strings (they sort and compare the same
// on SQLite and PostgreSQL); JSON is stored as text; counters are plain integers.
export interface UserTable {
  id: string;
  username: string;
  email: string | null;
  role: string;
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface ApiTokenTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** session | personal; null: a session token from before issue 12 */
  kind: string | null;
  name: string | null;
  /** read | write; null: write */
  scope: string | null;
  issued_role: string | null;
  last_used_at: string | null;
}

export interface TeamTable {
  id: string;
  name: string;
  created_at: string;
  created_by: string;
}

export interface TeamMemberTable {
  team_id: string;
  user_id: string;
  added_at: string;
}

export interface GrantTable {
  id: string;
  subject_id: string;
  object_id: string;
  level: string;
  created_at: string;
  created_by: string;
}

export interface AuditEntryTable {
  seq: number;
  at: string;
  actor: string;
  action: string;
  object: string | null;
  summary: string;
  prev_hash: string;
  hash: string;
}

/** One row (id = 1): the chain's head. Appenders lock it, so concurrent writers queue instead of forking. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
}

export interface ServerKeyTable {
  purpose: string;
  public_key: string;
  private_key_enc: string;
  created_at: string;
}

export interface CredentialTable {
  id: string;
  name: string;
  type: string;
  description: string | null;
  public_inputs: string;
  secret_inputs_enc: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface ProjectTable {
  id: string;
  name: string;
  git_url: string;
  branch: string;
  credential_id: string | null;
  /** defaults to accept_new (migration 0010) */
  host_key_checking: ColumnType<string, string | undefined, string>;
  galaxy_credential_id: ColumnType<string | null, string | null | undefined, string | null>;
  last_commit: string | null;
  synced_at: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface InventoryTable {
  id: string;
  name: string;
  format: string;
  content: string;
  groups: string;
  host_count: number;
  /** defaults to accept_new (migration 0010) */
  host_key_checking: ColumnType<string, string | undefined, string>;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface InventoryHostTable {
  inventory_id: string;
  host: string;
  groups: string;
}

export interface InventorySourceTable {
  id: string;
  name: string;
  kind: string;
  inventory_id: string;
  project_id: string | null;
  path: string | null;
  url: string | null;
  credential_id: string | null;
  refresh_interval_s: number | null;
  refreshed_at: string | null;
  host_count: number | null;
  last_error: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface RunTable {
  id: string;
  kind: string;
  parent_id: string | null;
  shard_index: number | null;
  shard_count: number | null;
  retry_of: string | null;
  status: string;
  conclusion: string | null;
  reason: string | null;
  playbook_source: string;
  playbook: string;
  project_id: string | null;
  git_commit: string | null;
  template_id: string | null;
  inventory_id: string | null;
  inventory_content: string | null;
  inventory_format: string | null;
  host_limit: string | null;
  hosts: string | null;
  extra_vars: string | null;
  credential_ids: string;
  check_mode: number;
  forks: number | null;
  verbosity: number | null;
  timeout_s: number | null;
  labels: string;
  submitted_by: string;
  worker: string | null;
  exit_code: number | null;
  stats: string | null;
  last_seq: number;
  log_lines: number;
  log_bytes: number;
  /** 1 when the stored log was cut at the run output limit */
  output_truncated: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  cancel_requested_at: string | null;
  origin: string;
  schedule_id: string | null;
  trigger_id: string | null;
  git_ref: string | null;
  step_index: number | null;
  step_name: string | null;
  run_if: string | null;
  survey_answers: string | null;
  secret_vars_enc: string | null;
  held_by: string | null;
  hold_policies: string | null;
  hold_expires_at: string | null;
  /** when retention removed its log and events (BATON_RETENTION_DAYS) */
  output_pruned_at: string | null;
}

export interface RunEventTable {
  run_id: string;
  seq: number;
  ts: string;
  kind: string;
  host: string | null;
  log_line: number | null;
  log_byte: number | null;
  data: string;
}

export interface RunHostTable {
  run_id: string;
  host: string;
  outcome: string;
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  skipped: number;
  rescued: number;
  ignored: number;
}

export interface RunTaskResultTable {
  run_id: string;
  seq: number;
  task_uuid: string;
  task: string;
  task_path: string | null;
  host: string;
  status: string;
  changed: number;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  /** the task's module (ansible's action) */
  action: string | null;
  /** failed, unreachable or skipped results: why (no_log: a fixed text) */
  message: string | null;
  no_log: number | null;
  /** changed results that are not no_log: JSON [{item?, diff?}] */
  changes: string | null;
}

export interface FleetHostTable {
  host: string;
  runs: number;
  last_run_id: string;
  last_outcome: string;
  last_seen_at: string;
  flaky: number;
}

/** The visibility keys every observation rollup row carries (the runs domain's rule). */
export interface RunVisibilityColumns {
  project_id: string | null;
  inventory_id: string | null;
  template_id: string | null;
  submitted_by: string;
}

/** Per host and visibility key (or every run), the newest runs on the host (observation/fleet-windows.ts). */
export interface FleetWindowTable {
  kind: string;
  value: string;
  host: string;
  ring: string;
  newest_at: string;
}

export interface HostRunTable extends RunVisibilityColumns {
  host: string;
  host_seq: number;
  run_id: string;
  outcome: string;
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  skipped: number;
  rescued: number;
  ignored: number;
  failed_tasks: string;
  playbook: string;
  git_commit: string | null;
  check_mode: number;
  origin: string;
  duration_ms: number | null;
  finished_at: string;
}

export interface TaskStatTable {
  task_key: string;
  runs: number;
  playbook: string;
  project_id: string | null;
  task_path: string;
  task: string;
  action: string | null;
  last_run_id: string;
  last_at: string;
}

export interface TaskRunTable extends RunVisibilityColumns {
  task_key: string;
  task_seq: number;
  run_id: string;
  duration_ms: number;
  host_ms: string;
  finished_at: string;
}

export interface DriftItemTable extends RunVisibilityColumns {
  id: string;
  scope: string;
  host: string;
  resource: string;
  state: string;
  playbook: string;
  git_commit: string | null;
  task: string;
  task_path: string;
  item: string | null;
  action: string | null;
  diff: string | null;
  no_log: number;
  found_in_run_id: string;
  found_at: string;
  reconcile_run_id: string | null;
  resolved_by_run_id: string | null;
  resolved_at: string | null;
  fixed: number | null;
}

export interface DriftHostTable extends RunVisibilityColumns {
  scope: string;
  host: string;
  assessed: number;
  reason: string | null;
  playbook: string;
  git_commit: string | null;
  run_id: string;
  at: string;
}

export interface WorkerTable {
  id: string;
  name: string;
  host: string;
  mode: string;
  labels: string;
  capacity: number;
  running: string;
  started_at: string;
  heartbeat_at: string;
  lease_expires_at: string;
  /** why the worker leases no new run ('event_buffer_full'); null while it leases */
  paused: string | null;
}

export interface TemplateTable {
  id: string;
  name: string;
  description: string | null;
  kind: string;
  spec: string;
  survey: string | null;
  secret_defaults_enc: string | null;
  allow_overrides: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface ScheduleTable {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: number;
  target: string;
  target_secrets_enc: string | null;
  template_id: string | null;
  next_run_at: string | null;
  last_run_id: string | null;
  last_fired_at: string | null;
  last_error: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface ScheduleFireTable {
  schedule_id: string;
  due_at: string;
  claimed_at: string;
  claimed_by: string;
  run_id: string | null;
  error: string | null;
}

export interface TriggerTable {
  id: string;
  name: string;
  token: string;
  secret_enc: string;
  require_signature: number;
  filters: string;
  target: string;
  target_secrets_enc: string | null;
  template_id: string | null;
  last_delivery_at: string | null;
  last_run_id: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface TriggerDeliveryTable {
  trigger_id: string;
  delivery_id: string;
  received_at: string;
  run_id: string | null;
}

export interface LaunchRefTable {
  owner_id: string;
  object_id: string;
}

export interface PolicyTable {
  id: string;
  name: string;
  description: string | null;
  enabled: number;
  match: string;
  approvers: string;
  min_approvals: number;
  expires_after_s: number | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface RunApprovalTable {
  run_id: string;
  user_id: string;
  username: string;
  decision: string;
  comment: string | null;
  counts_for: string;
  at: string;
}

export interface UserIdentityTable {
  issuer: string;
  subject: string;
  provider: string;
  user_id: string;
  created_at: string;
  last_login_at: string;
}

export interface SsoCodeTable {
  code_hash: string;
  user_id: string;
  method: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface SsoStateTable {
  id: string;
  provider: string;
  data: string;
  created_at: string;
  expires_at: string;
}

export interface SsoAssertionTable {
  id: string;
  expires_at: string;
}

/** The AI provider an admin stored (one row, id 'default'); BATON_AI_* in the environment wins over it. */
export interface AiSettingsTable {
  id: string;
  provider: string;
  base_url: string;
  model: string;
  api_key_enc: string | null;
  timeout_s: number;
  max_output_tokens: number;
  updated_by: string;
  updated_at: string;
}

/** A run's stored explanation (JSON columns: arrays). */
export interface AiExplanationTable {
  run_id: string;
  summary: string;
  likely_causes: string;
  suggested_fixes: string;
  cited_events: string;
  model: string;
  generated_at: string;
}

/** Why the AI proposed a run (proposal: JSON). */
export interface AiProposalTable {
  run_id: string;
  request: string;
  proposal: string;
  proposed_by: string;
  model: string;
  created_at: string;
}

export interface NotifierTable {
  id: string;
  name: string;
  kind: string;
  config: string;
  secrets_enc: string;
  events: string;
  match: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface NotificationOutboxTable {
  id: string;
  source: string;
  subject_id: string;
  status: string;
  at: string;
  fanned_out: number;
}

export interface NotificationDeliveryTable {
  id: string;
  notifier_id: string;
  outbox_id: string | null;
  event: string;
  run_id: string | null;
  message: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  response_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  claimed_by: string | null;
  lease_until: string | null;
  created_at: string;
}

export interface Schema {
  users: UserTable;
  api_tokens: ApiTokenTable;
  teams: TeamTable;
  team_members: TeamMemberTable;
  grants: GrantTable;
  audit_entries: AuditEntryTable;
  audit_head: AuditHeadTable;
  server_keys: ServerKeyTable;
  credentials: CredentialTable;
  projects: ProjectTable;
  inventories: InventoryTable;
  inventory_hosts: InventoryHostTable;
  inventory_sources: InventorySourceTable;
  runs: RunTable;
  run_events: RunEventTable;
  run_hosts: RunHostTable;
  run_task_results: RunTaskResultTable;
  workers: WorkerTable;
  templates: TemplateTable;
  schedules: ScheduleTable;
  schedule_fires: ScheduleFireTable;
  triggers: TriggerTable;
  trigger_deliveries: TriggerDeliveryTable;
  launch_refs: LaunchRefTable;
  policies: PolicyTable;
  run_approvals: RunApprovalTable;
  user_identities: UserIdentityTable;
  sso_codes: SsoCodeTable;
  sso_states: SsoStateTable;
  sso_assertions: SsoAssertionTable;
  fleet_hosts: FleetHostTable;
  host_runs: HostRunTable;
  fleet_windows: FleetWindowTable;
  task_stats: TaskStatTable;
  task_runs: TaskRunTable;
  drift_items: DriftItemTable;
  drift_hosts: DriftHostTable;
  ai_settings: AiSettingsTable;
  notifiers: NotifierTable;
  notification_outbox: NotificationOutboxTable;
  notification_deliveries: NotificationDeliveryTable;
  known_hosts: KnownHostTable;
  ai_explanations: AiExplanationTable;
  ai_proposals: AiProposalTable;
}

export interface KnownHostTable {
  scope: string;
  scope_id: string;
  host: string;
  key_type: string;
  key: string;
  source: string;
  run_id: string | null;
  created_by: string | null;
  created_at: string;
}
