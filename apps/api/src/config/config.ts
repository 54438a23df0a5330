import os from 'node:os';
import path from 'node:path';
import { keyFromEnvOrFile, parseWorkerKey, RUN_PRIORITIES, type RunPriority } from '@baton/executor';
import { z } from 'zod';
import { loadMetricsToken, MetricsConfigError } from './metrics-config.js';
import { ConnectionConfigError, type ConnectionSettings, loadConnectionSettings } from './connection-config.js';
import { AiConfigError, loadAiAskRate, loadAiProvider } from './ai-config.js';
import type { AiProviderSettings } from '@baton/core';
import { loadSamlSettings, SamlConfigError, type SamlSettings } from './saml-config.js';
import { loadSsoConfig, type OidcSettings, SsoConfigError, type SsoConfig } from './sso-config.js';

/**
 * A whole number written in decimal digits. Not `z.coerce.number()`: Number() reads " " as 0 (a random
 * port), "0x1F90" as 8080 and "1e3" as 1000, so a typo would start Baton somewhere unexpected.
 */
const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]+$/, 'must be a whole number in decimal digits')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
const port = wholeNumber(0, 65535);
const positiveInt = wholeNumber(1, Number.MAX_SAFE_INTEGER);
/** Up to a day, as `baton worker` takes it: a longer timer would overflow setTimeout and fire at once. */
const graceSeconds = wholeNumber(1, 86_400);

/** Every environment variable Baton reads, with its default. */
const Env = z.object({
  BATON_PORT: port.default(8080),
  BATON_HOST: z.string().min(1).default('127.0.0.1'),
  BATON_DATA_DIR: z.string().min(1).default('./data'),
  BATON_DATABASE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must start with postgres://, postgresql:// or sqlite:')
    // "sqlite:" alone would open an anonymous temporary database: everything lost at exit.
    .refine((u) => !/^sqlite:(\/\/)?\s*$/.test(u), 'sqlite: needs a file path, e.g. sqlite:/var/lib/baton/baton.db')
    .optional(),
  BATON_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  BATON_MASTER_KEY: z.string().min(1).optional(),
  BATON_WORKER_KEY: z.string().min(1).optional(),
  // Read by keyFromEnvOrFile below; listed so the schema knows them.
  BATON_MASTER_KEY_FILE: z.string().min(1).optional(),
  BATON_WORKER_KEY_FILE: z.string().min(1).optional(),
  BATON_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1–64 letters, digits, `_`, `.` or `-`')
    .default('baton'),
  BATON_ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),
  BATON_TOKEN_TTL_SECONDS: positiveInt.default(12 * 3600),
  BATON_BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  BATON_LOG_LEVEL: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
  BATON_TRUST_PROXY: z.enum(['true', 'false']).default('false'),
  BATON_NOTIFY_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  BATON_FETCH_DENY_PRIVATE: z.enum(['true', 'false']).default('false'),
  BATON_AUDIT_SIGNING_KEY_FILE: z.string().min(1).optional(),
  BATON_UI_DIR: z.string().min(1).optional(),
  BATON_SHUTDOWN_GRACE_SECONDS: graceSeconds.default(10),
  // Default: 2 in embedded mode, none in queue mode (worker daemons run the playbooks there).
  BATON_EXECUTORS: wholeNumber(0, 256).optional(),
  BATON_WORK_DIR: z.string().min(1).optional(),
  BATON_SANDBOX: z.enum(['auto', 'bwrap', 'off']).default('auto'),
  BATON_RUN_PRIORITY: z.enum(RUN_PRIORITIES).default('idle'),
  BATON_RUN_PRELOAD: z.enum(['true', 'false']).default('true'),
  BATON_RUN_GRACE_SECONDS: graceSeconds.default(60),
  // 0: the executor process stays while the server runs.
  BATON_EXECUTOR_IDLE_SECONDS: wholeNumber(0, 86_400).default(60),
  // Mebibytes of output a run's log keeps. At most 2047: the log's byte count is a 32-bit column in PostgreSQL.
  BATON_RUN_OUTPUT_LIMIT_MB: wholeNumber(1, 2047).default(100),
  // Unset: runs keep their log and events forever. Up to a century: a larger cut-off date is not representable.
  BATON_RETENTION_DAYS: wholeNumber(1, 36_500).optional(),
  BATON_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL, e.g. https://baton.example.com' })
    .refine((u) => !/[?#]/.test(u), 'must not carry a query or fragment')
    .optional(),
});

/** A host as it stands in a URL: an IPv6 address in brackets. */
function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export interface Config {
  port: number;
  host: string;
  /** BATON_PUBLIC_URL, without a trailing slash */
  publicUrl: string;
  dataDir: string;
  databaseUrl: string;
  /** BATON_DATABASE_POOL (connection-config.ts) */
  databasePool: number;
  /** BATON_DATABASE_CA_FILE (connection-config.ts) */
  databaseCaFile?: string | undefined;
  /** Redis as one connection string (connection-config.ts: URL, Sentinels, CA); set = queue mode */
  redisUrl?: string | undefined;
  masterKey?: string | undefined;
  workerKey?: string | undefined;
  /** queue mode: every Redis key starts with `<prefix>:` */
  queuePrefix: string;
  adminPassword?: string | undefined;
  tokenTtlSeconds: number;
  bodyLimitBytes: number;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  trustProxy: boolean;
  /** BATON_NOTIFY_ALLOW_PRIVATE: notifications may reach private and loopback addresses (default: refused) */
  notifyAllowPrivate: boolean;
  /** BATON_FETCH_DENY_PRIVATE: git, inventory URLs and Galaxy servers may not reach loopback or private addresses */
  fetchDenyPrivate: boolean;
  auditSigningKeyFile?: string | undefined;
  uiDir?: string | undefined;
  shutdownGraceSeconds: number;
  /** in-process executors of `baton serve` (embedded mode); 0 runs none */
  executors: number;
  /** parent of the private run directories */
  workDir: string;
  sandbox: 'auto' | 'bwrap' | 'off';
  /** BATON_RUN_PRIORITY: the CPU priority of ansible-playbook and ansible-galaxy */
  runPriority: RunPriority;
  /** BATON_RUN_PRELOAD: ansible-playbook runs in a Python that loaded ansible's libraries before the run came */
  runPreload: boolean;
  /** on shutdown, how long running runs may go on before they are canceled */
  runGraceSeconds: number;
  /** embedded mode: the executor process exits after this many seconds without a run (0: it stays) */
  executorIdleSeconds: number;
  /** BATON_RUN_OUTPUT_LIMIT_MB in bytes: past it a run's log is cut with a notice and events keep only metadata */
  runOutputLimitBytes: number;
  /** BATON_RETENTION_DAYS: finished runs older than this lose their log and events; undefined: kept forever */
  retentionDays?: number | undefined;
  /** SAML sign-in (saml-config.ts); undefined when no BATON_SAML_* variable is set */
  saml?: SamlSettings | undefined;
  /** OpenID Connect sign-in (sso-config.ts); undefined when no BATON_OIDC_* variable is set */
  oidc?: OidcSettings | undefined;
  /** single sign-on role mapping and team sync, shared by OIDC and SAML (BATON_SSO_*) */
  sso: SsoConfig;
  /** BATON_METRICS_TOKEN(_FILE) (metrics-config.ts): the bearer token GET /metrics wants; undefined: open */
  metricsToken?: string | undefined;
  /** BATON_AI_* (ai-config.ts): the AI provider the environment configures; undefined: PUT /v1/settings/ai decides */
  aiProvider?: AiProviderSettings | undefined;
  /** BATON_AI_ASK_RATE: AI questions per user per minute */
  aiAskRate: number;
}

export class ConfigError extends Error {}

/** Reads and checks the environment; a bad value stops the start with a message naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present: Record<string, string | undefined> = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => k.startsWith('BATON_') && v !== ''),
  );
  // The keys may come from files (read once, here): from then on they are handled as if set inline.
  for (const name of ['BATON_MASTER_KEY', 'BATON_WORKER_KEY']) {
    const found = keyFromEnvOrFile(env, name);
    if ('problem' in found) throw new ConfigError(`invalid configuration:\n  ${found.problem}`);
    present[name] = found.key;
  }
  const parsed = Env.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.BATON_DATA_DIR);
  const databaseUrl = e.BATON_DATABASE_URL ?? `sqlite:${path.join(dataDir, 'baton.db')}`;
  let connection: ConnectionSettings;
  try {
    connection = loadConnectionSettings(present, databaseUrl);
  } catch (err) {
    if (err instanceof ConnectionConfigError) throw new ConfigError(`invalid configuration:\n  ${err.message}`);
    throw err;
  }
  if (connection.redisUrl) {
    // Queue mode seals every job's bundle under the worker key: without it no worker could run anything.
    if (!e.BATON_WORKER_KEY)
      throw new ConfigError(
        "invalid configuration:\n  BATON_WORKER_KEY: must be set in queue mode (BATON_REDIS_URL or BATON_REDIS_SENTINELS is set); the same key as the workers'",
      );
    try {
      parseWorkerKey(e.BATON_WORKER_KEY);
    } catch (err) {
      throw new ConfigError(`invalid configuration:\n  BATON_WORKER_KEY: ${(err as Error).message}`);
    }
  }
  const publicUrl = (e.BATON_PUBLIC_URL ?? `http://${hostForUrl(e.BATON_HOST)}:${e.BATON_PORT}`).replace(/\/+$/, '');
  let sso: ReturnType<typeof loadSsoConfig>;
  try {
    sso = loadSsoConfig(present, publicUrl);
  } catch (err) {
    if (err instanceof SsoConfigError) throw new ConfigError(`invalid configuration:\n  ${err.message}`);
    throw err;
  }
  let metricsToken: string | undefined;
  try {
    metricsToken = loadMetricsToken(present);
  } catch (err) {
    if (err instanceof MetricsConfigError) throw new ConfigError(`invalid configuration:\n  ${err.message}`);
    throw err;
  }
  let aiProvider: AiProviderSettings | undefined;
  let aiAskRate: number;
  try {
    aiProvider = loadAiProvider(present);
    aiAskRate = loadAiAskRate(present);
  } catch (err) {
    if (err instanceof AiConfigError) throw new ConfigError(`invalid configuration:\n  ${err.message}`);
    throw err;
  }
  let saml: SamlSettings | undefined;
  try {
    saml = loadSamlSettings(present, publicUrl, sso.sso.roleClaim);
  } catch (err) {
    if (err instanceof SamlConfigError) throw new ConfigError(`invalid configuration:\n  ${err.message}`);
    throw err;
  }
  return {
    port: e.BATON_PORT,
    host: e.BATON_HOST,
    dataDir,
    databaseUrl,
    databasePool: connection.databasePool,
    databaseCaFile: connection.databaseCaFile,
    redisUrl: connection.redisUrl,
    masterKey: e.BATON_MASTER_KEY,
    workerKey: e.BATON_WORKER_KEY,
    queuePrefix: e.BATON_QUEUE_PREFIX,
    adminPassword: e.BATON_ADMIN_PASSWORD,
    tokenTtlSeconds: e.BATON_TOKEN_TTL_SECONDS,
    bodyLimitBytes: e.BATON_BODY_LIMIT_BYTES,
    logLevel: e.BATON_LOG_LEVEL,
    trustProxy: e.BATON_TRUST_PROXY === 'true',
    notifyAllowPrivate: e.BATON_NOTIFY_ALLOW_PRIVATE === 'true',
    fetchDenyPrivate: e.BATON_FETCH_DENY_PRIVATE === 'true',
    auditSigningKeyFile: e.BATON_AUDIT_SIGNING_KEY_FILE,
    uiDir: e.BATON_UI_DIR,
    shutdownGraceSeconds: e.BATON_SHUTDOWN_GRACE_SECONDS,
    executors: e.BATON_EXECUTORS ?? (connection.redisUrl ? 0 : 2),
    workDir: path.resolve(e.BATON_WORK_DIR ?? os.tmpdir()),
    sandbox: e.BATON_SANDBOX,
    runPriority: e.BATON_RUN_PRIORITY,
    runPreload: e.BATON_RUN_PRELOAD === 'true',
    runGraceSeconds: e.BATON_RUN_GRACE_SECONDS,
    executorIdleSeconds: e.BATON_EXECUTOR_IDLE_SECONDS,
    runOutputLimitBytes: e.BATON_RUN_OUTPUT_LIMIT_MB * 1024 * 1024,
    retentionDays: e.BATON_RETENTION_DAYS,
    // Where users and forges reach Baton (webhook URLs, later sign-in callbacks and links); no trailing slash.
    publicUrl,
    saml,
    oidc: sso.oidc,
    sso: sso.sso,
    metricsToken,
    aiProvider,
    aiAskRate,
  };
}
