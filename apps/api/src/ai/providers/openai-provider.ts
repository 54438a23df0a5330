// The AI provider over OpenAI's chat-completions protocol (OpenAI itself, or an OpenAI-compatible server: vLLM,
// Ollama, LM Studio). One streamed completion whose answer is held to a JSON schema; `baseUrl` includes `/v1`.
import type { AiCompletion, AiCompletionRequest, AiProvider, AiProviderSettings } from '@baton/core';
import OpenAI from 'openai';
import { overBudget, parseJsonObject, withDeadline } from './provider-call.js';

export function createOpenAiProvider(settings: AiProviderSettings): AiProvider {
  const client = new OpenAI({
    baseURL: settings.baseUrl,
    // Local servers take no key; the client insists on one.
    apiKey: settings.apiKey ?? 'unused',
    // Not read from OPENAI_ORG_ID / OPENAI_PROJECT_ID: the settings say everything that is sent.
    organization: null,
    project: null,
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

const isSdkTimeout = (error: unknown) => error instanceof OpenAI.APIConnectionTimeoutError;

async function completeOnce(
  client: OpenAI,
  settings: AiProviderSettings,
  request: AiCompletionRequest,
  signal: AbortSignal,
): Promise<AiCompletion> {
  const stream = await client.chat.completions.create(
    {
      model: settings.model,
      messages: [
        { role: 'system', content: request.system },
        { role: 'user', content: request.user },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: request.answer.name,
          description: request.answer.description,
          schema: request.answer.schema,
          // Strict mode rejects schemas with optional properties; the caller checks the answer against the schema.
          strict: false,
        },
      },
      // `max_tokens`, not `max_completion_tokens`: the one field OpenAI-compatible servers all accept.
      max_tokens: settings.maxOutputTokens,
      stream: true,
      stream_options: { include_usage: true },
    },
    { signal },
  );

  let content = '';
  let model = settings.model;
  let finishReason: string | null = null;
  const usage = { inputTokens: 0, outputTokens: 0 };
  for await (const chunk of stream) {
    if (chunk.model) model = chunk.model;
    const choice = chunk.choices?.[0]; // compatible servers may send chunks without choices
    if (choice?.delta?.content) content += choice.delta.content;
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    // With include_usage, the last chunk (no choices) carries the counts for the whole call.
    if (chunk.usage) {
      usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
      usage.outputTokens = chunk.usage.completion_tokens ?? 0;
    }
  }
  // A stream cut short by the deadline ends quietly here; withDeadline reports it as the timeout it is.
  if (finishReason === 'length') throw overBudget();
  return { value: parseJsonObject(content), model, usage };
}
