// Test harness: the real app on a real database of the given dialect, with helpers to sign in as each role.
import { expect } from '@jest/globals';
import type { Role, Run } from '@baton/contracts';
import {
  type AiProviderSettings,
  type Clock,
  DEFAULT_THROTTLE,
  Keyring,
  generateMasterKey,
  systemClock,
  type SsoSettings,
  type ThrottleLimits,
} from '@baton/core';
import { createTestDatabase, type TestDatabase } from '@baton/db/testing';
import type { DialectName } from '@baton/db';
import type { Express } from 'express';
import supertest from 'supertest';
import { DEFAULT_LEASE_MS } from '@baton/queue';
import { createApp } from '../app.js';
import { databaseGauges } from '../system/metrics.js';
import { type EmbeddedMode, startEmbeddedMode } from '../runs/embedded-mode.js';
import { loadQueueRedis, type QueueModeSettings } from '../runs/run.wiring.js';
import type { Operation } from '../http/registry.js';
import { createLogger } from '../logger.js';
import { createServices, loadSaml, type ServiceOptions, type Services } from '../wiring.js';
import type { SamlSettings } from '../config/saml-config.js';
import type { OidcSettings } from '../config/sso-config.js';

export interface Harness {
  http: ReturnType<typeof supertest>;
  /** The Express app itself, e.g. to listen on a real port. */
  app: Express;
  /** Every operation the app registered (the source of the OpenAPI document). */
  operations: Operation[];
  tdb: TestDatabase;
  services: Services;
  keyring: Keyring;
  /** Creates a user with this role and signs them in. */
  user(role: Role, username?: string): Promise<{ id: string; username: string; password: string; token: string }>;
  admin: { id: string; token: string };
  /** the embedded executors, when `executors` was given */
  embedded?: EmbeddedMode | undefined;
  close(): Promise<void>;
}

/** Embedded executors for a test: how many runs at once, and optionally a short lease and short cancel grace periods. */
export interface EmbeddedExecutorsOption {
  count: number;
  leaseMs?: number;
  interruptGraceMs?: number;
  terminateGraceMs?: number;
  /** where Galaxy requirements are cached (a test's own directory); unset: installed for each run */
  requirementsCache?: string;
}

let counter = 0;
export const PASSWORD = 'correct horse battery staple';
const TEST_PASSWORD_HASH_PARAMS = { N: 2 ** 10, r: 8, p: 1 };

export async function createHarness(
  dialect: DialectName,
  opts: {
    throttle?: ThrottleLimits;
    clock?: Clock;
    bodyLimitBytes?: number;
    uiDir?: string;
    trustProxy?: boolean;
    logStream?: NodeJS.WritableStream;
    inventoryUrlCa?: string;
    executors?: EmbeddedExecutorsOption;
    /** queue mode's settings; the Redis implementations are loaded here */
    queueMode?: Omit<QueueModeSettings, 'redis'>;
    /** SAML sign-in settings (sso/saml.routes.test.ts) */
    saml?: SamlSettings;
    /** single sign-on role map, team sync and code lifetime (both protocols) */
    sso?: SsoSettings;
    /** OpenID Connect sign-in settings (sso/oidc.routes.test.ts) */
    oidc?: OidcSettings;
    /** BATON_METRICS_TOKEN (system/metrics.routes.test.ts) */
    metricsToken?: string;
    /** the AI helpers: BATON_AI_* and BATON_AI_ASK_RATE (ai/ai.routes.test.ts) */
    ai?: { environment?: AiProviderSettings; askRate?: number };
    /** notifications: allow private addresses (local receivers), or a transport of the test's own */
    notify?: ServiceOptions['notify'];
    /** BATON_FETCH_DENY_PRIVATE */
    fetchDenyPrivate?: boolean;
    /** BATON_RUN_OUTPUT_LIMIT_MB, in bytes so a test can make it small: for the ingester and the executors */
    outputLimitBytes?: number;
  } = {},
): Promise<Harness> {
  const tdb = await createTestDatabase(dialect);
  const keyring = new Keyring(generateMasterKey());
  const services = createServices(tdb.db, {
    keyring,
    clock: opts.clock ?? systemClock,
    tokenTtlSeconds: 3600,
    inventoryUrlCa: opts.inventoryUrlCa,
    throttle: opts.throttle ?? { ...DEFAULT_THROTTLE, perAddress: 1000 },
    leaseMs: opts.executors?.leaseMs,
    queueMode: opts.queueMode && { ...opts.queueMode, redis: await loadQueueRedis() },
    saml: opts.saml && { settings: opts.saml, module: await loadSaml() },
    sso: opts.sso,
    oidc: opts.oidc,
    ai: opts.ai,
    notify: opts.notify ?? { allowPrivate: true },
    fetchDenyPrivate: opts.fetchDenyPrivate,
    runOutputLimitBytes: opts.outputLimitBytes,
    // Test users' passwords at a thirty-second of scrypt's cost: every harness signs several users in, and at the real
    // cost (crypto/password.ts, what `baton serve` and the CLI use) their hashing was a few percent of the suite's CPU.
    passwordHashParams: TEST_PASSWORD_HASH_PARAMS,
  });
  const { app, operations } = createApp({
    services,
    ping: () => tdb.db.ping(),
    gauges: databaseGauges(tdb.db),
    logger: opts.logStream
      ? createLogger('debug', { stream: opts.logStream })
      : createLogger('error', { silent: true }),
    bodyLimitBytes: opts.bodyLimitBytes ?? 1024 * 1024,
    trustProxy: opts.trustProxy ?? false,
    uiDir: opts.uiDir,
    metricsToken: opts.metricsToken,
  });
  const http = supertest(app);

  async function user(role: Role, username = `${role}${++counter}_${Date.now().toString(36)}`) {
    const created = await services.users.createAs('system', { username, password: PASSWORD, role });
    const res = await http.post('/v1/auth/login').send({ username, password: PASSWORD });
    // Queue mode with Redis away: sign-in is a 503 (its throttle is in Redis), yet such tests still need callers.
    if (res.status === 503 && opts.queueMode) {
      const issued = await services.auth.issueToken(created.id, 'password', 'test harness');
      return { id: created.id, username, password: PASSWORD, token: issued.token };
    }
    if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`);
    return { id: created.id, username, password: PASSWORD, token: res.body.token as string };
  }

  const admin = await user('admin', 'root');
  // The executors of embedded mode, when a test asks for them: the same start-up path as `baton serve`.
  const embedded = opts.executors
    ? await startEmbeddedMode(services, {
        executors: opts.executors.count,
        // Normal CPU priority, as cleanEnv in test/support gives servers: beside other test files, SCHED_IDLE starves.
        sandbox: { mode: 'off', hidden: [], priority: 'normal' },
        logger: createLogger('error', { silent: true }),
        leaseMs: opts.executors.leaseMs ?? DEFAULT_LEASE_MS,
        name: `test-${++counter}`,
        interruptGraceMs: opts.executors.interruptGraceMs,
        terminateGraceMs: opts.executors.terminateGraceMs,
        requirementsCache: opts.executors.requirementsCache,
        outputLimitBytes: opts.outputLimitBytes,
      })
    : undefined;
  const close = async () => {
    // Ends the runs seams either way: in queue mode they hold Redis connections.
    if (embedded) await embedded.stop(0);
    else await services.closeRuns();
    await tdb.drop();
  };
  return { http, app, operations, tdb, services, keyring, user, admin, embedded, close };
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Asserts a problem+json answer with this status (and, when given, a field error at this path). */
export function expectProblem(
  res: { status: number; headers: Record<string, string>; body: { errors?: unknown } },
  status: number,
  path?: string,
): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, type: expect.stringMatching(/^urn:baton:problem:/) });
  if (path !== undefined) expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

/** Polls GET /v1/runs/{id} until the run is finished; the deadline is a safety net, not a speed threshold. */
export async function runFinished(
  h: Pick<Harness, 'http'>,
  id: string,
  token: string,
  timeoutMs = 180_000,
): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = (await h.http.get(`/v1/runs/${id}`).set(bearer(token))).body as Run;
    if (run.status === 'finished') return run;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
