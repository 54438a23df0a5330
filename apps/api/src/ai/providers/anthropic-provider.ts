// The AI provider over Anthropic's messages protocol. The answer's JSON schema becomes one tool the model is forced
// to call; the tool call's input, streamed as partial JSON, is the answer. `baseUrl` excludes `/v1`.
import type { AiCompletion, AiCompletionRequest, AiProvider, AiProviderSettings } from '@baton/core';
import Anthropic from '@anthropic-ai/sdk';
import { overBudget, parseJsonObject, withDeadline } from './provider-call.js';

export function createAnthropicProvider(settings: AiProviderSettings): AiProvider {
  const apiKey = settings.apiKey ?? 'unused';
  const client = new Anthropic({
    baseURL: settings.baseUrl,
    // An explicit key also stops the SDK from looking for credentials in the environment or its config files.
    apiKey,
    // SDK 1.x sends the key as `Authorization: Bearer`; Anthropic-compatible gateways may still read only the
    // historical `x-api-key` header, so the key goes in both (to the same server).
    defaultHeaders: { 'x-api-key': apiKey },
    // One attempt: the caller decides about trying again, and a retry would double the spend.
    maxRetries: 0,
    // Only a backstop: our own deadline (withDeadline) spans the whole call and fires first, so a timeout reads the
    // same whatever the server did (the SDK's timer stops at the response headers).
    timeout: settings.timeoutMs + 1_000,
  });

  return {
    complete: (request) =>
      withDeadline(settings.timeoutMs, isSdkTimeout, (signal) => completeOnce(client, settings, request, signal)),
  };
}

const isSdkTimeout = (error: unknown) => error instanceof Anthropic.APIConnectionTimeoutError;

async function completeOnce(
  client: Anthropic,
  settings: AiProviderSettings,
  request: AiCompletionRequest,
  signal: AbortSignal,
): Promise<AiCompletion> {
  const { name, description, schema } = request.answer;
  const stream = await client.messages.create(
    {
      model: settings.model,
      system: request.system,
      messages: [{ role: 'user', content: request.user }],
      tools: [{ name, description, input_schema: { ...schema, type: 'object' } }],
      tool_choice: { type: 'tool', name },
      max_tokens: settings.maxOutputTokens,
      stream: true,
    },
    { signal },
  );

  let input = '';
  let toolBlock: number | null = null;
  let model = settings.model;
  let stopReason: string | null = null;
  const usage = { inputTokens: 0, outputTokens: 0 };
  for await (const event of stream) {
    switch (event.type) {
      case 'message_start':
        model = event.message.model || model;
        // Anthropic-compatible servers may leave counts out, whatever the types say: missing counts are 0.
        usage.inputTokens = event.message.usage?.input_tokens ?? 0;
        usage.outputTokens = event.message.usage?.output_tokens ?? 0;
        break;
      case 'content_block_start':
        if (event.content_block.type === 'tool_use' && event.content_block.name === name) toolBlock = event.index;
        break;
      case 'content_block_delta':
        if (event.index === toolBlock && event.delta.type === 'input_json_delta') input += event.delta.partial_json;
        break;
      case 'message_delta':
        stopReason = event.delta.stop_reason ?? stopReason;
        // The counts here are cumulative for the whole message.
        usage.outputTokens = event.usage?.output_tokens ?? usage.outputTokens;
        usage.inputTokens = event.usage?.input_tokens ?? usage.inputTokens;
        break;
      case 'content_block_stop':
      case 'message_stop':
        break;
    }
  }
  // A stream cut short by the deadline ends quietly here; withDeadline reports it as the timeout it is.
  if (stopReason === 'max_tokens') throw overBudget();
  return { value: parseJsonObject(input), model, usage };
}
