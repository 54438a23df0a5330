// What both provider adapters share: one overall deadline for the whole call, and the translation of every failure
// into an AiProviderError whose message names the kind of failure only (never the prompt, the answer or the key).
import { AiProviderError } from '@baton/core';

/** The shape both SDKs give their HTTP errors (openai's and @anthropic-ai/sdk's APIError): a status when one came. */
interface SdkLikeError {
  status?: unknown;
}

/** `60 s`, `1.5 s`, `300 ms`: how long the provider had, for the timeout message. */
export function describeDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/**
 * Runs `call` with an abort signal that fires after `timeoutMs`, whatever the call is doing: the SDKs' own timeouts
 * stop at the response headers, so a server trickling keep-alive bytes forever would otherwise hold the call open.
 * Every rejection comes out as an AiProviderError; `isSdkTimeout` recognises the SDK's own timeout error (its timer
 * and ours race when the server sends nothing at all).
 */
export async function withDeadline<T>(
  timeoutMs: number,
  isSdkTimeout: (error: unknown) => boolean,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const result = await call(controller.signal);
    // The SDKs' stream iterators end quietly (no throw) when their signal aborts: a cut-short answer is a timeout.
    if (controller.signal.aborted) throw timedOut(timeoutMs);
    return result;
  } catch (error) {
    if (controller.signal.aborted || isSdkTimeout(error)) throw timedOut(timeoutMs);
    throw toAiProviderError(error);
  } finally {
    clearTimeout(timer);
  }
}

function timedOut(timeoutMs: number): AiProviderError {
  return new AiProviderError(`the AI provider did not answer within ${describeDuration(timeoutMs)}`);
}

/** Our own errors pass; an HTTP status keeps its number; anything else (refused, reset, DNS, bad SSE) is "unreachable". */
export function toAiProviderError(error: unknown): AiProviderError {
  if (error instanceof AiProviderError) return error;
  const status = (error as SdkLikeError | null)?.status;
  if (typeof status === 'number') return new AiProviderError(`the AI provider answered ${status}`, status);
  if (error instanceof SyntaxError) return notAJsonObject();
  return new AiProviderError('the AI provider could not be reached');
}

export function notAJsonObject(): AiProviderError {
  return new AiProviderError("the AI provider's answer is not a JSON object");
}

export function overBudget(): AiProviderError {
  return new AiProviderError('the answer exceeded the token budget');
}

/** The accumulated answer text as a JSON object, or the "not a JSON object" error. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notAJsonObject();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAJsonObject();
  return value as Record<string, unknown>;
}
