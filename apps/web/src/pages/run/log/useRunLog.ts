// A run's log in the browser: a finished run's text from GET /logs (in pages of lines), a live run's from the
// stream (GET /stream, resuming with Last-Event-ID), with any lines the stream did not carry fetched from /logs.
// Everything goes through one queue, in order, so lines are placed exactly once and never with a gap.
import type { LogEventData, Run, RunEvent } from '@baton/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ApiError, request } from '../../../api/client';
import { invalidatePaths } from '../../../api/hooks';
import { followSse } from '../../../api/sse';
import { session } from '../../../auth/session';
import { LogLines } from './logLines';

/** Lines asked of /logs at once (a 200,000-line log comes in four pieces, the first shown as soon as it is here). */
const PAGE_LINES = 50_000;

export type LogState = 'loading' | 'live' | 'reconnecting' | 'complete' | 'error';

export interface RunLog {
  lines: LogLines;
  /** changes whenever lines were added (render key) */
  version: number;
  state: LogState;
  error: string | null;
}

async function fetchLines(runId: string, offset: number, limit: number, signal: AbortSignal) {
  const r = await request<string>('GET', `/v1/runs/${runId}/logs?offset=${offset}&limit=${limit}`, { signal });
  return { text: typeof r.body === 'string' ? r.body : '', total: Number(r.headers.get('x-total-lines') ?? 0) };
}

/** Fetches lines count+1 … upTo (all stored lines when upTo is undefined) into `lines`. */
async function fill(lines: LogLines, runId: string, upTo: number | undefined, signal: AbortSignal, added: () => void) {
  for (;;) {
    const want = upTo === undefined ? PAGE_LINES : Math.min(PAGE_LINES, upTo - lines.count);
    if (want <= 0) return;
    const { text, total } = await fetchLines(runId, lines.count, want, signal);
    const got = lines.place(lines.count + 1, text);
    added();
    if (got === 0) {
      // The server has nothing more (yet): a chunk it announced is stored before it is sent, so this is the end.
      if (upTo === undefined || lines.count >= total) return;
      throw new Error(`the log stopped at line ${lines.count}, short of line ${upTo}`);
    }
    if (upTo === undefined && lines.count >= total) return;
  }
}

export function useRunLog(run: Run | undefined, onStatus: () => void): RunLog {
  const client = useQueryClient();
  const [lines] = useState(() => new LogLines());
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<LogState>('loading');
  const [error, setError] = useState<string | null>(null);
  const onStatusRef = useRef(onStatus);
  onStatusRef.current = onStatus;
  // Start from the run as first loaded; later refetches of the run do not restart the log.
  const runId = run?.id;
  const first = useRef<Run | undefined>(undefined);
  if (run && first.current?.id !== run.id) first.current = run;

  useEffect(() => {
    const start = first.current;
    if (!runId || !start) return;
    const abort = new AbortController();
    const signal = abort.signal;
    // One render per frame however many chunks arrive.
    let frame = 0;
    const added = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setVersion((v) => v + 1);
      });
    };
    const failed = (err: unknown) => {
      if (signal.aborted) return;
      setError(err instanceof ApiError ? err.message : String((err as Error)?.message ?? err));
      setState('error');
    };
    let queue: Promise<void> = Promise.resolve();
    const enqueue = (task: () => Promise<void>) => {
      queue = queue.then(() => (signal.aborted ? undefined : task())).catch(failed);
    };

    if (start.status === 'finished') {
      enqueue(async () => {
        await fill(lines, runId, undefined, signal, added);
        setState('complete');
      });
    } else {
      // What is stored up to the run's last event, then the stream after it: lines numbered by the server.
      enqueue(() => fill(lines, runId, start.log_lines, signal, added));
      const onEvent = (e: RunEvent) => {
        if (e.kind === 'log') {
          const data = e.data as unknown as LogEventData;
          enqueue(async () => {
            if (data.start_line > lines.count + 1) await fill(lines, runId, data.start_line - 1, signal, added);
            if (lines.place(data.start_line, data.text) > 0) added();
          });
        } else if (e.kind === 'status') {
          enqueue(async () => {
            onStatusRef.current();
            await invalidatePaths(client, [`/v1/runs/${runId}`]);
          });
        }
      };
      setState('live');
      void followSse({
        url: `/v1/runs/${runId}/stream`,
        token: session.token(),
        lastEventId: String(start.last_seq),
        signal,
        onMessage: (m) => {
          if (m.event === 'end' || !m.data) return;
          try {
            onEvent(JSON.parse(m.data) as RunEvent);
          } catch {
            // a frame that is not an event (none is sent) is ignored
          }
        },
        onState: (s) => {
          if (signal.aborted) return;
          if (s === 'reconnecting') setState('reconnecting');
          else if (s === 'open') setState('live');
        },
        onHttpError: (status) => failed(new Error(`the live log is not available (HTTP ${status})`)),
      }).then(() =>
        enqueue(async () => {
          if (signal.aborted) return;
          // Whatever the stream ended without (nothing, normally) comes from /logs.
          await fill(lines, runId, undefined, signal, added);
          await invalidatePaths(client, [`/v1/runs/${runId}`]);
          setState((s) => (s === 'error' ? s : 'complete'));
        }),
      );
    }
    return () => {
      abort.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [runId, lines, client]);

  return { lines, version, state, error };
}
