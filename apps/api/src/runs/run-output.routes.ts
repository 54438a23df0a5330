import { decimalInteger, RunEvent, RunEventsQuery, RunIdParams, RunLogQuery } from '@baton/contracts';
import { type Principal, ValidationError } from '@baton/core';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { parseRange } from '../http/byte-range.js';
import { sendProblem } from '../http/problem.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';
import { drained, type RunStreamDeps, streamRunEvents } from './run-stream.js';

export interface RunOutputRouteOptions {
  /** Interval of the SSE `: keepalive` comment (tests shorten it). */
  heartbeatMs?: number | undefined;
  /** Live events a slow SSE client may fall behind by before it is dropped (tests shorten it). */
  maxBehind?: number | undefined;
  /** Piece size when the whole log is sent (tests shorten it). */
  logPageBytes?: number | undefined;
  onStreamError?: ((err: unknown) => void) | undefined;
  /** Told as each event stream starts and stops (/metrics' open streams). */
  streams?: RunStreamDeps['streams'];
}

export const SSE_HEARTBEAT_MS = 15_000;
/** The whole log is sent in pieces of this many bytes, so a huge log never sits in memory at once. */
const LOG_PAGE_BYTES = 1024 * 1024;
const TEXT = 'text/plain; charset=utf-8';

const RunStreamQuery = z.strictObject({
  after_seq: decimalInteger(0, Number.MAX_SAFE_INTEGER)
    .optional()
    .meta({ description: 'resume after this seq, for clients that cannot send Last-Event-ID (the header wins)' }),
});

type Svc = Pick<Services, 'runOutput' | 'runAccess' | 'eventBus'>;

/** `Last-Event-ID` as a seq: digits only (an empty value, as EventSource never sends, means none). */
function lastEventId(req: Request): number | undefined {
  const raw = req.header('last-event-id')?.trim();
  if (!raw) return undefined;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new ValidationError('invalid header Last-Event-ID', [
      { path: 'header.last-event-id', message: 'must be the seq of an event (a non-negative integer)' },
    ]);
  }
  return Number(raw);
}

/** 200 with the whole log, read and written piece by piece; Content-Length is the size when the read began. */
async function sendWholeLog(
  s: Svc,
  p: Principal,
  id: string,
  pageBytes: number,
  req: Request,
  res: Response,
): Promise<void> {
  const first = await s.runOutput.logBytes(p, id, { start: 0, end: pageBytes - 1 });
  const total = first.totalBytes;
  res.status(200).setHeader('Content-Type', TEXT);
  res.setHeader('Content-Length', String(total));
  if (req.method === 'HEAD') return void res.end();
  let sent = first.body.length;
  res.write(first.body);
  await drained(res);
  while (sent < total && !res.destroyed) {
    const next = await s.runOutput.logBytes(p, id, { start: sent, end: Math.min(sent + pageBytes, total) - 1 });
    if (next.body.length === 0) break;
    sent += next.body.length;
    res.write(next.body);
    await drained(res);
  }
  res.end();
}

async function sendLogRange(
  s: Svc,
  p: Principal,
  id: string,
  range: ReturnType<typeof parseRange>,
  res: Response,
): Promise<void> {
  // An invalid specifier still checks visibility first and reports the size, like an unsatisfiable one.
  const read = await s.runOutput.logBytes(p, id, range.kind === 'single' ? range.range : { suffix: 0 });
  if (!read.range) {
    res.setHeader('Content-Range', `bytes */${read.totalBytes}`);
    const detail =
      range.kind === 'single'
        ? `the range lies outside the log, which has ${read.totalBytes} bytes so far`
        : 'the Range header is not a valid bytes range: use bytes=first-last, bytes=first- or bytes=-suffix';
    return sendProblem(res, 416, 'range-not-satisfiable', detail, { title: 'Range Not Satisfiable' });
  }
  res.status(206).setHeader('Content-Type', TEXT);
  res.setHeader('Content-Range', `bytes ${read.range.start}-${read.range.end}/${read.totalBytes}`);
  res.setHeader('Content-Length', String(read.body.length));
  res.end(read.body);
}

export function runOutputRoutes(s: Svc, opts: RunOutputRouteOptions = {}): Operation[] {
  const heartbeatMs = opts.heartbeatMs ?? SSE_HEARTBEAT_MS;
  const logPageBytes = opts.logPageBytes ?? LOG_PAGE_BYTES;
  return [
    defineOperation({
      operationId: 'getRunLog',
      method: 'get',
      path: '/runs/{id}/logs',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: "A run's output as plain text: whole, by lines (?offset=&limit=) or by bytes (HTTP Range).",
      description:
        'A running run answers what has been stored so far. `offset`/`limit` count lines (the total is in `X-Total-Lines`). ' +
        '`Range: bytes=a-b`, `bytes=a-` and `bytes=-n` answer 206 with `Content-Range: bytes a-b/total`, UTF-8 bytes exactly (a range may cut a character); ' +
        'a range outside the log answers 416 with `Content-Range: bytes */total`. Several ranges in one header are answered with the whole log (200). ' +
        'Range together with offset/limit is a 400.',
      params: RunIdParams,
      query: RunLogQuery,
      responses: {
        200: { description: 'The log, or the lines asked for', schema: z.string(), contentType: TEXT },
        206: {
          description: 'The bytes asked for (Content-Range: bytes a-b/total)',
          schema: z.string(),
          contentType: TEXT,
        },
        416: { description: 'The range lies outside the log (Content-Range: bytes */total)' },
      },
      async handle({ principal, params, query, req, res }) {
        res.setHeader('Accept-Ranges', 'bytes');
        const byLines = query.offset !== undefined || query.limit !== undefined;
        if (byLines && req.headers.range !== undefined) {
          throw new ValidationError('ask by lines (offset/limit) or by bytes (Range), not both', [
            { path: 'header.range', message: 'not allowed together with offset or limit' },
          ]);
        }
        if (byLines) {
          const { text, totalLines } = await s.runOutput.logLines(principal, params.id, query);
          const body = Buffer.from(text, 'utf8');
          res.status(200).setHeader('Content-Type', TEXT);
          res.setHeader('X-Total-Lines', String(totalLines));
          res.setHeader('Content-Length', String(body.length));
          res.end(body);
          return undefined;
        }
        const range = parseRange(req.headers.range);
        if (range.kind === 'single' || range.kind === 'invalid')
          await sendLogRange(s, principal, params.id, range, res);
        else await sendWholeLog(s, principal, params.id, logPageBytes, req, res);
        return undefined;
      },
    }),
    defineOperation({
      operationId: 'listRunEvents',
      method: 'get',
      path: '/runs/{id}/events',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: "A run's structured events in seq order; page on with after_seq.",
      params: RunIdParams,
      query: RunEventsQuery,
      responses: { 200: { description: 'Events', schema: z.array(RunEvent) } },
      async handle({ principal, params, query }) {
        return { status: 200, body: await s.runOutput.events(principal, params.id, query) };
      },
    }),
    defineOperation({
      operationId: 'streamRunEvents',
      method: 'get',
      path: '/runs/{id}/stream',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: "A run's events live over Server-Sent Events, resumable, ending with `event: end`.",
      description:
        'Each event is framed `id: <seq>`, `event: <kind>`, `data: <the RunEvent as JSON>`. Stored events after the resume point ' +
        '(`Last-Event-ID`, else `after_seq`, else the start) come first, then live ones, none twice and none missing. ' +
        'A `: keepalive` comment comes every 15 s (and each one also reads stored events the live path may have missed). After the run finishes the stream sends its final `status` event, then `event: end` with data `{}`, and closes. ' +
        '503 when live events are unavailable (queue mode: Redis unreachable).',
      params: RunIdParams,
      query: RunStreamQuery,
      responses: { 200: { description: 'The event stream', schema: z.string(), contentType: 'text/event-stream' } },
      async handle({ principal, params, query, req, res }) {
        const resumeAfter = lastEventId(req) ?? query.after_seq ?? 0;
        await s.runAccess.visibleRun(principal, params.id);
        if (req.method === 'HEAD') {
          res.status(200).setHeader('Content-Type', 'text/event-stream; charset=utf-8');
          res.end();
          return undefined;
        }
        // A subscription that fails (queue mode: Redis away) rejects before anything is written: a 503 problem.
        await streamRunEvents(
          {
            output: s.runOutput,
            eventBus: s.eventBus,
            heartbeatMs,
            maxBehind: opts.maxBehind,
            onError: opts.onStreamError,
            streams: opts.streams,
          },
          params.id,
          resumeAfter,
          res,
        );
        return undefined;
      },
    }),
  ];
}
