// Picks the adapter for the configured protocol; a fresh client per call of the factory (the settings may change).
import type { AiProvider, AiProviderFactory } from '@baton/core';

/**
 * The adapter, and its SDK, load at the provider's first call rather than when the server starts: most servers
 * never call one, and the two SDKs are among the largest modules the server would load (start-up time and memory).
 */
export const createAiProvider: AiProviderFactory = (settings) => {
  let adapter: Promise<AiProvider> | undefined;
  const load = (): Promise<AiProvider> => {
    switch (settings.provider) {
      case 'openai':
        return import('./openai-provider.js').then((m) => m.createOpenAiProvider(settings));
      case 'anthropic':
        return import('./anthropic-provider.js').then((m) => m.createAnthropicProvider(settings));
    }
  };
  return { complete: async (request) => (await (adapter ??= load())).complete(request) };
};
