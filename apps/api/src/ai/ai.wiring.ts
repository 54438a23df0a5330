import {
  type AiProviderSettings,
  type Authorizer,
  type Clock,
  createAiService,
  createAiSettingsService,
  type CredentialService,
  type DriftService,
  type FleetService,
  type InventoryService,
  type Keyring,
  openSealedJson,
  type ProjectService,
  type RunAccess,
  type RunOutputService,
  type RunService,
  type TaskTrendService,
} from '@baton/core';
import type { Database, RunRow } from '@baton/db';
import { createInProcessRateLimiter } from '@baton/queue';
import type { createRedisRateLimiter } from '@baton/queue/redis';
import { createAiMetrics } from '../system/ai-metrics.js';
import { createAiProvider } from './providers/provider-factory.js';
import { checkScript } from './script-check.js';

/** Credential inputs that hold secrets (credential.schemas.ts marks them `secret`); `variables` are all secret. */
const SECRET_INPUTS = ['private_key', 'passphrase', 'password', 'token'];

export interface AiWiringDeps {
  authz: Pick<Authorizer, 'requireAdmin' | 'requireCreator'>;
  clock: Clock;
  keyring: Keyring;
  credentials: Pick<CredentialService, 'reveal'>;
  projects: Pick<ProjectService, 'list'>;
  inventories: Pick<InventoryService, 'list'>;
  runs: Pick<RunService, 'list' | 'submit'>;
  runAccess: Pick<RunAccess, 'visibleRun'>;
  runOutput: Pick<RunOutputService, 'logLines'>;
  fleet: Pick<FleetService, 'fleet'>;
  drift: Pick<DriftService, 'drift'>;
  taskTrends: Pick<TaskTrendService, 'tasks'>;
  /** BATON_AI_*: the provider the environment configures */
  environment?: AiProviderSettings | undefined;
  /** BATON_AI_ASK_RATE (per user per minute) */
  askRate: number;
  /** queue mode: the ask limit is counted in Redis, across replicas (the factory comes from @baton/queue/redis) */
  redis?: { redisUrl: string; prefix: string; createRedisRateLimiter: typeof createRedisRateLimiter } | undefined;
}

/** The AI helpers and their settings, over the services whose grants they reuse. */
export function createAiServices(db: Pick<Database, 'repos' | 'transaction'>, deps: AiWiringDeps) {
  const { repos } = db;
  const aiSettings = createAiSettingsService({
    ai: repos.ai,
    transaction: db.transaction,
    authz: deps.authz,
    keyring: deps.keyring,
    clock: deps.clock,
    environment: deps.environment,
  });
  const limits = { perWindow: deps.askRate, windowSeconds: 60 };
  const askLimiter = deps.redis
    ? deps.redis.createRedisRateLimiter({
        redisUrl: deps.redis.redisUrl,
        prefix: deps.redis.prefix,
        name: 'ai-ask',
        limits,
        clock: deps.clock,
      })
    : createInProcessRateLimiter({ limits, clock: deps.clock });
  const aiMetrics = createAiMetrics();

  /** Every secret value a run was given: to be redacted from anything about it sent to the provider. */
  async function secretsOf(run: RunRow): Promise<string[]> {
    const out: string[] = [];
    const settings = await aiSettings.current();
    if (settings?.apiKey) out.push(settings.apiKey);
    for (const id of run.credential_ids) {
      const revealed = await deps.credentials.reveal(id).catch(() => undefined);
      if (!revealed) continue;
      const inputs = revealed.inputs as Record<string, unknown>;
      for (const [name, value] of Object.entries(inputs)) {
        if (SECRET_INPUTS.includes(name) && typeof value === 'string') out.push(value);
        if (name === 'variables' && value && typeof value === 'object')
          out.push(...Object.values(value).filter((v): v is string => typeof v === 'string'));
      }
    }
    if (run.secret_vars_enc !== null)
      out.push(...Object.values(openSealedJson<Record<string, string>>(deps.keyring, run.secret_vars_enc)));
    if (run.trigger_id !== null) {
      const trigger = await repos.triggers.findById(run.trigger_id);
      if (trigger) out.push(trigger.token, deps.keyring.decrypt(trigger.secret_enc).toString('utf8'));
    }
    return out;
  }

  const ai = createAiService({
    call: {
      settings: aiSettings,
      providerFor: createAiProvider,
      transaction: db.transaction,
      clock: deps.clock,
      onUsage: aiMetrics.onUsage,
    },
    explain: {
      access: deps.runAccess,
      runs: repos.runs,
      runEvents: repos.runEvents,
      output: deps.runOutput,
      ai: repos.ai,
      secretsOf,
      clock: deps.clock,
    },
    draft: { authz: deps.authz, checkScript },
    ask: {
      rateLimit: askLimiter,
      runs: deps.runs,
      fleet: deps.fleet,
      drift: deps.drift,
      tasks: deps.taskTrends,
    },
    propose: {
      authz: deps.authz,
      access: deps.runAccess,
      projects: deps.projects,
      inventories: deps.inventories,
      runs: deps.runs,
      ai: repos.ai,
      clock: deps.clock,
    },
  });
  return { ai, aiSettings, aiMetrics, closeAi: () => askLimiter.close() };
}
