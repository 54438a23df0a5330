import type crypto from 'node:crypto';
import {
  type AiProviderSettings,
  createAuditService,
  createAuthService,
  createAuthorizer,
  createCredentialService,
  createGrantService,
  createKnownHostService,
  createSigningKeyStore,
  createSsoService,
  createPolicyService,
  createProjectService,
  createRetentionService,
  createTeamService,
  createTokenService,
  createUserService,
  type Clock,
  DEFAULT_SSO_SETTINGS,
  DEFAULT_THROTTLE,
  type Keyring,
  type NotifyTransport,
  type PasswordHashParams,
  type SsoSettings,
  type ThrottleLimits,
} from '@baton/core';
import { DEFAULT_AI_ASK_RATE } from '@baton/contracts';
import type { Database } from '@baton/db';
import {
  checkoutCommit,
  pruneRequirementsCache,
  readRequirementsAtCommit,
  resolveBranchHead,
  type Sandbox,
} from '@baton/executor';
import { createInProcessLoginThrottle } from '@baton/queue';
import { createInventoryServices } from './inventories/inventory.wiring.js';
import { createLaunchingServices } from './launching/launching.wiring.js';
import { createRunServices, type QueueModeSettings } from './runs/run.wiring.js';
import { createObservationServices } from './observation/observation.wiring.js';
import { createAiServices } from './ai/ai.wiring.js';
import { createImportServices } from './import/import.wiring.js';
import { createNotifierServices } from './notifiers/notifier.wiring.js';
import type { SamlSettings } from './config/saml-config.js';
import type * as SamlSignInModule from './sso/saml.js';
import type { OidcSettings } from './config/sso-config.js';
import { createOidcSignIn } from './sso/oidc.js';

/** The SAML sign-in module (node-saml, xmldom, xml-crypto): loaded by `loadSaml()` only where SAML is configured. */
export type SamlModule = typeof SamlSignInModule;
export const loadSaml = (): Promise<SamlModule> => import('./sso/saml.js');

export interface ServiceOptions {
  keyring: Keyring;
  clock: Clock;
  tokenTtlSeconds: number;
  throttle?: ThrottleLimits | undefined;
  auditSigningKey?: crypto.KeyObject | undefined;
  /** extra CA certificates (PEM) trusted when fetching url inventory sources (tests); production uses the system store */
  inventoryUrlCa?: string | undefined;
  /** where the runs domain's errors that have no caller go (the server's logger); stderr when not given */
  reportError?: ((err: unknown) => void) | undefined;
  /** where inventory scripts and plugins, and git, run (bubblewrap or not); off when not given */
  sandbox?: Sandbox | undefined;
  /** BATON_FETCH_DENY_PRIVATE: git, inventory URLs and Galaxy servers may not reach loopback or private addresses */
  fetchDenyPrivate?: boolean | undefined;
  /** lease length of the in-process run queue (tests shorten it) */
  leaseMs?: number | undefined;
  /** BATON_RUN_OUTPUT_LIMIT_MB in bytes, as the ingester holds it (default 100 MiB) */
  runOutputLimitBytes?: number | undefined;
  /** queue mode: the Redis seams instead of the in-process ones */
  queueMode?: QueueModeSettings | undefined;
  /** BATON_PUBLIC_URL (webhook URLs); default http://127.0.0.1:8080 */
  publicUrl?: string | undefined;
  /** single sign-on: role map, team sync, code lifetime (defaults: no mapping, no sync, 60 s) */
  sso?: SsoSettings | undefined;
  /** the AI helpers: the provider the environment configures (BATON_AI_*) and the ask rate (default 10 a minute) */
  ai?: { environment?: AiProviderSettings | undefined; askRate?: number | undefined } | undefined;
  /** OpenID Connect sign-in (BATON_OIDC_*); its routes answer 404 without it */
  oidc?: OidcSettings | undefined;
  /**
   * SAML sign-in (BATON_SAML_*) and node-saml's module, which only a server with SAML configured loads
   * (`loadSaml()`: a few MiB an idle server need not hold); its routes answer 404 without it
   */
  saml?: { settings: SamlSettings; module: SamlModule } | undefined;
  /** the Galaxy requirements cache of this server's executors (`<data dir>/requirements`): retention prunes it too */
  requirementsCache?: string | undefined;
  /** notifications: BATON_NOTIFY_ALLOW_PRIVATE, and a transport of a test's own (the real ones by default) */
  notify?: { allowPrivate?: boolean | undefined; transport?: NotifyTransport | undefined } | undefined;
  /** scrypt's cost for users' passwords: only tests lower it (the default is OWASP's floor, see crypto/password.ts) */
  passwordHashParams?: PasswordHashParams | undefined;
}

/** The composition root of the domain layer: every service gets exactly the repositories it uses. */
export function createServices(db: Database, opts: ServiceOptions) {
  const { repos, transaction } = db;
  const clock = opts.clock;
  const authz = createAuthorizer({ grants: repos.grants, teams: repos.teams });
  const signingKeys = createSigningKeyStore({
    serverKeys: repos.serverKeys,
    keyring: opts.keyring,
    clock,
    configured: opts.auditSigningKey,
  });
  const users = createUserService({
    users: repos.users,
    transaction,
    authz,
    clock,
    passwordHashParams: opts.passwordHashParams,
  });
  // "What still references this?" for the 409 on delete. Each referencing domain adds its lookup here
  // (templates, schedules and triggers through launch_refs, which each of them keeps current).
  const tagged = (kind: string, rows: Array<{ id: string; name: string }>) => rows.map((r) => ({ kind, ...r }));
  const credentials = createCredentialService({
    credentials: repos.credentials,
    transaction,
    authz,
    keyring: opts.keyring,
    clock,
    usedBy: async (id) => [
      ...tagged('project', await repos.projects.usingCredential(id)),
      ...tagged('inventory source', await repos.inventorySources.usingCredential(id)),
      ...(await repos.launchRefs.ownersOf(id)),
    ],
  });
  // Every git operation of the server: in the sandbox, and to the destinations BATON_FETCH_DENY_PRIVATE allows.
  const fetchPolicy = { denyPrivate: opts.fetchDenyPrivate ?? false };
  const gitIsolation = { sandbox: opts.sandbox, fetchPolicy };
  const projects = createProjectService({
    projects: repos.projects,
    knownHosts: repos.knownHosts,
    transaction,
    authz,
    clock,
    credentials,
    git: {
      resolveBranchHead: (t) => resolveBranchHead({ ...t, ...gitIsolation }),
      readRequirements: (spec) => readRequirementsAtCommit({ ...spec, ...gitIsolation }),
    },
    usedBy: async (id) => [
      ...tagged('inventory source', await repos.inventorySources.usingProject(id)),
      ...(await repos.launchRefs.ownersOf(id)),
    ],
  });
  const { parseInventory, ...inventoryServices } = createInventoryServices(db, {
    authz,
    clock,
    credentials,
    urlCa: opts.inventoryUrlCa,
    sandbox: opts.sandbox,
    // A script or plugin source runs inside a fresh checkout of its project's last synced commit.
    checkout: async (p, projectId, dir) =>
      checkoutCommit({ ...(await projects.checkoutSpec(p, projectId)), dir, ...gitIsolation }),
    fetchPolicy,
  });
  const runServices = createRunServices(db, {
    authz,
    clock,
    keyring: opts.keyring,
    leaseMs: opts.leaseMs,
    credentials,
    projects,
    inventories: inventoryServices.inventories,
    sandbox: opts.sandbox,
    fetchPolicy,
    reportError: opts.reportError,
    outputLimitBytes: opts.runOutputLimitBytes,
    queueMode: opts.queueMode,
  });
  // Sign-in throttling: one count shared by every replica through Redis in queue mode, per process when embedded.
  // (Its Redis connection errors are not reported here: the run queue's connections report the same outage.)
  const limits = opts.throttle ?? DEFAULT_THROTTLE;
  const loginThrottle = opts.queueMode
    ? opts.queueMode.redis.createRedisLoginThrottle({
        redisUrl: opts.queueMode.redisUrl,
        prefix: opts.queueMode.prefix,
        limits,
        clock,
      })
    : createInProcessLoginThrottle(limits, clock);
  const launching = createLaunchingServices(db, {
    authz,
    clock,
    keyring: opts.keyring,
    runs: runServices.runs,
    runServices,
    publicUrl: opts.publicUrl ?? 'http://127.0.0.1:8080',
    reportError: opts.reportError ?? ((err) => console.error('baton: launching:', err)),
  });
  const observation = createObservationServices(db, {
    access: runServices.runAccess,
    authz,
    keyring: opts.keyring,
    submit: (p, body, ctx) => runServices.runs.submit(p, body, ctx),
  });
  const aiServices = createAiServices(db, {
    authz,
    clock,
    keyring: opts.keyring,
    credentials,
    projects,
    inventories: inventoryServices.inventories,
    runs: runServices.runs,
    runAccess: runServices.runAccess,
    runOutput: runServices.runOutput,
    ...observation,
    environment: opts.ai?.environment,
    askRate: opts.ai?.askRate ?? DEFAULT_AI_ASK_RATE,
    redis: opts.queueMode && {
      redisUrl: opts.queueMode.redisUrl,
      prefix: opts.queueMode.prefix,
      createRedisRateLimiter: opts.queueMode.redis.createRedisRateLimiter,
    },
  });
  const services = {
    authz,
    users,
    auth: createAuthService({
      users: repos.users,
      tokens: repos.tokens,
      transaction,
      clock,
      tokenTtlSeconds: opts.tokenTtlSeconds,
      throttle: loginThrottle,
    }),
    teams: createTeamService({ teams: repos.teams, transaction, authz, clock }),
    tokens: createTokenService({ tokens: repos.tokens, transaction, authz, clock }),
    grants: createGrantService({
      grants: repos.grants,
      users: repos.users,
      teams: repos.teams,
      transaction,
      authz,
      clock,
      // Each domain that owns grantable objects adds its prefix here.
      grantable: {
        team: async (id) => Boolean(await repos.teams.findById(id)),
        cred: async (id) => Boolean(await repos.credentials.findById(id)),
        prj: async (id) => Boolean(await repos.projects.findById(id)),
        inv: async (id) => Boolean(await repos.inventories.findSummary(id)),
        src: async (id) => Boolean(await repos.inventorySources.findById(id)),
        tpl: async (id) => Boolean(await repos.templates.findById(id)),
        sch: async (id) => Boolean(await repos.schedules.findById(id)),
        trg: async (id) => Boolean(await repos.triggers.findById(id)),
        ntf: async (id) => Boolean(await repos.notifiers.findById(id)),
      },
    }),
    audit: createAuditService({ audit: repos.audit, signingKeys, clock, authz }),
    policies: createPolicyService({
      policies: repos.policies,
      users: repos.users,
      teams: repos.teams,
      projects: repos.projects,
      templates: repos.templates,
      inventories: repos.inventories,
      transaction,
      authz,
      clock,
    }),
    credentials,
    projects,
    knownHosts: createKnownHostService({
      knownHosts: repos.knownHosts,
      inventories: repos.inventories,
      projects: repos.projects,
      transaction,
      authz,
      clock,
    }),
    ...inventoryServices,
    ...runServices,
    /** Ends the runs seams, the sign-in throttle and the ask limit: in queue mode each holds Redis connections. */
    async closeRuns(): Promise<void> {
      await runServices.closeRuns();
      await loginThrottle.close();
      await aiServices.closeAi();
    },
    ...launching,
    ...observation,
    ai: aiServices.ai,
    aiSettings: aiServices.aiSettings,
    imports: createImportServices(db, { authz, clock, keyring: opts.keyring, parseInventory }),
    ...createNotifierServices(db, {
      authz,
      clock,
      keyring: opts.keyring,
      runAccess: runServices.runAccess,
      publicUrl: opts.publicUrl ?? 'http://127.0.0.1:8080',
      allowPrivate: opts.notify?.allowPrivate,
      transport: opts.notify?.transport,
    }),
    aiMetrics: aiServices.aiMetrics,
    retention: createRetentionService({
      retention: repos.retention,
      transaction,
      clock,
      pruneCache: opts.requirementsCache
        ? (cutoff, dryRun) => pruneRequirementsCache(opts.requirementsCache!, cutoff, dryRun)
        : undefined,
    }),
    signingKeys,
  };
  // Single sign-on (OIDC and SAML) creates users and issues tokens through the auth service above.
  const sso = createSsoService({
    users: repos.users,
    transaction,
    auth: services.auth,
    settings: opts.sso ?? DEFAULT_SSO_SETTINGS,
    clock,
  });
  const saml = opts.saml
    ? opts.saml.module.createSamlSignIn(opts.saml.settings, {
        ssoStates: repos.ssoStates,
        ssoAssertions: repos.ssoAssertions,
        clock,
      })
    : undefined;
  const oidc = opts.oidc ? createOidcSignIn({ sso, auth: services.auth }, opts.oidc) : undefined;
  return { ...services, sso, saml, oidc };
}
export type Services = ReturnType<typeof createServices>;
