import { type Kysely, Migrator, sql } from 'kysely';
import { createAuditRepo } from './audit/audit.repo.js';
import { createCredentialRepo } from './credentials/credential.repo.js';
import { createTokenRepo } from './auth/token.repo.js';
import {
  type DatabaseOptions,
  type DatabaseTarget,
  type DialectName,
  openKysely,
  parseDatabaseUrl,
} from './dialect.js';
import { createGrantRepo } from './grants/grant.repo.js';
import { createSecretColumnRepo } from './keys/secret-columns.js';
import { createServerKeyRepo } from './keys/server-key.repo.js';
import { migrationProvider } from './migrations/index.js';
import type { Schema } from './schema.js';
import { createTeamRepo } from './teams/team.repo.js';
import { createUserRepo } from './users/user.repo.js';
import { createProjectRepo } from './projects/project.repo.js';
import { createInventoryRepo } from './inventories/inventory.repo.js';
import { createInventorySourceRepo } from './inventory-sources/inventory-source.repo.js';
import { createRunEventRepo } from './runs/run-event.repo.js';
import { createRunRepo } from './runs/run.repo.js';
import { createRunApprovalRepo } from './runs/run-approval.repo.js';
import { createObservationRepo } from './observation/observation.repo.js';
import { createWorkerRepo } from './workers/worker.repo.js';
import { createTemplateRepo } from './templates/template.repo.js';
import { createScheduleRepo } from './schedules/schedule.repo.js';
import { createTriggerRepo } from './triggers/trigger.repo.js';
import { createLaunchRefRepo } from './launching/launch-ref.repo.js';
import { createUserIdentityRepo } from './sso/user-identity.repo.js';
import { createSsoCodeRepo } from './sso/sso-code.repo.js';
import { createSsoStateRepo } from './sso/sso-state.repo.js';
import { createSsoAssertionRepo } from './sso/sso-assertion.repo.js';
import { createSsoTeamRepo } from './sso/sso-team.repo.js';
import { createPolicyRepo } from './policies/policy.repo.js';
import { createAiRepo } from './ai/ai.repo.js';
import { createImportRepo } from './import/import.repo.js';
import { createNotifierRepo } from './notifiers/notifier.repo.js';
import { createKnownHostRepo } from './known-hosts/known-host.repo.js';
import { createRetentionRepo } from './retention/retention.repo.js';

/** How each repository is made, bound either to the database or to one transaction. */
const REPOSITORY_FACTORIES = {
  users: createUserRepo,
  tokens: createTokenRepo,
  teams: createTeamRepo,
  grants: createGrantRepo,
  audit: createAuditRepo,
  serverKeys: createServerKeyRepo,
  secretColumns: createSecretColumnRepo,
  projects: createProjectRepo,
  credentials: createCredentialRepo,
  inventories: createInventoryRepo,
  inventorySources: createInventorySourceRepo,
  runs: createRunRepo,
  observation: createObservationRepo,
  runEvents: createRunEventRepo,
  runApprovals: createRunApprovalRepo,
  workers: createWorkerRepo,
  templates: createTemplateRepo,
  schedules: createScheduleRepo,
  triggers: createTriggerRepo,
  launchRefs: createLaunchRefRepo,
  userIdentities: createUserIdentityRepo,
  ssoCodes: createSsoCodeRepo,
  ssoStates: createSsoStateRepo,
  ssoAssertions: createSsoAssertionRepo,
  ssoTeams: createSsoTeamRepo,
  policies: createPolicyRepo,
  ai: createAiRepo,
  imports: createImportRepo,
  notifiers: createNotifierRepo,
  knownHosts: createKnownHostRepo,
  retention: createRetentionRepo,
} satisfies Record<string, (db: Kysely<Schema>, dialect: DialectName) => object>;

/** All repositories, bound either to the database or to one transaction. */
export type Repositories = {
  readonly [K in keyof typeof REPOSITORY_FACTORIES]: ReturnType<(typeof REPOSITORY_FACTORIES)[K]>;
};

/**
 * All repositories, each made when first used: a transaction touches two or three of some thirty (a run goes
 * through a dozen transactions; making all of them took 44 µs a transaction here, against 27 this way). Each is an
 * own enumerable property, so spreading the object (a test's wrapper) still sees them all.
 */
export function createRepositories(db: Kysely<Schema>, dialect: DialectName): Repositories {
  const repos = {} as Record<string, unknown>;
  for (const [name, make] of Object.entries(REPOSITORY_FACTORIES)) {
    Object.defineProperty(repos, name, {
      enumerable: true,
      configurable: true,
      get() {
        const repo = make(db, dialect);
        Object.defineProperty(repos, name, { value: repo, enumerable: true });
        return repo;
      },
    });
  }
  return repos as Repositories;
}

/** Runs `fn` in one transaction with repositories bound to it; commits when it resolves. */
export type TransactionRunner = <T>(fn: (repos: Repositories) => Promise<T>) => Promise<T>;

export interface Database {
  readonly dialect: DialectName;
  readonly repos: Repositories;
  readonly transaction: TransactionRunner;
  migrate(): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Escape hatch for tests and tooling inside packages/db's own helpers. */
  readonly kysely: Kysely<Schema>;
}

/** How many times a SQLite migrator waits out busy_timeout (10 s) for another process's migration: up to an hour. */
const SQLITE_MIGRATION_LOCK_ATTEMPTS = 360;

/**
 * Applies pending migrations; answers their names. Several processes may start at once (API replicas, `baton
 * migrate` beside `baton serve`): exactly one applies each migration while the others wait, then find nothing to
 * do. On PostgreSQL Kysely's migrator holds `pg_advisory_lock` and one transaction around the whole run. On
 * SQLite it takes no lock and no transaction (two processes would both create the first table), so the whole run
 * happens inside one BEGIN IMMEDIATE: the file's write lock, and all or nothing.
 */
async function migrateToLatest(kysely: Kysely<Schema>, dialect: DialectName): Promise<string[]> {
  const migrator = new Migrator({ db: kysely, provider: migrationProvider });
  const run = async () => {
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  if (dialect === 'postgres') return run();
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`begin immediate`.execute(kysely);
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= SQLITE_MIGRATION_LOCK_ATTEMPTS) throw err;
    }
  }
  try {
    const applied = await run();
    await sql`commit`.execute(kysely);
    return applied;
  } catch (err) {
    // SQLite may have rolled back already (some errors end the transaction): the migration's error is what counts.
    await sql`rollback`.execute(kysely).catch(() => {});
    throw err;
  }
}

export function openDatabase(target: DatabaseTarget | string, opts: DatabaseOptions = {}): Database {
  const resolved = typeof target === 'string' ? parseDatabaseUrl(target) : target;
  const kysely = openKysely(resolved, opts);
  return {
    dialect: resolved.dialect,
    kysely,
    repos: createRepositories(kysely, resolved.dialect),
    transaction: (fn) => kysely.transaction().execute((trx) => fn(createRepositories(trx, resolved.dialect))),
    migrate: () => migrateToLatest(kysely, resolved.dialect),
    async ping() {
      await sql`select 1`.execute(kysely);
    },
    async close() {
      await kysely.destroy();
    },
  };
}
