// BATON_AI_*: the AI provider configured by the environment (it then wins over PUT /v1/settings/ai), and the ask rate.
import {
  AiBaseUrl,
  AiModelName,
  AiProviderName,
  DEFAULT_AI_ASK_RATE,
  DEFAULT_AI_MAX_OUTPUT_TOKENS,
  DEFAULT_AI_TIMEOUT_S,
  MAX_AI_MAX_OUTPUT_TOKENS,
  MAX_AI_TIMEOUT_S,
} from '@baton/contracts';
import type { AiProviderSettings } from '@baton/core';
import { readSecretFile } from './secret-file.js';

/** A bad BATON_AI_* setting; the message starts with the variable's name and never holds the key. */
export class AiConfigError extends Error {}

const DEFAULT_BASE_URL: Record<AiProviderSettings['provider'], string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

function fail(variable: string, message: string): never {
  throw new AiConfigError(`${variable}: ${message}`);
}

function wholeNumber(
  env: Record<string, string | undefined>,
  name: string,
  min: number,
  max: number,
  fallback: number,
) {
  const text = env[name];
  if (!text) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    fail(name, `must be a whole number from ${min} to ${max}`);
  return Number(text);
}

function apiKey(env: Record<string, string | undefined>): string | undefined {
  const inline = env.BATON_AI_API_KEY || undefined;
  const file = env.BATON_AI_API_KEY_FILE || undefined;
  if (inline && file) fail('BATON_AI_API_KEY_FILE', 'give either BATON_AI_API_KEY or this, not both');
  let key = inline;
  if (file) {
    const read = readSecretFile(file);
    key = 'text' in read ? read.text : fail('BATON_AI_API_KEY_FILE', read.error);
  }
  if (key !== undefined && !/^[\x21-\x7e]{1,4096}$/.test(key))
    fail(file ? 'BATON_AI_API_KEY_FILE' : 'BATON_AI_API_KEY', 'the key must be visible ASCII without spaces');
  return key;
}

/** The provider the environment configures, or undefined when BATON_AI_PROVIDER is unset. */
export function loadAiProvider(env: Record<string, string | undefined>): AiProviderSettings | undefined {
  const name = env.BATON_AI_PROVIDER || undefined;
  const others = ['BATON_AI_BASE_URL', 'BATON_AI_MODEL', 'BATON_AI_API_KEY', 'BATON_AI_API_KEY_FILE'].filter(
    (v) => env[v],
  );
  if (!name) {
    if (others.length) fail(others[0]!, 'needs BATON_AI_PROVIDER (openai or anthropic)');
    return undefined;
  }
  const provider = AiProviderName.safeParse(name);
  if (!provider.success) fail('BATON_AI_PROVIDER', 'must be openai or anthropic');
  const baseUrl = AiBaseUrl.safeParse(env.BATON_AI_BASE_URL || DEFAULT_BASE_URL[provider.data]);
  if (!baseUrl.success) fail('BATON_AI_BASE_URL', baseUrl.error.issues[0]!.message);
  const model = AiModelName.safeParse(env.BATON_AI_MODEL ?? '');
  if (!model.success) fail('BATON_AI_MODEL', 'must name the model (e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1)');
  return {
    provider: provider.data,
    baseUrl: baseUrl.data,
    model: model.data,
    apiKey: apiKey(env),
    timeoutMs: wholeNumber(env, 'BATON_AI_TIMEOUT_S', 1, MAX_AI_TIMEOUT_S, DEFAULT_AI_TIMEOUT_S) * 1000,
    maxOutputTokens: wholeNumber(
      env,
      'BATON_AI_MAX_OUTPUT_TOKENS',
      64,
      MAX_AI_MAX_OUTPUT_TOKENS,
      DEFAULT_AI_MAX_OUTPUT_TOKENS,
    ),
  };
}

/** BATON_AI_ASK_RATE: questions per user per minute (default 10). */
export function loadAiAskRate(env: Record<string, string | undefined>): number {
  return wholeNumber(env, 'BATON_AI_ASK_RATE', 1, 10_000, DEFAULT_AI_ASK_RATE);
}
