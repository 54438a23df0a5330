// One call to the provider in force, for every AI helper: 503 when none is configured, a 502 for anything the provider
// does wrong, the answer checked against its schema, usage counted, and the call audited (endpoint, user, model and
// token counts; never prompt text).
import type { TransactionRunner } from '@baton/db';
import type { AnswerSchema } from '@baton/contracts';
import { recordAudit } from '../audit/audit.chain.js';
import type { Principal } from '../authz/authorize.js';
import type { Clock } from '../common/clock.js';
import { AiNotConfiguredError, AiProviderError } from '../common/errors.js';
import type { AiCompletionRequest, AiProviderFactory, AiProviderSettings, AiPurpose } from './ai-provider.js';

/** Tokens one call used, for the metrics (per endpoint and user). */
export interface AiUsage {
  purpose: AiPurpose;
  userId: string;
  inputTokens: number;
  outputTokens: number;
  /** false when the provider failed */
  ok: boolean;
}

export interface AiCallDeps {
  settings: { current(): Promise<AiProviderSettings | undefined> };
  providerFor: AiProviderFactory;
  transaction: TransactionRunner;
  clock: Clock;
  onUsage?: ((usage: AiUsage) => void) | undefined;
}

/** The model's answer checked against `schema`; a 502 when it is not that shape (the provider failed, not the caller). */
export function checkedAnswer<T>(schema: AnswerSchema<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const where = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(answer)'}: ${i.message}`)
      .join('; ');
    throw new AiProviderError(`the AI provider's answer is not the requested shape (${where})`);
  }
  return parsed.data;
}

export function createAiCaller(deps: AiCallDeps) {
  async function audit(p: Principal, purpose: AiPurpose, object: string | null, summary: string) {
    await deps.transaction((r) =>
      recordAudit(r.audit, { actor: p.id, action: `ai.${purpose}`, object, summary }, deps.clock),
    );
  }

  return {
    /** The settings in force, or the 503 every AI endpoint answers without a provider. */
    async requireConfigured(): Promise<AiProviderSettings> {
      const settings = await deps.settings.current();
      if (!settings) throw new AiNotConfiguredError();
      return settings;
    },

    /** Sends `request`; the answer checked against `schema`. `object`: what the call is about (a run id), if anything. */
    async call<T>(
      p: Principal,
      settings: AiProviderSettings,
      request: AiCompletionRequest,
      schema: AnswerSchema<T>,
      object: string | null = null,
    ): Promise<{ value: T; model: string }> {
      let completion;
      try {
        completion = await deps.providerFor(settings).complete(request);
      } catch (err) {
        const failure = err instanceof AiProviderError ? err : new AiProviderError('the AI provider call failed');
        deps.onUsage?.({ purpose: request.purpose, userId: p.id, inputTokens: 0, outputTokens: 0, ok: false });
        await audit(
          p,
          request.purpose,
          object,
          `AI ${request.purpose} with ${settings.model} failed: ${failure.message}`,
        );
        throw failure;
      }
      const { inputTokens, outputTokens } = completion.usage;
      deps.onUsage?.({ purpose: request.purpose, userId: p.id, inputTokens, outputTokens, ok: true });
      await audit(
        p,
        request.purpose,
        object,
        `AI ${request.purpose} with ${completion.model}: ${inputTokens} tokens in, ${outputTokens} out`,
      );
      return { value: checkedAnswer(schema, completion.value), model: completion.model };
    },
  };
}
export type AiCaller = ReturnType<typeof createAiCaller>;
