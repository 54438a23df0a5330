// Picks the adapter for the configured protocol; a fresh client per call of the factory (the settings may change).
import type { AiProviderFactory } from '@baton/core';
import { createAnthropicProvider } from './anthropic-provider.js';
import { createOpenAiProvider } from './openai-provider.js';

export const createAiProvider: AiProviderFactory = (settings) => {
  switch (settings.provider) {
    case 'openai':
      return createOpenAiProvider(settings);
    case 'anthropic':
      return createAnthropicProvider(settings);
  }
};
