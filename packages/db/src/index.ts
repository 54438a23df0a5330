export { openDatabase, createRepositories } from './database.js';
export type { Database, Repositories, TransactionRunner } from './database.js';
export { DEFAULT_POOL_SIZE, parseDatabaseUrl, postgresPoolConfig, toNumber } from './dialect.js';
export { DuplicateKeyError, isUniqueViolation, databaseOutage } from './errors.js';
export type { DatabaseOutage } from './errors.js';
export type { DatabaseOptions, DatabaseTarget, DialectName } from './dialect.js';
export type { PageQuery } from './page.js';
export type { UserRow, UserRepo, UserPatch } from './users/user.repo.js';
export type { TokenRow, TokenRepo, PersonalTokenRow } from './auth/token.repo.js';
export type { TeamRow, TeamRepo, TeamMemberView } from './teams/team.repo.js';
export type { GrantRow, GrantRepo, GrantFilter } from './grants/grant.repo.js';
export type { AuditEntryRow, AuditEntryDraft, AuditRepo, AuditFilter } from './audit/audit.repo.js';
export type { ServerKeyRow, ServerKeyRepo } from './keys/server-key.repo.js';
export { ENCRYPTED_COLUMNS } from './keys/secret-columns.js';
export type {
  CredentialRow,
  CredentialRepo,
  CredentialPatch,
  CredentialDeleteResult,
} from './credentials/credential.repo.js';
export type { SecretColumnRepo } from './keys/secret-columns.js';
export type {
  InventoryRow,
  InventorySummaryRow,
  InventoryHostRow,
  InventoryGroupRow,
  InventoryRepo,
} from './inventories/inventory.repo.js';
export type {
  InventorySourceRow,
  InventorySourceRef,
  InventorySourceRepo,
} from './inventory-sources/inventory-source.repo.js';
export type { ProjectRow, ProjectRepo, ProjectPatch } from './projects/project.repo.js';
export type {
  RunRow,
  RunPatch,
  RunHostCounts,
  RunHostRow,
  RunTaskResultRow,
  RunFilter,
  RunVisibility,
  RunRepo,
  HeldPolicy,
} from './runs/run.repo.js';
export type { RunEventRow, RunEventQuery, RunEventRepo } from './runs/run-event.repo.js';
export type { RunApprovalRow, RunApprovalRepo } from './runs/run-approval.repo.js';
export type { WorkerRow, WorkerRepo } from './workers/worker.repo.js';
export { GENESIS_HASH } from './migrations/0001_foundation.js';
export type { LaunchRefRepo, LaunchRefOwner } from './launching/launch-ref.repo.js';
export * from './templates/template.repo.js';
export * from './schedules/schedule.repo.js';
export * from './triggers/trigger.repo.js';
export * from './policies/policy.repo.js';
export * from './sso/user-identity.repo.js';
export * from './sso/sso-code.repo.js';
export * from './sso/sso-state.repo.js';
export * from './sso/sso-assertion.repo.js';
export * from './sso/sso-team.repo.js';
export type { AiRepo, AiSettingsRow, AiExplanationRow, AiProposalRow } from './ai/ai.repo.js';
export type { ObservationRepo } from './observation/observation.repo.js';
export type { HostRunRow, HostRunDraft, HostRunFilter, HostWindowSummary } from './observation/fleet.repo.js';
export type { TaskStatRow, TaskRunRow, TaskRunDraft, TaskFilter, TaskDuration } from './observation/task-trend.repo.js';
export type { DriftItemRow, DriftHostRow, DriftFilter } from './observation/drift.repo.js';
export type { ImportRepo, NamedTable } from './import/import.repo.js';
export type {
  NotifierRepo,
  NotifierRow,
  NotifierPatch,
  OutboxRow,
  DeliveryRow,
  DeliveryPatch,
} from './notifiers/notifier.repo.js';
export type { KnownHostRepo, KnownHostRow, KnownHostScope, KnownHostKey } from './known-hosts/known-host.repo.js';
export type { RetentionRepo, PrunableRun, OutputSize } from './retention/retention.repo.js';
export {
  backupSqlite,
  inspectSqliteBackup,
  NotABatonDatabaseError,
  unknownMigrations,
  withReadonlyRepositories,
} from './retention/sqlite-backup.js';
export type { BackupInspection, BackupSummary } from './retention/sqlite-backup.js';
