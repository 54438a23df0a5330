// Which AI provider is in force: BATON_AI_* from the environment when set (then the stored settings cannot be changed
// over HTTP: 409), else what an admin stored through PUT /v1/settings/ai, the key sealed under the master key.
import {
  type AiSettings,
  type AiStatus,
  DEFAULT_AI_MAX_OUTPUT_TOKENS,
  DEFAULT_AI_TIMEOUT_S,
  type PutAiSettingsBody,
} from '@baton/contracts';
import type { AiRepo, AiSettingsRow, TransactionRunner } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, NotFoundError } from '../common/errors.js';
import type { Keyring } from '../crypto/secret-box.js';
import type { AiProviderSettings } from './ai-provider.js';

export interface AiSettingsDeps {
  ai: Pick<AiRepo, 'settings'>;
  transaction: TransactionRunner;
  authz: Pick<Authorizer, 'requireAdmin'>;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  clock: Clock;
  /** BATON_AI_* when the environment configures a provider */
  environment?: AiProviderSettings | undefined;
}

const ENV_OWNS = 'the AI provider is configured by the environment (BATON_AI_*): change it there';

export function createAiSettingsService(deps: AiSettingsDeps) {
  const fromRow = (row: AiSettingsRow): AiProviderSettings => ({
    provider: row.provider as AiProviderSettings['provider'],
    baseUrl: row.base_url,
    model: row.model,
    apiKey: row.api_key_enc === null ? undefined : deps.keyring.decrypt(row.api_key_enc).toString('utf8'),
    timeoutMs: row.timeout_s * 1000,
    maxOutputTokens: row.max_output_tokens,
  });

  function view(row: AiSettingsRow | undefined): AiSettings {
    const env = deps.environment;
    if (env)
      return {
        configured: true,
        source: 'environment',
        provider: env.provider,
        base_url: env.baseUrl,
        model: env.model,
        api_key_set: env.apiKey !== undefined,
        timeout_s: Math.round(env.timeoutMs / 1000),
        max_output_tokens: env.maxOutputTokens,
        updated_at: null,
        updated_by: null,
      };
    return {
      configured: row !== undefined,
      source: row ? 'settings' : null,
      provider: (row?.provider as AiSettings['provider']) ?? null,
      base_url: row?.base_url ?? null,
      model: row?.model ?? null,
      api_key_set: (row?.api_key_enc ?? null) !== null,
      timeout_s: row?.timeout_s ?? DEFAULT_AI_TIMEOUT_S,
      max_output_tokens: row?.max_output_tokens ?? DEFAULT_AI_MAX_OUTPUT_TOKENS,
      updated_at: row?.updated_at ?? null,
      updated_by: row?.updated_by ?? null,
    };
  }

  return {
    /** The settings in force, the key opened; undefined when no provider is configured. */
    async current(): Promise<AiProviderSettings | undefined> {
      if (deps.environment) return deps.environment;
      const row = await deps.ai.settings();
      return row && fromRow(row);
    },

    async status(): Promise<AiStatus> {
      return { configured: deps.environment !== undefined || (await deps.ai.settings()) !== undefined };
    },

    async get(p: Principal): Promise<AiSettings> {
      deps.authz.requireAdmin(p);
      return view(deps.environment ? undefined : await deps.ai.settings());
    },

    async put(p: Principal, body: PutAiSettingsBody): Promise<AiSettings> {
      deps.authz.requireAdmin(p);
      if (deps.environment) throw new ConflictError(ENV_OWNS);
      const row = await deps.transaction(async (r) => {
        const before = await r.ai.settings();
        // A key is kept across edits unless a new one is given; a new base URL without a key keeps none, so a key
        // meant for one server is never sent to another.
        const keepKey = body.api_key === undefined && before !== undefined && before.base_url === body.base_url;
        const next: AiSettingsRow = {
          provider: body.provider,
          base_url: body.base_url,
          model: body.model,
          api_key_enc:
            body.api_key !== undefined ? deps.keyring.encrypt(body.api_key) : keepKey ? before.api_key_enc : null,
          timeout_s: body.timeout_s ?? before?.timeout_s ?? DEFAULT_AI_TIMEOUT_S,
          max_output_tokens: body.max_output_tokens ?? before?.max_output_tokens ?? DEFAULT_AI_MAX_OUTPUT_TOKENS,
          updated_by: p.id,
          updated_at: iso(deps.clock()),
        };
        await r.ai.putSettings(next);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'ai.settings.update',
            object: null,
            summary: `set the AI provider to ${next.provider} at ${next.base_url}, model ${next.model} (${next.api_key_enc ? (body.api_key !== undefined ? 'new key' : 'key kept') : 'no key'})`,
          },
          deps.clock,
        );
        return next;
      });
      return view(row);
    },

    async remove(p: Principal): Promise<void> {
      deps.authz.requireAdmin(p);
      if (deps.environment) throw new ConflictError(ENV_OWNS);
      await deps.transaction(async (r) => {
        if (!(await r.ai.deleteSettings())) throw new NotFoundError('no AI provider settings are stored');
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'ai.settings.delete', object: null, summary: 'removed the AI provider settings' },
          deps.clock,
        );
      });
    },
  };
}
export type AiSettingsService = ReturnType<typeof createAiSettingsService>;
