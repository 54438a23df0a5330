// A Server-Sent Events client for tests: a real HTTP connection (fetch), frames parsed as the spec says.

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  /** a comment line (`: keepalive`), without the colon and the one space after it */
  comment?: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Frames received so far, in order. */
  frames: SseFrame[];
  /** Frames that carry an event (an id), as seqs. */
  seqs(): number[];
  /** True once the server closed the stream. */
  ended(): boolean;
  /** Resolves once `done` holds (checked on each frame and at the end of the stream); rejects after `ms`, naming `what`. */
  until(done: (s: SseStream) => boolean, what: string, ms?: number): Promise<void>;
  /** Disconnects. */
  close(): void;
}

/** Parses one frame (the lines before a blank line). */
function parseFrame(block: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line.startsWith(':')) {
      frame.comment = line.slice(1).replace(/^ /, '');
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id' || field === 'event') frame[field] = value;
    if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
  }
  return frame;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const frames: SseFrame[] = [];
  let ended = false;
  const checks = new Set<() => void>();
  const notify = () => checks.forEach((check) => check());

  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    frames,
    seqs: () => frames.filter((f) => f.id !== undefined).map((f) => Number(f.id)),
    ended: () => ended,
    until(done, what, ms = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          checks.delete(check);
          reject(new Error(`timed out waiting for ${what}; frames so far: ${JSON.stringify(frames)}`));
        }, ms);
        const check = () => {
          if (!done(stream)) return;
          clearTimeout(timer);
          checks.delete(check);
          resolve();
        };
        checks.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };

  void (async () => {
    if (!res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffered.search(/\r?\n\r?\n/)) >= 0) {
          const sep = /\r?\n\r?\n/.exec(buffered.slice(cut))![0];
          frames.push(parseFrame(buffered.slice(0, cut)));
          buffered = buffered.slice(cut + sep.length);
          notify();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      ended = true;
      notify();
    }
  })();
  return stream;
}
