import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import { createRunIngester, newId } from '@baton/core';
import type { RunRow } from '@baton/db';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import express from 'express';
import type { Response as SuperResponse } from 'supertest';
import { errorHandler } from '../http/problem.js';
import { mountOperations } from '../http/registry.js';
import { createLogger } from '../logger.js';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';
import { openSse, type SseStream } from '../testing/sse-client.js';
import { runOutputRoutes } from './run-output.routes.js';

/** Log chunks as the executor cuts them (whole lines), with 2-, 3- and 4-byte UTF-8 characters. */
const CHUNKS = ['PLAY [all] ****\n', 'TASK [ping] ✓\nok: [web1]\n', 'ünïcode 日本語 🎉\n', 'a\nb\nc\n', 'PLAY RECAP\n'];
const LOG = CHUNKS.join('');
const LOG_BYTES = Buffer.from(LOG, 'utf8');
const LOG_LINES = LOG.split('\n')
  .slice(0, -1)
  .map((l) => `${l}\n`);

const runRow = (id: string, submittedBy: string, status: string): RunRow =>
  testRunRow(id, { status, submitted_by: submittedBy, worker: status === 'running' ? 'test' : null });

/** Builds a run's events as an executor emits them: seq from 1, log chunks numbered by line. */
function eventsOf(runId: string) {
  let seq = 0;
  let line = 1;
  const ev = (kind: string, data: Record<string, unknown>): RunEvent => ({
    run_id: runId,
    seq: ++seq,
    ts: new Date().toISOString(),
    kind,
    data,
  });
  return {
    status: (status: string) => ev('status', { status }),
    log(text: string) {
      const lines = text.split('\n').length - 1;
      const e = ev('log', { text, start_line: line, end_line: line + lines });
      line += lines;
      return e;
    },
    ok: (host: string, task: string) => ev('runner_on_ok', { host, task, changed: false }),
    finished: () => ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0 }),
  };
}

/** A body as raw bytes, whatever its content type says. */
const binary = (res: SuperResponse, done: (err: Error | null, body: Buffer) => void) => {
  const parts: Buffer[] = [];
  res.on('data', (c: Buffer) => parts.push(c));
  res.on('end', () => done(null, Buffer.concat(parts)));
};

describe.each(DIALECTS)('run output routes on %s', (dialect) => {
  let h: Harness;
  let server: Server;
  let base: string;
  let op: Awaited<ReturnType<Harness['user']>>;
  let other: Awaited<ReturnType<Harness['user']>>;
  /** A finished run with the whole LOG and ansible events between its chunks. */
  let done: { id: string; events: RunEvent[] };

  /** Writes events the one way the app does: through the ingester, which persists them, then publishes them. */
  const ingest = async (events: RunEvent[]) => {
    for (const e of events) h.services.runIngest.push(e);
    await h.services.runIngest.flush();
  };
  const newRun = async (status = 'running', submittedBy = op.id) => {
    const id = newId('run');
    await h.tdb.db.repos.runs.insert(runRow(id, submittedBy, status));
    return id;
  };
  const stream = (id: string, headers: Record<string, string> = {}, query = '', token = op.token) =>
    openSse(`${base}/v1/runs/${id}/stream${query}`, { ...bearer(token), ...headers });
  const events = (frames: SseStream['frames']) =>
    frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data!) as RunEvent);
  const endFrames = (s: SseStream) => s.frames.filter((f) => f.event === 'end');
  const getLog = (id: string, query = '', headers: Record<string, string> = {}) =>
    h.http
      .get(`/v1/runs/${id}/logs${query}`)
      .set({ ...bearer(op.token), ...headers })
      .buffer(true)
      .parse(binary) as unknown as Promise<SuperResponse & { body: Buffer }>;

  beforeAll(async () => {
    h = await createHarness(dialect);
    server = h.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    [op, other] = [await h.user('operator'), await h.user('operator')];
    const id = await newRun();
    const b = eventsOf(id);
    const list = [b.status('running')];
    CHUNKS.forEach((chunk, i) => {
      list.push(b.log(chunk));
      list.push(b.ok(i % 2 ? 'web2' : 'web1', `task ${i}`));
    });
    list.push(b.finished());
    await ingest(list);
    done = { id, events: list };
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await h.services.closeRuns();
    await h.close();
  });

  describe('logs', () => {
    it('answers the whole log as UTF-8 text with Accept-Ranges', async () => {
      const res = await getLog(done.id);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.headers['accept-ranges']).toBe('bytes');
      expect(res.headers['content-length']).toBe(String(LOG_BYTES.length));
      expect(res.body.equals(LOG_BYTES)).toBe(true);
      expect(await h.tdb.db.repos.runs.findById(done.id)).toMatchObject({
        log_lines: LOG_LINES.length,
        log_bytes: LOG_BYTES.length,
      });
    });

    it('pages by lines at chunk boundaries and inside chunks, and answers nothing past the end', async () => {
      expect(LOG_LINES).toHaveLength(8);
      for (const [offset, limit] of [
        [0, 1],
        [1, 2],
        [1, 1],
        [2, 2],
        [3, 3],
        [4, 3],
        [6, 2],
        [7, 5],
        [0, 8],
        [5, 1000],
      ]) {
        const res = await getLog(done.id, `?offset=${offset}&limit=${limit}`);
        expect(res.status).toBe(200);
        expect({ offset, limit, text: res.body.toString('utf8') }).toEqual({
          offset,
          limit,
          text: LOG_LINES.slice(offset!, offset! + limit!).join(''),
        });
        expect(res.headers['x-total-lines']).toBe('8');
        expect(res.headers['accept-ranges']).toBe('bytes');
      }
      expect((await getLog(done.id, '?offset=5')).body.toString()).toBe(LOG_LINES.slice(5).join(''));
      expect((await getLog(done.id, '?limit=2')).body.toString()).toBe(LOG_LINES.slice(0, 2).join(''));
      const past = await getLog(done.id, '?offset=8&limit=10');
      expect(past.status).toBe(200);
      expect(past.body.length).toBe(0);
      expect((await getLog(done.id, '?offset=99999999999999')).body.length).toBe(0);
    });

    it('answers byte ranges with 206 and Content-Range: first bytes, open-ended, suffix, and cutting a multibyte character', async () => {
      const total = LOG_BYTES.length;
      const cases: Array<[string, number, number]> = [
        ['bytes=0-9', 0, 9],
        ['bytes=20-', 20, total - 1],
        ['bytes=-7', total - 7, total - 1],
        ['bytes=-100000', 0, total - 1],
        ['bytes=5-100000', 5, total - 1],
      ];
      // Inside "日" (3 bytes): the first byte of the character only.
      const cjk = LOG_BYTES.indexOf(Buffer.from('日'));
      cases.push([`bytes=${cjk}-${cjk}`, cjk, cjk]);
      for (const [header, start, end] of cases) {
        const res = await getLog(done.id, '', { Range: header });
        expect({ header, status: res.status }).toEqual({ header, status: 206 });
        expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${total}`);
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(res.headers['accept-ranges']).toBe('bytes');
        expect(res.body.toString('hex')).toBe(LOG_BYTES.subarray(start, end + 1).toString('hex'));
      }
      expect((await getLog(done.id, '', { Range: `bytes=${cjk}-${cjk}` })).body).toEqual(Buffer.from([0xe6]));
    });

    it('answers 416 with Content-Range: bytes */total for a range outside the log or an invalid one, and 200 for several ranges', async () => {
      const total = LOG_BYTES.length;
      for (const header of [
        `bytes=${total}-`,
        `bytes=${total + 10}-${total + 20}`,
        'bytes=-0',
        'bytes=9-3',
        'bytes=abc',
        'bytes=',
      ]) {
        const res = await h.http.get(`/v1/runs/${done.id}/logs`).set(bearer(op.token)).set('Range', header);
        expectProblem(res, 416);
        expect(res.headers['content-range']).toBe(`bytes */${total}`);
        expect(res.headers['accept-ranges']).toBe('bytes');
      }
      // Several ranges: the whole log (RFC 9110 lets a server ignore Range); so does a unit we do not know.
      for (const header of ['bytes=0-1, 5-6', 'items=0-1']) {
        const res = await getLog(done.id, '', { Range: header });
        expect(res.status).toBe(200);
        expect(res.headers['content-range']).toBeUndefined();
        expect(res.body.equals(LOG_BYTES)).toBe(true);
      }
      const empty = await newRun();
      const none = await h.http.get(`/v1/runs/${empty}/logs`).set(bearer(op.token)).set('Range', 'bytes=0-');
      expectProblem(none, 416);
      expect(none.headers['content-range']).toBe('bytes */0');
      const whole = await getLog(empty);
      expect(whole.status).toBe(200);
      expect(whole.body.length).toBe(0);
    });

    it('refuses Range together with offset/limit (400), bad line queries (400), and hides invisible or unknown runs (404)', async () => {
      expectProblem(
        await h.http.get(`/v1/runs/${done.id}/logs?offset=1`).set(bearer(op.token)).set('Range', 'bytes=0-1'),
        400,
        'header.range',
      );
      expectProblem(await h.http.get(`/v1/runs/${done.id}/logs?limit=0`).set(bearer(op.token)), 400, 'query.limit');
      expectProblem(await h.http.get(`/v1/runs/${done.id}/logs?offset=-1`).set(bearer(op.token)), 400, 'query.offset');
      expectProblem(await h.http.get(`/v1/runs/${done.id}/logs?offset=x`).set(bearer(op.token)), 400, 'query.offset');
      expectProblem(await h.http.get(`/v1/runs/${done.id}/logs?lines=3`).set(bearer(op.token)), 400);
      expectProblem(
        await h.http.get('/v1/runs/inv_01ARZ3NDEKTSV4RRFFQ69G5FAV/logs').set(bearer(op.token)),
        400,
        'path.id',
      );
      expectProblem(await h.http.get(`/v1/runs/${done.id}/logs`).set(bearer(other.token)), 404);
      expectProblem(
        await h.http.get(`/v1/runs/${done.id}/logs`).set(bearer(other.token)).set('Range', 'bytes=0-1'),
        404,
      );
      expectProblem(await h.http.get(`/v1/runs/${newId('run')}/logs`).set(bearer(h.admin.token)), 404);
      expectProblem(await h.http.get(`/v1/runs/${done.id}/logs`), 401);
      expect((await h.http.get(`/v1/runs/${done.id}/logs`).set(bearer(h.admin.token))).status).toBe(200);
    });

    it('sends the whole log piece by piece, byte-exact when pieces cut characters', async () => {
      const own = await ownServer({ logPageBytes: 7 });
      try {
        const res = await fetch(`${own.base}/v1/runs/${done.id}/logs`, { headers: bearer(op.token) });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-length')).toBe(String(LOG_BYTES.length));
        expect(Buffer.from(await res.arrayBuffer()).equals(LOG_BYTES)).toBe(true);
      } finally {
        await own.close();
      }
    });

    it('declares its text, partial and stream answers in the OpenAPI document', async () => {
      const doc = (await h.http.get('/v1/openapi.json')).body;
      const logs = doc.paths['/v1/runs/{id}/logs'].get;
      expect(Object.keys(logs.responses)).toEqual(expect.arrayContaining(['200', '206', '416']));
      expect(Object.keys(logs.responses['200'].content)).toEqual(['text/plain; charset=utf-8']);
      expect(logs.parameters.map((x: { name: string }) => x.name)).toEqual(['id', 'offset', 'limit']);
      expect(doc.paths['/v1/runs/{id}/events'].get.responses['200'].content['application/json'].schema).toEqual({
        type: 'array',
        items: { $ref: '#/components/schemas/RunEvent' },
      });
      expect(Object.keys(doc.paths['/v1/runs/{id}/stream'].get.responses['200'].content)).toEqual([
        'text/event-stream',
      ]);
      expect(doc.paths['/runs/{id}/stream'].get.deprecated).toBe(true);
    });

    it('serves a running run the log persisted so far, and the earlier edition without /v1', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running'), b.log('first\n')]);
      expect((await getLog(id)).body.toString()).toBe('first\n');
      await ingest([b.log('second\nthird\n')]);
      expect((await getLog(id, '?offset=1')).body.toString()).toBe('second\nthird\n');
      const legacy = await h.http.get(`/runs/${id}/logs`).set(bearer(op.token)).set('Range', 'bytes=-6');
      expect(legacy.status).toBe(206);
      expect(legacy.text).toBe('third\n');
      expect(legacy.headers.deprecation).toBeDefined();
    });
  });

  describe('events', () => {
    it('lists events in seq order with kind and host filters and after_seq paging', async () => {
      const all = await h.http.get(`/v1/runs/${done.id}/events`).set(bearer(op.token));
      expect(all.status).toBe(200);
      expect(all.body).toEqual(done.events);
      const logs = await h.http.get(`/v1/runs/${done.id}/events?kind=log`).set(bearer(op.token));
      expect(logs.body.map((e: RunEvent) => e.data.text)).toEqual(CHUNKS);
      const web2 = await h.http.get(`/v1/runs/${done.id}/events?host=web2`).set(bearer(op.token));
      expect(web2.body.map((e: RunEvent) => e.seq)).toEqual(
        done.events.filter((e) => e.data.host === 'web2').map((e) => e.seq),
      );
      expect(web2.body.length).toBe(2);
      const both = await h.http
        .get(`/v1/runs/${done.id}/events?kind=runner_on_ok&host=web1&after_seq=5`)
        .set(bearer(op.token));
      expect(both.body.map((e: RunEvent) => e.seq)).toEqual(
        done.events.filter((e) => e.kind === 'runner_on_ok' && e.data.host === 'web1' && e.seq > 5).map((e) => e.seq),
      );
      // Paging with after_seq reads every event exactly once.
      const seen: number[] = [];
      for (let after = 0; ;) {
        const page = await h.http.get(`/v1/runs/${done.id}/events?after_seq=${after}&limit=4`).set(bearer(op.token));
        expect(page.body.length).toBeLessThanOrEqual(4);
        if (page.body.length === 0) break;
        seen.push(...page.body.map((e: RunEvent) => e.seq));
        after = page.body.at(-1).seq;
      }
      expect(seen).toEqual(done.events.map((e) => e.seq));
      expect((await h.http.get(`/v1/runs/${done.id}/events?after_seq=99999999999`).set(bearer(op.token))).body).toEqual(
        [],
      );
    });

    it('refuses bad queries (400) and hides invisible runs (404)', async () => {
      for (const [q, path] of [
        ['limit=0', 'query.limit'],
        ['limit=10001', 'query.limit'],
        ['after_seq=-1', 'query.after_seq'],
        ['after_seq=x', 'query.after_seq'],
        ['kind=', 'query.kind'],
        ['bogus=1', 'query'],
      ]) {
        expectProblem(await h.http.get(`/v1/runs/${done.id}/events?${q}`).set(bearer(op.token)), 400, path);
      }
      expectProblem(await h.http.get(`/v1/runs/${done.id}/events`).set(bearer(other.token)), 404);
      expectProblem(await h.http.get(`/v1/runs/${newId('run')}/events`).set(bearer(op.token)), 404);
    });
  });

  describe('stream', () => {
    // Every stream has ended or been closed by the end of its test: none may leave a bus subscription behind.
    afterEach(() => waitFor(() => h.services.eventBus.subscriptionCount() === 0, 'every stream to let go of the bus'));

    it('sends every stored event of a finished run, framed with id and event, then `end`, and closes', async () => {
      const s = await stream(done.id);
      expect(s.status).toBe(200);
      expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(s.headers.get('cache-control')).toBe('no-cache');
      expect(s.headers.get('x-accel-buffering')).toBe('no');
      // delimited by the connection's end, without chunk framing (bench/sse: cheaper per event and client)
      expect(s.headers.get('transfer-encoding')).toBeNull();
      expect(s.headers.get('connection')).toBe('close');
      await s.until((x) => x.ended(), 'the stream to close');
      expect(events(s.frames)).toEqual(done.events);
      expect(s.frames.filter((f) => f.id !== undefined).map((f) => f.event)).toEqual(done.events.map((e) => e.kind));
      expect(s.frames.at(-1)).toEqual({ event: 'end', data: '{}' });
      expect(endFrames(s)).toHaveLength(1);
    });

    it('follows a running run live, then sends the final event and `end`; a client with `after_seq` starts there', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running'), b.log('one\n')]);
      const s = await stream(id);
      await s.until((x) => x.seqs().length === 2, 'the stored events');
      const later = await stream(id, {}, '?after_seq=1');
      await later.until((x) => x.seqs().length === 1, 'the stored event after seq 1');
      await ingest([b.log('two\n'), b.ok('web1', 'ping')]);
      await s.until((x) => x.seqs().length === 4, 'the live events');
      expect(s.ended()).toBe(false);
      expect(endFrames(s)).toHaveLength(0);
      await ingest([b.log('three\n'), b.finished()]);
      for (const x of [s, later]) await x.until((y) => y.ended(), 'the end of the stream');
      expect(s.seqs()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(later.seqs()).toEqual([2, 3, 4, 5, 6]);
      expect(events(s.frames).at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
      expect(s.frames.at(-1)).toEqual({ event: 'end', data: '{}' });
      expect(await h.tdb.db.repos.runs.findById(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
    });

    it('resumes from Last-Event-ID mid-run with no gap and no duplicate, the header winning over after_seq', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running'), b.log('a\n'), b.log('b\n')]);
      const first = await stream(id);
      await first.until((x) => x.seqs().length === 3, 'three events');
      await ingest([b.log('c\n'), b.ok('web1', 't')]);
      await first.until((x) => x.seqs().length === 5, 'five events');
      first.close();
      const last = first.frames.filter((f) => f.id !== undefined).at(-1)!.id!;
      expect(last).toBe('5');
      // While nobody listens, the run goes on.
      await ingest([b.log('d\n'), b.log('e\n')]);
      const resumed = await stream(id, { 'Last-Event-ID': last }, '?after_seq=1');
      await resumed.until((x) => x.seqs().length === 2, 'the events missed while away');
      // Many events at once while the client is connected: still exactly consecutive.
      const burst = Array.from({ length: 40 }, (_, i) => b.log(`line ${i}\n`));
      await ingest([...burst, b.finished()]);
      await resumed.until((x) => x.ended(), 'the end');
      const all = [...first.seqs(), ...resumed.seqs()];
      expect(all).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
      expect(endFrames(resumed)).toHaveLength(1);
      // A client reconnecting after the end gets `end` again at once, and nothing else.
      const after = await stream(id, { 'Last-Event-ID': '48' });
      await after.until((x) => x.ended(), 'the end');
      expect(after.frames).toEqual([{ event: 'end', data: '{}' }]);
    });

    it('gives many clients of one run one bus subscription, and drops it when they disconnect', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running')]);
      const before = h.services.eventBus.subscriptionCount();
      const [x, y] = [await stream(id), await stream(id)];
      for (const s of [x, y]) await s.until((z) => z.seqs().length === 1, 'the stored event');
      expect(h.services.eventBus.subscriptionCount()).toBe(before + 1);
      await ingest([b.log('both see this\n')]);
      for (const s of [x, y]) await s.until((z) => z.seqs().length === 2, 'the live event');
      x.close();
      await ingest([b.log('only y\n')]);
      await y.until((z) => z.seqs().length === 3, 'the next live event');
      expect(h.services.eventBus.subscriptionCount()).toBe(before + 1);
      y.close();
      await waitFor(
        () => h.services.eventBus.subscriptionCount() === before,
        'the subscription to end after both clients left',
      );
    });

    it('answers 404 for an invisible or unknown run and 400 for a bad resume point, as problem+json before streaming', async () => {
      for (const [headers, query, path] of [
        [{ 'Last-Event-ID': 'abc' }, '', 'header.last-event-id'],
        [{ 'Last-Event-ID': '-3' }, '', 'header.last-event-id'],
        [{}, '?after_seq=x', 'query.after_seq'],
        [{}, '?other=1', 'query'],
      ] as const) {
        const res = await h.http.get(`/v1/runs/${done.id}/stream${query}`).set(bearer(op.token)).set(headers);
        expectProblem(res, 400, path);
      }
      expectProblem(await h.http.get(`/v1/runs/${done.id}/stream`).set(bearer(other.token)), 404);
      expectProblem(await h.http.get(`/v1/runs/${newId('run')}/stream`).set(bearer(op.token)), 404);
      expectProblem(await h.http.get(`/v1/runs/${done.id}/stream`), 401);
      const before = h.services.eventBus.subscriptionCount();
      const refused = await stream(done.id, {}, '', other.token);
      expect(refused.status).toBe(404);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(h.services.eventBus.subscriptionCount()).toBe(before);
    });

    it('fills a jump in seq from the database, so a live event never overtakes stored ones', async () => {
      // Events 2–4 are stored but never reach the bus (as if pub/sub dropped them); then 5 is published.
      const id = await newRun();
      const b = eventsOf(id);
      const stored = [b.status('running'), b.log('x\n'), b.log('y\n'), b.ok('web1', 't'), b.log('z\n')];
      await storeQuietly(id, stored.slice(0, 1));
      const s = await stream(id);
      await s.until((x) => x.seqs().length === 1, 'the first event');
      await storeQuietly(id, stored.slice(1));
      await h.services.eventBus.publish(stored[4]!);
      await s.until((x) => x.seqs().length === 5, 'the filled gap and the live event');
      expect(events(s.frames)).toEqual(stored);
      // A live event already sent (a duplicate delivery) is not sent twice.
      await h.services.eventBus.publish(stored[3]!);
      const fin = b.finished();
      await storeQuietly(id, [fin]);
      await h.services.eventBus.publish(fin);
      await s.until((x) => x.ended(), 'the end');
      expect(s.seqs()).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('misses nothing published while it reads stored events, and sends heartbeats at the configured interval', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running'), b.log('stored\n')]);
      const racing = b.log('published during the catch-up read\n');
      let raced = false;
      // The output service of the app, except that the first catch-up read lets the run move on right after it.
      const output = {
        ...h.services.runOutput,
        async eventsAfter(runId: string, afterSeq: number, limit: number) {
          const page = await h.services.runOutput.eventsAfter(runId, afterSeq, limit);
          if (!raced && runId === id) {
            raced = true;
            await ingest([racing]);
          }
          return page;
        },
      };
      const own = await ownServer({ heartbeatMs: 5 }, output);
      try {
        const s = await openSse(`${own.base}/v1/runs/${id}/stream`, bearer(op.token));
        await s.until((x) => x.seqs().length === 3, 'the stored events and the one published meanwhile');
        expect(raced).toBe(true);
        expect(events(s.frames).map((e) => e.data.text)).toEqual([
          undefined,
          'stored\n',
          'published during the catch-up read\n',
        ]);
        await s.until((x) => x.frames.filter((f) => f.comment === 'keepalive').length >= 2, 'two heartbeats');
        s.close();
      } finally {
        await own.close();
      }
    });

    it('still delivers events and the end that never came live (the bus lost them, say while Redis reconnected): each keepalive reads the database', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running')]);
      // An ingester whose publish goes nowhere: stored, never live.
      const silent = createRunIngester({
        transaction: h.tdb.db.transaction,
        publish: async () => {},
        clock: () => new Date(),
      });
      const own = await ownServer({ heartbeatMs: 20 });
      try {
        const s = await openSse(`${own.base}/v1/runs/${id}/stream`, bearer(op.token));
        await s.until((x) => x.seqs().length === 1, 'the stored running event');
        for (const e of [b.log('missed live\n'), b.finished()]) silent.push(e);
        await silent.close();
        await s.until((x) => x.ended(), 'the end, from the database');
        expect(s.seqs()).toEqual([1, 2, 3]);
        expect(s.frames.filter((f) => f.event === 'end')).toHaveLength(1);
      } finally {
        await own.close();
      }
    });

    it('drops a client that falls too far behind instead of buffering without bound, keeps one that reads; the dropped one resumes', async () => {
      const id = await newRun();
      const b = eventsOf(id);
      await ingest([b.status('running')]);
      const own = await ownServer({ maxBehind: 20 });
      try {
        const reader = await openSse(`${own.base}/v1/runs/${id}/stream`, bearer(op.token));
        // A client that stops reading: its socket fills, then live events wait for it, then it is dropped.
        const slow = await new Promise<http.IncomingMessage>((resolve) => {
          http.get(`${own.base}/v1/runs/${id}/stream`, { headers: bearer(op.token) }, (res) => {
            res.pause();
            resolve(res);
          });
        });
        await reader.until((x) => x.seqs().length === 1, 'the first event');
        // Far more than the socket buffers hold (a few MB on loopback), one event at a time as the reader takes them.
        const line = `${'x'.repeat(64 * 1024 - 1)}\n`;
        const count = 200;
        for (let i = 0; i < count; i++) {
          await ingest([b.log(line)]);
          await reader.until((x) => x.seqs().length === i + 2, `event ${i + 2} at the reading client`);
        }
        expect(reader.ended()).toBe(false);
        await ingest([b.finished()]);
        await reader.until((x) => x.ended(), 'the end at the reading client');
        expect(reader.seqs()).toEqual(Array.from({ length: count + 2 }, (_, i) => i + 1));
        // What the slow client got before it was dropped is a gap-free prefix without `end`.
        const body = await new Promise<string>((resolve) => {
          const parts: Buffer[] = [];
          slow.on('data', (c: Buffer) => parts.push(c)).on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
          slow.resume();
        });
        const ids = [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
        expect(ids.length).toBeGreaterThan(0);
        expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
        expect(ids.length).toBeLessThan(count);
        expect(body).not.toContain('event: end');
        const resumed = await stream(id, { 'Last-Event-ID': String(ids.at(-1)) });
        await resumed.until((x) => x.ended(), 'the rest of the run');
        expect([...ids, ...resumed.seqs()]).toEqual(Array.from({ length: count + 2 }, (_, i) => i + 1));
      } finally {
        await own.close();
      }
    });

    it('answers HEAD with the headers only, without subscribing', async () => {
      const before = h.services.eventBus.subscriptionCount();
      const head = await h.http.head(`/v1/runs/${done.id}/stream`).set(bearer(op.token));
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(h.services.eventBus.subscriptionCount()).toBe(before);
      const log = await h.http.head(`/v1/runs/${done.id}/logs`).set(bearer(op.token));
      expect(log.status).toBe(200);
      expect(log.headers['content-length']).toBe(String(LOG_BYTES.length));
      expectProblem(await h.http.get(`/v1/runs/${done.id}/stream`).set(bearer(other.token)), 404);
    });
  });

  /** The run output routes alone on their own server, with options the app does not set (and, if given, another output service). */
  async function ownServer(opts: Parameters<typeof runOutputRoutes>[1], output = h.services.runOutput) {
    const app = express();
    mountOperations(
      app,
      runOutputRoutes({ runOutput: output, runAccess: h.services.runAccess, eventBus: h.services.eventBus }, opts),
      {
        authenticate: (t) => h.services.auth.authenticate(t),
      },
    );
    app.use(errorHandler(createLogger('error', { silent: true })));
    const own = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => own.once('listening', () => resolve()));
    return {
      base: `http://127.0.0.1:${(own.address() as AddressInfo).port}`,
      async close() {
        own.closeAllConnections();
        await new Promise((resolve) => own.close(resolve));
      },
    };
  }

  /** Stores events without publishing them (bypassing the ingester), to stage what a lossy bus would do. */
  async function storeQuietly(runId: string, list: RunEvent[]) {
    const run = (await h.tdb.db.repos.runs.findById(runId))!;
    let [lines, bytes] = [run.log_lines, run.log_bytes];
    const rows = list.map((e) => {
      const row = {
        run_id: runId,
        seq: e.seq,
        ts: e.ts,
        kind: e.kind,
        host: (e.data.host as string | undefined) ?? null,
        log_line: null as number | null,
        log_byte: null as number | null,
        data: e.data,
      };
      if (e.kind === 'log') {
        row.log_line = e.data.start_line as number;
        row.log_byte = bytes;
        bytes += Buffer.byteLength(e.data.text as string);
        lines = (e.data.end_line as number) - 1;
      }
      return row;
    });
    await h.tdb.db.repos.runEvents.insertBatch(rows);
    await h.tdb.db.repos.runs.advanceProgress(runId, { lastSeq: list.at(-1)!.seq, logLines: lines, logBytes: bytes });
    if (list.some((e) => e.kind === 'status' && e.data.status === 'finished'))
      await h.tdb.db.repos.runs.update(runId, { status: 'finished', conclusion: 'succeeded' });
  }
});

describe.each(DIALECTS)('output of a real run on %s', (dialect) => {
  let h: Harness;
  let server: Server;
  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
    server = h.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await h.close();
  });

  it('streams, lists and serves by line and byte what ansible-playbook printed, multibyte text included', async () => {
    const playbook =
      '- hosts: all\n  gather_facts: false\n  tasks:\n' +
      ['ünïcode ✓', '日本語のログ', 'emoji 🎉 done']
        .map((msg, i) => `    - name: say ${i}\n      ansible.builtin.debug: { msg: "${msg}" }\n`)
        .join('');
    const submitted = await h.http.post('/v1/runs').set(bearer(h.admin.token)).send({
      playbook,
      inventory: 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n',
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.id as string;
    const port = (server.address() as AddressInfo).port;
    const s = await openSse(`http://127.0.0.1:${port}/v1/runs/${id}/stream`, bearer(h.admin.token));
    await s.until((x) => x.ended(), 'the end of the run', 90_000);
    const streamed = s.frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data!) as RunEvent);
    expect(streamed.map((e) => e.seq)).toEqual(streamed.map((_, i) => i + 1));
    expect(streamed.at(-1)).toMatchObject({ kind: 'status', data: { status: 'finished', conclusion: 'succeeded' } });
    expect(s.frames.at(-1)).toEqual({ event: 'end', data: '{}' });
    const listed = await h.http.get(`/v1/runs/${id}/events?limit=10000`).set(bearer(h.admin.token));
    expect(listed.body).toEqual(streamed);

    const log = streamed
      .filter((e) => e.kind === 'log')
      .map((e) => e.data.text as string)
      .join('');
    expect(log).toContain('日本語のログ');
    const bytes = Buffer.from(log, 'utf8');
    const whole = await h.http.get(`/v1/runs/${id}/logs`).set(bearer(h.admin.token));
    expect(whole.text).toBe(log);
    const lines = log
      .split('\n')
      .slice(0, -1)
      .map((l) => `${l}\n`);
    const run = (await h.http.get(`/v1/runs/${id}`).set(bearer(h.admin.token))).body as {
      log_lines: number;
      last_seq: number;
    };
    expect(run).toMatchObject({ log_lines: lines.length, last_seq: streamed.length });
    for (let offset = 0; offset < lines.length; offset += 3) {
      const page = await h.http.get(`/v1/runs/${id}/logs?offset=${offset}&limit=3`).set(bearer(h.admin.token));
      expect(page.text).toBe(lines.slice(offset, offset + 3).join(''));
      expect(page.headers['x-total-lines']).toBe(String(lines.length));
    }
    const at = bytes.indexOf(Buffer.from('🎉'));
    const tail = await h.http.get(`/v1/runs/${id}/logs`).set(bearer(h.admin.token)).set('Range', `bytes=${at}-`);
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe(`bytes ${at}-${bytes.length - 1}/${bytes.length}`);
    expect(tail.text).toBe(bytes.subarray(at).toString('utf8'));
  }, 120_000);
});

/** Polls `done` until it holds; the timeout is a safety net, never a measure of speed. */
async function waitFor(done: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
