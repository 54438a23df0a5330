// Both provider adapters, through the factory, against a real HTTP server speaking each wire protocol (the fake):
// what goes out on the wire, what comes back, and that every failure is one AiProviderError that holds no secret.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type AiCompletionRequest, type AiProviderSettings, AiProviderError } from '@baton/core';
import { type FakeAiProvider, type FakeBehaviour, startFakeAiProvider } from '../../testing/ai-fake-provider.js';
import { createAiProvider } from './provider-factory.js';

const API_KEY = 'sk-canary-4f1d9a7e';
const SYSTEM = 'You explain failed runs. SYSTEM-CANARY';
const USER = '<run-data>USER-CANARY: task failed</run-data>';
const SCHEMA = {
  type: 'object',
  properties: { summary: { type: 'string' }, cited_events: { type: 'array', items: { type: 'integer' } } },
  required: ['summary'],
};
const request: AiCompletionRequest = {
  purpose: 'explain',
  system: SYSTEM,
  user: USER,
  answer: { name: 'run_explanation', description: 'Why the run failed.', schema: SCHEMA },
};

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The rejection of a call that must fail. */
async function failure(call: Promise<unknown>): Promise<AiProviderError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(AiProviderError);
  return outcome.error as AiProviderError;
}

describe.each(['openai', 'anthropic'] as const)('the %s provider', (provider) => {
  let fake: FakeAiProvider;
  beforeAll(async () => {
    fake = await startFakeAiProvider();
  });
  afterAll(async () => {
    await fake?.close();
  });

  const baseUrlOf = (url: string) => (provider === 'openai' ? `${url}/v1` : url);
  const settings = (over: Partial<AiProviderSettings> = {}): AiProviderSettings => ({
    provider,
    baseUrl: baseUrlOf(fake.url),
    model: 'configured-model',
    apiKey: API_KEY,
    timeoutMs: 10_000,
    maxOutputTokens: 777,
    ...over,
  });

  it('streams one structured completion and returns the parsed answer, the model and the usage', async () => {
    const answer = { summary: 'naïve — 日本 mount failed 🚫', cited_events: [3, 7] };
    fake.next({ answer, usage: { inputTokens: 1234, outputTokens: 56 }, model: 'served-model-2026' });
    const before = fake.requests.length;

    const completion = await createAiProvider(settings()).complete(request);

    expect(completion).toEqual({
      value: answer,
      model: 'served-model-2026',
      usage: { inputTokens: 1234, outputTokens: 56 },
    });
    expect(fake.requests).toHaveLength(before + 1);
    const sent = fake.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'configured-model', max_tokens: 777, stream: true });
    if (provider === 'openai') {
      expect(sent.path).toBe('/v1/chat/completions');
      expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(sent.body.messages).toEqual([
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ]);
      expect(sent.body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'run_explanation', description: 'Why the run failed.', schema: SCHEMA, strict: false },
      });
      expect(sent.body.stream_options).toEqual({ include_usage: true });
    } else {
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe(API_KEY);
      expect(sent.headers['anthropic-version']).toEqual(expect.any(String));
      expect(sent.body.system).toBe(SYSTEM);
      expect(sent.body.messages).toEqual([{ role: 'user', content: USER }]);
      expect(sent.body.tools).toEqual([
        { name: 'run_explanation', description: 'Why the run failed.', input_schema: SCHEMA },
      ]);
      expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'run_explanation' });
    }
  });

  it('works without a key (a local server): the client sends a placeholder, never nothing', async () => {
    fake.next({ answer: { summary: 'ok' } });
    const completion = await createAiProvider(settings({ apiKey: undefined })).complete(request);
    expect(completion.value).toEqual({ summary: 'ok' });
    expect(fake.requests.at(-1)!.raw).not.toContain(API_KEY);
  });

  it('the model is the configured one where the provider names none', async () => {
    fake.next({ answer: { summary: 'ok' }, usage: { inputTokens: 0, outputTokens: 0 }, model: '' });
    const completion = await createAiProvider(settings()).complete(request);
    expect(completion).toEqual({
      value: { summary: 'ok' },
      model: 'configured-model',
      usage: { inputTokens: 0, outputTokens: 0 },
    });
  });

  const failures: Array<[string, FakeBehaviour, RegExp, number | null]> = [
    ['garbage instead of JSON', { raw: 'Sure! Here is the JSON: {summary:' }, /answer is not a JSON object/, null],
    ['JSON that is not an object', { answer: ['summary', 'x'] }, /answer is not a JSON object/, null],
    ['a 429', { status: 429 }, /^the AI provider answered 429$/, 429],
    ['a 500', { status: 500 }, /^the AI provider answered 500$/, 500],
    ['a 401 for a wrong key', { status: 401 }, /^the AI provider answered 401$/, 401],
    ['an answer cut at the token budget', { truncated: true }, /^the answer exceeded the token budget$/, null],
    ['a dropped connection', { hangup: true }, /^the AI provider could not be reached$/, null],
    ['a provider that stalls past the timeout', { stallMs: 30_000 }, /did not answer within 300 ms/, null],
    ['a provider that trickles keep-alives forever', { trickle: true }, /did not answer within 300 ms/, null],
  ];
  it.each(failures)(
    '%s: one AiProviderError, one attempt, no secret in it',
    async (_name, behaviour, message, status) => {
      fake.next(behaviour);
      const before = fake.requests.length;

      const error = await failure(createAiProvider(settings({ timeoutMs: 300 })).complete(request));

      expect(error.message).toMatch(message);
      expect(error.providerStatus).toBe(status);
      for (const secret of [API_KEY, 'SYSTEM-CANARY', 'USER-CANARY']) expect(error.message).not.toContain(secret);
      // No retries behind the caller's back.
      expect(fake.requests).toHaveLength(before + 1);
    },
  );

  it('a provider that is down is an AiProviderError with no status', async () => {
    const down = settings({ baseUrl: baseUrlOf(`http://127.0.0.1:${await closedPort()}`) });
    const error = await failure(createAiProvider(down).complete(request));
    expect(error.message).toBe('the AI provider could not be reached');
    expect(error.providerStatus).toBeNull();
  });

  it('the fake answers plain JSON when not asked to stream (for callers that do not stream)', async () => {
    fake.next({ answer: { summary: 'plain' } });
    const path = provider === 'openai' ? '/v1/chat/completions' : '/v1/messages';
    const res = await fetch(`${fake.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', tool_choice: { type: 'tool', name: 'run_explanation' } }),
    });
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as Record<string, never>;
    if (provider === 'openai') {
      expect(body).toMatchObject({ choices: [{ message: { content: '{"summary":"plain"}' }, finish_reason: 'stop' }] });
    } else {
      expect(body).toMatchObject({
        content: [{ type: 'tool_use', name: 'run_explanation', input: { summary: 'plain' } }],
        stop_reason: 'tool_use',
      });
    }
  });
});
