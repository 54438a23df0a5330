// Server-Sent Events over fetch, so the bearer token travels in a header (EventSource cannot send one). It resumes
// with Last-Event-ID after a dropped connection, so nothing is lost or shown twice.

export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

export interface SseOptions {
  url: string;
  token: string | null;
  /** resume after this id (the last seq already shown) */
  lastEventId?: string;
  onMessage(msg: SseMessage): void;
  /** connection state changes, for a "reconnecting…" indicator */
  onState?(state: 'open' | 'reconnecting' | 'closed'): void;
  /** a non-retryable HTTP answer (401, 403, 404…) */
  onHttpError?(status: number): void;
  signal: AbortSignal;
}

/** Splits a text stream into SSE messages; feed it chunks, it calls back per complete message. */
export function sseParser(onMessage: (m: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | undefined;
  return (chunk) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (data.length > 0) onMessage({ id, event: event || 'message', data: data.join('\n') });
        data = [];
        event = '';
        id = undefined;
        continue;
      }
      if (line.startsWith(':')) continue; // heartbeat comment
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id') id = value;
    }
  };
}

const RETRY_MS = [500, 1000, 2000, 4000, 8000];

/**
 * Follows a stream until the server sends `event: end`, the signal aborts or the server refuses; network drops
 * reconnect with the last id seen. Resolves when the stream is over.
 */
export async function followSse(opts: SseOptions): Promise<void> {
  let lastId = opts.lastEventId;
  let attempt = 0;
  let ended = false;
  while (!opts.signal.aborted && !ended) {
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
      if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
      const res = await fetch(opts.url, { headers, signal: opts.signal, cache: 'no-store' });
      if (!res.ok || !res.body) {
        if (res.status >= 400 && res.status < 500) {
          opts.onHttpError?.(res.status);
          break;
        }
        throw new Error(`HTTP ${res.status}`);
      }
      opts.onState?.('open');
      attempt = 0;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const feed = sseParser((m) => {
        if (m.id !== undefined) lastId = m.id;
        if (m.event === 'end') ended = true;
        opts.onMessage(m);
      });
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        feed(value);
      }
      if (!ended) throw new Error('stream closed before its end');
    } catch {
      if (opts.signal.aborted) break;
      opts.onState?.('reconnecting');
      await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
      attempt++;
    }
  }
  opts.onState?.('closed');
}
