// A fake AI provider for tests: a real HTTP server on loopback that speaks both wire protocols the adapters use,
// OpenAI's chat completions (POST /v1/chat/completions) and Anthropic's messages (POST /v1/messages), streamed as SSE
// the way the real APIs frame it, or as plain JSON when the request does not ask to stream. Each test scripts the
// replies (`next`, or a `reply` function for whatever is not queued) and reads back every request, byte for byte.
// The openai client takes `${url}/v1` as its base URL; the anthropic one takes `${url}`.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** One scripted reply. */
export type FakeBehaviour =
  /** the JSON answer, sent over several deltas (content for OpenAI, a forced tool call's input for Anthropic) */
  | { answer: unknown; usage?: FakeUsage; model?: string }
  /** this text instead of a JSON answer */
  | { raw: string }
  /** an error status with the provider's error body (`body` replaces it) */
  | { status: number; body?: object }
  /** read the request, then send nothing for this long, then drop the connection */
  | { stallMs: number }
  /** answer 200 and send an SSE comment every 100 ms until the client goes away */
  | { trickle: true }
  /** half the answer, then finish_reason `length` / stop_reason `max_tokens` */
  | { truncated: true }
  /** destroy the socket without a word */
  | { hangup: true };

/** What the adapters send, parsed; loose on purpose (tests look into it). */
export interface FakeRequestBody {
  model?: string;
  stream?: boolean;
  max_tokens?: number;
  messages?: Array<{ role: string; content: unknown }>;
  system?: unknown;
  tools?: Array<{ name: string; description?: string; input_schema?: unknown }>;
  tool_choice?: { type: string; name?: string };
  response_format?: { type: string; json_schema?: { name: string; description?: string; schema?: unknown } };
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
}

export interface FakeRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: FakeRequestBody;
  /** the exact text received: search it for canaries */
  raw: string;
}

export interface FakeAiProvider {
  url: string;
  requests: FakeRequest[];
  /** Queues replies, used one per request in order. */
  next(...behaviours: FakeBehaviour[]): void;
  /** Answers every request the queue does not (the function returns the answer object). */
  reply(answer: (request: FakeRequest) => unknown): void;
  close(): Promise<void>;
}

export interface FakeAiProviderOptions {
  /** the usage every answer reports unless its behaviour says otherwise */
  usage?: FakeUsage;
  model?: string;
}

type Protocol = 'openai' | 'anthropic';

export async function startFakeAiProvider(options: FakeAiProviderOptions = {}): Promise<FakeAiProvider> {
  const usage = options.usage ?? { inputTokens: 42, outputTokens: 17 };
  const model = options.model ?? 'fake-model-1';
  const requests: FakeRequest[] = [];
  const queue: FakeBehaviour[] = [];
  let replyWith: ((request: FakeRequest) => unknown) | null = null;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0]!;
      let body: FakeRequestBody = {};
      try {
        body = JSON.parse(raw) as FakeRequestBody;
      } catch {
        // recorded as received; the reply below still follows the script
      }
      const request: FakeRequest = { path, headers: req.headers, body, raw };
      requests.push(request);
      const protocol: Protocol | null =
        req.method === 'POST' && path === '/v1/chat/completions'
          ? 'openai'
          : req.method === 'POST' && path === '/v1/messages'
            ? 'anthropic'
            : null;
      if (!protocol) return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
      const behaviour: FakeBehaviour =
        queue.shift() ??
        (replyWith ? { answer: replyWith(request) } : { status: 501, body: { error: 'nothing scripted' } });
      play(protocol, behaviour, request, res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  /** A timer that stops when the client goes away, and that close() clears. */
  function track(res: http.ServerResponse, timer: NodeJS.Timeout): void {
    timers.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  }

  function play(protocol: Protocol, behaviour: FakeBehaviour, request: FakeRequest, res: http.ServerResponse): void {
    if ('hangup' in behaviour) return void res.socket?.destroy();
    if ('stallMs' in behaviour)
      return track(
        res,
        setTimeout(() => res.socket?.destroy(), behaviour.stallMs),
      );
    if ('status' in behaviour)
      return sendJson(res, behaviour.status, behaviour.body ?? errorBody(protocol, behaviour.status));
    if ('trickle' in behaviour) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      return track(
        res,
        setInterval(() => res.write(': still thinking\n\n'), 100),
      );
    }
    const reply =
      'answer' in behaviour
        ? {
            text: JSON.stringify(behaviour.answer) ?? 'null',
            truncated: false,
            usage: behaviour.usage ?? usage,
            model: behaviour.model ?? model,
          }
        : 'raw' in behaviour
          ? { text: behaviour.raw, truncated: false, usage, model }
          : { text: '{"unfinished": "the model ran o', truncated: true, usage, model };
    const stream = request.body.stream === true;
    if (protocol === 'openai') return stream ? openAiStream(res, reply, request) : openAiJson(res, reply);
    return stream ? anthropicStream(res, reply, request) : anthropicJson(res, reply, request);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    next: (...behaviours) => void queue.push(...behaviours),
    reply: (answer) => void (replyWith = answer),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Reply {
  text: string;
  truncated: boolean;
  usage: FakeUsage;
  model: string;
}

/** The text in three pieces (by code point), as a model streams it. */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / 3));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function errorBody(protocol: Protocol, status: number): object {
  const type = status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : 'api_error';
  const message = `fake provider error ${status}`;
  return protocol === 'openai'
    ? { error: { message, type, param: null, code: null } }
    : { type: 'error', error: { type, message } };
}

function openAiStream(res: http.ServerResponse, reply: Reply, request: FakeRequest): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: reply.model };
  const send = (chunk: object) => res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
  send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  for (const piece of pieces(reply.text))
    send({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  send({ choices: [{ index: 0, delta: {}, finish_reason: reply.truncated ? 'length' : 'stop' }] });
  if (request.body.stream_options?.include_usage) send({ choices: [], usage: openAiUsage(reply.usage) });
  res.end('data: [DONE]\n\n');
}

function openAiJson(res: http.ServerResponse, reply: Reply): void {
  sendJson(res, 200, {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: reply.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text },
        finish_reason: reply.truncated ? 'length' : 'stop',
      },
    ],
    usage: openAiUsage(reply.usage),
  });
}

function openAiUsage(usage: FakeUsage): object {
  const { inputTokens: prompt_tokens, outputTokens: completion_tokens } = usage;
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

/** The forced tool's name: the one the request asks for. */
function toolName(request: FakeRequest): string {
  return request.body.tool_choice?.name ?? request.body.tools?.[0]?.name ?? 'answer';
}

function anthropicStream(res: http.ServerResponse, reply: Reply, request: FakeRequest): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: object) =>
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const message = anthropicMessage(reply, []);
  send('message_start', {
    message: { ...message, usage: { input_tokens: reply.usage.inputTokens, output_tokens: 1 } },
  });
  send('content_block_start', {
    index: 0,
    content_block: { type: 'tool_use', id: 'toolu_fake', name: toolName(request), input: {} },
  });
  send('ping', {});
  for (const piece of pieces(reply.text))
    send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: piece } });
  send('content_block_stop', { index: 0 });
  send('message_delta', {
    delta: { stop_reason: reply.truncated ? 'max_tokens' : 'tool_use', stop_sequence: null },
    usage: { output_tokens: reply.usage.outputTokens },
  });
  send('message_stop', {});
  res.end();
}

function anthropicJson(res: http.ServerResponse, reply: Reply, request: FakeRequest): void {
  let input: unknown = null;
  try {
    input = JSON.parse(reply.text);
  } catch {
    // not JSON: sent as text, the way a model that ignored the tool would answer
  }
  const content =
    input !== null && !reply.truncated
      ? [{ type: 'tool_use', id: 'toolu_fake', name: toolName(request), input }]
      : [{ type: 'text', text: reply.text }];
  sendJson(res, 200, anthropicMessage(reply, content));
}

function anthropicMessage(reply: Reply, content: object[]): object {
  const done = content.length > 0;
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content,
    stop_reason: done ? (reply.truncated ? 'max_tokens' : 'tool_use') : null,
    stop_sequence: null,
    usage: { input_tokens: reply.usage.inputTokens, output_tokens: done ? reply.usage.outputTokens : 0 },
  };
}
