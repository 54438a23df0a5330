// The AI provider seam: one structured completion. Implementations (apps/api/src/ai/providers) speak the OpenAI
// chat-completions protocol (JSON schema response format) or the Anthropic messages protocol (one forced tool), both
// streamed, and throw AiProviderError for every failure: down, slow, an error status, or an answer that is not JSON.
import type { AiProviderName } from '@baton/contracts';

/** What asks for a completion: an endpoint of the AI helpers (a label of the usage metrics, a word of the audit). */
export type AiPurpose = 'explain' | 'draft' | 'ask' | 'propose';

/** The provider settings in force (BATON_AI_* or the stored settings), the key opened. */
export interface AiProviderSettings {
  provider: AiProviderName;
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
  maxOutputTokens: number;
}

export interface AiCompletionRequest {
  purpose: AiPurpose;
  /** the instructions: Baton's own words only */
  system: string;
  /** the material: untrusted text fenced as data (ai-prompt.ts) */
  user: string;
  /** the JSON object the answer must be: a name and a JSON Schema (type object) */
  answer: { name: string; description: string; schema: Record<string, unknown> };
}

export interface AiCompletion {
  /** the answer, parsed from JSON, not yet checked against the schema (the caller does that) */
  value: unknown;
  /** the model that answered, as the provider named it */
  model: string;
  usage: { inputTokens: number; outputTokens: number };
}

export interface AiProvider {
  /** Rejects with AiProviderError; never waits past the settings' timeout. */
  complete(request: AiCompletionRequest): Promise<AiCompletion>;
}

/** Builds the provider for the settings in force (a fresh client per settings: an admin may change them). */
export type AiProviderFactory = (settings: AiProviderSettings) => AiProvider;
