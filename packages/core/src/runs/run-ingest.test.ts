import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import type { RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { newId } from '../common/ids.js';
import { createRunIngester, type RunIngester } from './run-ingest.js';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const clock = () => NOW;
const SUBMITTER = 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1';

const runRow = (id: string, over: Partial<RunRow> = {}): RunRow =>
  testRunRow(id, { submitted_by: SUBMITTER, created_at: NOW.toISOString(), ...over });

const counts = (over: Partial<Record<string, number>> = {}) => ({
  ok: 1,
  changed: 0,
  failed: 0,
  unreachable: 0,
  skipped: 0,
  rescued: 0,
  ignored: 0,
  ...over,
});

/** Builds one run's events the way an executor numbers them: seq gap-free from 1. */
function eventsOf(runId: string) {
  let seq = 0;
  const ev = (kind: string, data: Record<string, unknown>, ts = NOW.toISOString()): RunEvent => ({
    run_id: runId,
    seq: ++seq,
    ts,
    kind,
    data,
  });
  return {
    ev,
    running: (worker?: string) => ev('status', { status: 'running', ...(worker ? { worker } : {}) }),
    finished: (conclusion: string, stats: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      ev(
        'status',
        { status: 'finished', conclusion, exit_code: conclusion === 'succeeded' ? 0 : 2, stats, ...extra },
        '2025-03-01T12:05:00.000Z',
      ),
  };
}

describe.each(DIALECTS)('run ingester on %s', (dialect) => {
  let tdb: TestDatabase;
  const published: RunEvent[] = [];
  /** For each published event: was it already in the database when it was published? */
  const storedWhenPublished: boolean[] = [];
  const errors: unknown[] = [];
  let ingester: RunIngester;

  const newIngester = (opts: { batchSize?: number; flushIntervalMs?: number } = {}) =>
    createRunIngester({
      transaction: tdb.db.transaction,
      clock,
      onError: (e) => errors.push(e),
      ...opts,
      publish: async (e) => {
        const stored = await tdb.db.repos.runEvents.list(e.run_id, { afterSeq: e.seq - 1, limit: 1 });
        storedWhenPublished.push(stored[0]?.seq === e.seq);
        published.push(e);
      },
    });

  const createRun = async (over: Partial<RunRow> = {}) => {
    const id = newId('run');
    await tdb.db.repos.runs.insert(runRow(id, over));
    return id;
  };
  const run = async (id: string) => (await tdb.db.repos.runs.findById(id))!;
  const storedEvents = (id: string) => tdb.db.repos.runEvents.list(id, { limit: 10_000 });
  const publishedOf = (id: string) => published.filter((e) => e.run_id === id);

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    ingester = newIngester({ batchSize: 4 });
  });
  afterAll(async () => {
    await ingester.close();
    await tdb.drop();
  });

  it('persists interleaved runs in batches and publishes each run in seq order, only after commit', async () => {
    const [a, b] = [await createRun(), await createRun()];
    const ea = eventsOf(a);
    const eb = eventsOf(b);
    const pushed: RunEvent[] = [];
    for (let i = 0; i < 7; i++) {
      pushed.push(ea.ev('playbook_on_task_start', { task: `a${i}` }));
      if (i % 2 === 0) pushed.push(eb.ev('playbook_on_task_start', { task: `b${i}` }));
    }
    const before = published.length;
    for (const e of pushed) ingester.push(e);
    await ingester.flush();

    expect((await storedEvents(a)).map((e) => [e.seq, e.data.task])).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((i) => [i + 1, `a${i}`]),
    );
    expect((await storedEvents(b)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(publishedOf(a).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(publishedOf(b).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(published.length - before).toBe(11);
    expect(storedWhenPublished.every(Boolean)).toBe(true);
    expect((await run(a)).last_seq).toBe(7);
    expect((await run(b)).last_seq).toBe(4);
  });

  it('flushes on its timer without being asked', async () => {
    const timed = newIngester({ batchSize: 1000, flushIntervalMs: 5 });
    const id = await createRun();
    const delivered = new Promise<void>((resolve) => {
      const poll = () => (publishedOf(id).length > 0 ? resolve() : setTimeout(poll, 2));
      poll();
    });
    timed.push(eventsOf(id).ev('playbook_on_start', { playbook: 'site.yml' }));
    await delivered;
    expect((await storedEvents(id)).map((e) => e.kind)).toEqual(['playbook_on_start']);
    await timed.close();
    expect(() => timed.push(eventsOf(id).ev('x', {}))).toThrow(/closed/);
  });

  it('stores and publishes nothing twice when a batch is delivered again, also by a restarted ingester', async () => {
    const id = await createRun();
    const e = eventsOf(id);
    const batch = [
      e.ev('playbook_on_start', {}),
      e.ev('log', { text: 'PLAY\n', start_line: 1, end_line: 2 }),
      e.ev('runner_on_ok', { host: 'web1', task: 'ping', task_uuid: 'u1' }),
    ];
    for (const x of batch) ingester.push(x);
    await ingester.flush();
    for (const x of batch) ingester.push(x);
    await ingester.flush();
    const restarted = newIngester();
    for (const x of batch) restarted.push(x);
    await restarted.close();

    expect((await storedEvents(id)).map((x) => x.seq)).toEqual([1, 2, 3]);
    expect(publishedOf(id).map((x) => x.seq)).toEqual([1, 2, 3]);
    expect(await tdb.db.repos.runs.taskResultsOf(id)).toHaveLength(1);
    expect(await run(id)).toMatchObject({ last_seq: 3, log_lines: 1, log_bytes: 5 });
  });

  it('records each log chunk with its first line and UTF-8 byte offset, across batches and a restart', async () => {
    const id = await createRun();
    const e = eventsOf(id);
    const chunks = ['PLAY [all] ✓\n', 'ünï 日本語 🎉\nsecond\n', 'plain\n'];
    let line = 1;
    const logEvent = (text: string) => {
      const lines = text.split('\n').length - 1;
      const ev = e.ev('log', { text, start_line: line, end_line: line + lines });
      line += lines;
      return ev;
    };
    ingester.push(logEvent(chunks[0]!));
    ingester.push(e.ev('playbook_on_play_start', { play: 'all' }));
    await ingester.flush();
    ingester.push(logEvent(chunks[1]!));
    await ingester.flush();
    const restarted = newIngester();
    restarted.push(logEvent(chunks[2]!));
    await restarted.close();

    const logs = (await storedEvents(id)).filter((x) => x.kind === 'log');
    const bytes = chunks.map((c) => Buffer.byteLength(c, 'utf8'));
    expect(bytes[0]).toBeGreaterThan(chunks[0]!.length);
    expect(logs.map((x) => [x.log_line, x.log_byte])).toEqual([
      [1, 0],
      [2, bytes[0]],
      [4, bytes[0]! + bytes[1]!],
    ]);
    const whole = Buffer.from(chunks.join(''), 'utf8');
    expect(whole.subarray(logs[1]!.log_byte!, logs[2]!.log_byte!).toString('utf8')).toBe(chunks[1]);
    expect(await run(id)).toMatchObject({ log_lines: 4, log_bytes: whole.length, last_seq: 4 });
    expect((await storedEvents(id)).find((x) => x.kind === 'playbook_on_play_start')).toMatchObject({
      log_line: null,
      log_byte: null,
    });
  });

  it('turns runner_on_* results into task results, but not item results', async () => {
    const id = await createRun({ status: 'running' });
    const e = eventsOf(id);
    const result = (kind: string, host: string, over: Record<string, unknown> = {}) =>
      e.ev(kind, {
        host,
        task: 'install nginx',
        task_uuid: 'uuid-1',
        task_path: 'site.yml:4',
        changed: false,
        start: '2025-03-01T12:00:01.250000+00:00',
        end: '2025-03-01T12:00:02.750000+00:00',
        duration: 1.5,
        res: { msg: 'x' },
        ...over,
      });
    ingester.push(e.ev('playbook_on_task_start', { task: 'install nginx', task_uuid: 'uuid-1' }));
    ingester.push(result('runner_on_ok', 'web1', { changed: true }));
    ingester.push(result('runner_item_on_ok', 'web2', { item: 'a' }));
    ingester.push(result('runner_on_failed', 'web2', { duration: 0.0004 }));
    ingester.push(result('runner_on_skipped', 'web3'));
    ingester.push(result('runner_on_unreachable', 'web4', { start: undefined, end: undefined, duration: undefined }));
    await ingester.flush();

    const rows = await tdb.db.repos.runs.taskResultsOf(id);
    expect(rows.map((r) => [r.seq, r.host, r.status, r.changed, r.duration_ms])).toEqual([
      [2, 'web1', 'ok', 1, 1500],
      [4, 'web2', 'failed', 0, 0],
      [5, 'web3', 'skipped', 0, 1500],
      [6, 'web4', 'unreachable', 0, null],
    ]);
    expect(rows[0]).toMatchObject({
      task: 'install nginx',
      task_uuid: 'uuid-1',
      task_path: 'site.yml:4',
      started_at: '2025-03-01T12:00:01.250Z',
      ended_at: '2025-03-01T12:00:02.750Z',
    });
    expect(rows[3]).toMatchObject({ started_at: null, ended_at: null });
    expect((await storedEvents(id)).map((x) => x.host)).toEqual([null, 'web1', 'web2', 'web2', 'web3', 'web4']);
  });

  it('takes a run from pending to finished on its executor status events: conclusion, exit code, stats, run_hosts', async () => {
    const id = await createRun();
    const e = eventsOf(id);
    const stats = {
      web1: counts({ changed: 2 }),
      web2: counts({ failed: 1 }),
      web3: counts({ ok: 0, unreachable: 1 }),
    };
    ingester.push(e.running('embedded-1'));
    await ingester.flush();
    expect(await run(id)).toMatchObject({ status: 'running', worker: 'embedded-1', started_at: NOW.toISOString() });
    ingester.push(e.running('embedded-2')); // a second running event changes nothing
    ingester.push(e.finished('failed', stats, { reason: 'ansible_error' }));
    await ingester.flush();

    const row = await run(id);
    expect(row).toMatchObject({
      status: 'finished',
      conclusion: 'failed',
      reason: 'ansible_error',
      exit_code: 2,
      worker: 'embedded-1',
      finished_at: '2025-03-01T12:05:00.000Z',
    });
    expect(row.stats).toEqual(stats);
    expect((await tdb.db.repos.runs.hostsOf(id)).map((h) => [h.host, h.outcome, h.changed])).toEqual([
      ['web1', 'changed', 2],
      ['web2', 'failed', 0],
      ['web3', 'unreachable', 0],
    ]);
  });

  it('leaves a run that the API finished first as it is when its executor finishes it late', async () => {
    const id = await createRun({ status: 'running' });
    const e = eventsOf(id);
    ingester.push(e.ev('playbook_on_start', {}));
    expect(await ingester.finish(id, { conclusion: 'error', reason: 'worker_lost' }, ['running'])).toBe(true);
    const lost = await run(id);
    expect(lost).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'worker_lost', last_seq: 2 });
    // The buffered event went in first; the API's status event follows it.
    expect((await storedEvents(id)).map((x) => [x.seq, x.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'status'],
    ]);

    // The lost executor carries on: nothing it sends after the run's final status is stored or published, and its finish changes nothing.
    const publishedBefore = publishedOf(id).length;
    ingester.push(e.ev('log', { text: 'late\n', start_line: 1, end_line: 2 }));
    ingester.push(e.ev('runner_on_ok', { host: 'web1', task: 'late', task_uuid: 'u9' }));
    ingester.push(e.finished('succeeded', { web1: counts() }));
    await ingester.flush();
    expect((await storedEvents(id)).map((x) => [x.seq, x.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'status'],
    ]);
    expect(publishedOf(id)).toHaveLength(publishedBefore);
    const after = await run(id);
    expect(after).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'worker_lost',
      finished_at: NOW.toISOString(),
      exit_code: null,
      stats: null,
      last_seq: 2,
      log_bytes: 0,
    });
    expect(await tdb.db.repos.runs.hostsOf(id)).toEqual([]);
    expect(await tdb.db.repos.runs.taskResultsOf(id)).toEqual([]);
  });

  it('stores nothing after an executor’s own final status: not in the same batch, not later, not from a restarted ingester', async () => {
    const id = await createRun({ status: 'running' });
    const e = eventsOf(id);
    ingester.push(e.ev('playbook_on_start', {}));
    ingester.push(e.finished('succeeded', { web1: counts() }));
    // Forged or late: they follow the end in the same batch.
    ingester.push(e.ev('runner_on_failed', { host: 'web1', task: 'forged', task_uuid: 'f1' }));
    ingester.push(e.ev('status', { status: 'running', worker: 'intruder' }));
    await ingester.flush();
    ingester.push(e.finished('failed', { web1: counts({ failed: 1 }) }));
    await ingester.flush();
    const restarted = newIngester();
    restarted.push(e.ev('log', { text: 'later still\n', start_line: 1, end_line: 2 }));
    await restarted.close();

    expect((await storedEvents(id)).map((x) => [x.seq, x.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'status'],
    ]);
    expect(publishedOf(id).map((x) => x.seq)).toEqual([1, 2]);
    expect(await run(id)).toMatchObject({
      status: 'finished',
      conclusion: 'succeeded',
      last_seq: 2,
      worker: null,
      log_bytes: 0,
    });
    expect(await tdb.db.repos.runs.taskResultsOf(id)).toEqual([]);
    expect((await tdb.db.repos.runs.hostsOf(id)).map((h) => h.outcome)).toEqual(['ok']);
  });

  it('finishes from the API only from the given statuses, appending a status event with the next seq', async () => {
    const id = await createRun({ status: 'held' });
    const before = published.length;
    expect(await ingester.finish(id, { conclusion: 'canceled' }, ['pending', 'running'])).toBe(false);
    expect(await run(id)).toEqual(runRow(id, { status: 'held' }));
    expect(await storedEvents(id)).toEqual([]);
    expect(published.length).toBe(before);

    expect(await ingester.finish(id, { conclusion: 'rejected', reason: 'denied' }, ['held'])).toBe(true);
    expect(await run(id)).toMatchObject({
      status: 'finished',
      conclusion: 'rejected',
      reason: 'denied',
      finished_at: NOW.toISOString(),
      last_seq: 1,
    });
    const [event] = await storedEvents(id);
    expect(event).toMatchObject({ seq: 1, kind: 'status', ts: NOW.toISOString() });
    expect(event!.data).toEqual({ status: 'finished', conclusion: 'rejected', reason: 'denied' });
    expect(publishedOf(id)).toEqual([
      {
        run_id: id,
        seq: 1,
        ts: NOW.toISOString(),
        kind: 'status',
        data: { status: 'finished', conclusion: 'rejected', reason: 'denied' },
      },
    ]);
    expect(await ingester.finish(id, { conclusion: 'canceled' }, ['held'])).toBe(false);
    expect(await ingester.finish(newId('run'), { conclusion: 'canceled' }, ['held'])).toBe(false);
  });

  it('claims a pending run once, and not after it was canceled', async () => {
    const id = await createRun();
    expect(await ingester.claim(id, 'embedded-1')).toBe(true);
    expect(await run(id)).toMatchObject({ status: 'running', worker: 'embedded-1', started_at: NOW.toISOString() });
    expect(await ingester.claim(id, 'embedded-2')).toBe(false);
    expect((await run(id)).worker).toBe('embedded-1');

    const canceled = await createRun();
    expect(await ingester.finish(canceled, { conclusion: 'canceled' }, ['pending', 'held'])).toBe(true);
    expect(await ingester.claim(canceled, 'embedded-1')).toBe(false);
    expect(await run(canceled)).toMatchObject({
      status: 'finished',
      conclusion: 'canceled',
      worker: null,
      started_at: null,
    });
    expect(await ingester.claim(newId('run'), 'embedded-1')).toBe(false);
  });

  describe('split runs', () => {
    const createSplit = async (shards: number, over: Partial<RunRow> = {}) => {
      const parent = await createRun({ kind: 'split', shard_count: shards, ...over });
      const ids: string[] = [];
      for (let k = 0; k < shards; k++)
        ids.push(await createRun({ kind: 'shard', parent_id: parent, shard_index: k, shard_count: shards }));
      return { parent, shards: ids };
    };
    /** One shard's whole life through executor events, conclusion given. */
    const runShard = (id: string, conclusion: string, host: string, c = counts()) => {
      const e = eventsOf(id);
      return [
        e.running(),
        e.ev('log', { text: `ok: [${host}]\n`, start_line: 1, end_line: 2 }),
        e.finished(conclusion, { [host]: c }),
      ];
    };
    const parentStatuses = (id: string) => publishedOf(id).map((e) => [e.seq, e.data.status, e.data.conclusion]);

    it('moves the parent to running when a shard is claimed, and to succeeded with merged stats when the last shard ends', async () => {
      const { parent, shards } = await createSplit(3);
      expect(await ingester.claim(shards[0]!, 'embedded-1')).toBe(true);
      expect(await run(parent)).toMatchObject({ status: 'running', started_at: NOW.toISOString(), last_seq: 1 });
      expect(parentStatuses(parent)).toEqual([[1, 'running', undefined]]);
      expect(await ingester.claim(shards[1]!, 'embedded-2')).toBe(true);
      expect(parentStatuses(parent)).toHaveLength(1);

      for (const e of [
        ...runShard(shards[0]!, 'succeeded', 'web1', counts({ changed: 1 })),
        ...runShard(shards[1]!, 'succeeded', 'web2'),
      ])
        ingester.push(e);
      await ingester.flush();
      expect((await run(parent)).status).toBe('running');
      for (const e of runShard(shards[2]!, 'succeeded', 'web3', counts({ ok: 4 }))) ingester.push(e);
      await ingester.flush();

      const row = await run(parent);
      expect(row).toMatchObject({
        status: 'finished',
        conclusion: 'succeeded',
        exit_code: null,
        reason: null,
        last_seq: 2,
        finished_at: '2025-03-01T12:05:00.000Z',
      });
      expect(row.stats).toEqual({ web1: counts({ changed: 1 }), web2: counts(), web3: counts({ ok: 4 }) });
      expect((await tdb.db.repos.runs.hostsOf(parent)).map((h) => [h.host, h.outcome])).toEqual([
        ['web1', 'changed'],
        ['web2', 'ok'],
        ['web3', 'ok'],
      ]);
      expect(parentStatuses(parent)).toEqual([
        [1, 'running', undefined],
        [2, 'finished', 'succeeded'],
      ]);
      expect((await storedEvents(parent)).map((e) => e.seq)).toEqual([1, 2]);
    });

    it('moves a pending parent to running on a shard’s running event (queue mode, no claim)', async () => {
      const { parent, shards } = await createSplit(2);
      ingester.push(eventsOf(shards[1]!).running('daemon-1'));
      await ingester.flush();
      expect(await run(parent)).toMatchObject({ status: 'running', last_seq: 1 });
      expect(await run(shards[1]!)).toMatchObject({ status: 'running', worker: 'daemon-1' });
    });

    it.each([
      { shards: ['succeeded', 'failed', 'canceled'], expected: 'failed' },
      { shards: ['succeeded', 'error', 'succeeded'], expected: 'failed' },
      { shards: ['succeeded', 'canceled', 'succeeded'], expected: 'canceled' },
      { shards: ['succeeded', 'succeeded', 'succeeded'], cancelRequested: true, expected: 'canceled' },
      { shards: ['failed', 'succeeded', 'succeeded'], cancelRequested: true, expected: 'canceled' },
    ])(
      'concludes $expected from shards $shards (cancel requested: $cancelRequested)',
      async ({ shards: conclusions, cancelRequested, expected }) => {
        const { parent, shards } = await createSplit(
          3,
          cancelRequested ? { cancel_requested_at: NOW.toISOString() } : {},
        );
        // All three finish in one batch: the parent is finished once, by the last of them.
        shards.forEach((id, k) => runShard(id, conclusions[k]!, `web${k}`).forEach((e) => ingester.push(e)));
        await ingester.flush();
        expect(await run(parent)).toMatchObject({ status: 'finished', conclusion: expected });
        expect(parentStatuses(parent)).toEqual([
          [1, 'running', undefined],
          [2, 'finished', expected],
        ]);
      },
    );

    it('finishes a pending parent canceled when the API cancels all its pending shards', async () => {
      const { parent, shards } = await createSplit(2);
      expect(await ingester.finish(shards[0]!, { conclusion: 'canceled' }, ['pending'])).toBe(true);
      expect((await run(parent)).status).toBe('pending');
      expect(await ingester.finish(shards[1]!, { conclusion: 'canceled' }, ['pending'])).toBe(true);
      expect(await run(parent)).toMatchObject({
        status: 'finished',
        conclusion: 'canceled',
        started_at: null,
        stats: {},
      });
      expect(parentStatuses(parent)).toEqual([[1, 'finished', 'canceled']]);
      expect(await ingester.finish(shards[1]!, { conclusion: 'canceled' }, ['pending'])).toBe(false);
    });

    it('finishes the parent exactly once when its last two shards finish at the same time in two ingesters', async () => {
      const other = newIngester();
      for (let i = 0; i < 6; i++) {
        const { parent, shards } = await createSplit(2, { status: 'running' });
        for (const s of shards) await tdb.db.repos.runs.update(s, { status: 'running' });
        const results = await Promise.all([
          ingester.finish(shards[0]!, { conclusion: 'error', reason: 'worker_lost' }, ['running']),
          other.finish(shards[1]!, { conclusion: 'error', reason: 'worker_lost' }, ['running']),
        ]);
        expect(results).toEqual([true, true]);
        expect(await run(parent)).toMatchObject({ status: 'finished', conclusion: 'failed', last_seq: 1 });
        expect((await storedEvents(parent)).map((e) => e.data)).toEqual([{ status: 'finished', conclusion: 'failed' }]);
      }
      await other.close();
    });
  });

  describe('ingestBatch (queue mode: events read from the stream, perhaps by several replicas)', () => {
    it('defers the events after a gap, stores them once the gap is filled, and takes replays as stored', async () => {
      const id = await createRun();
      const ev = eventsOf(id);
      const [e1, e2, e3, e4, e5] = [
        ev.running('w1'),
        ev.ev('playbook_on_start', {}),
        ev.ev('playbook_on_task_start', { task: 't' }),
        ev.ev('runner_on_ok', { host: 'h1' }),
        ev.finished('succeeded', { h1: counts() }),
      ];
      const before = published.length;

      // Another replica still holds 1–2: 4 and 3 (out of order) wait, unstored and unpublished.
      expect((await ingester.ingestBatch([e4!, e3!])).deferred.map((e) => e.seq)).toEqual([3, 4]);
      expect(await storedEvents(id)).toEqual([]);
      expect(published.length).toBe(before);

      expect((await ingester.ingestBatch([e2!, e1!])).deferred).toEqual([]);
      expect((await ingester.ingestBatch([e3!, e5!, e4!])).deferred).toEqual([]);
      // Delivered again (a replica claimed entries whose owner had stored them but died before acknowledging).
      expect((await ingester.ingestBatch([e2!, e5!])).deferred).toEqual([]);

      expect((await storedEvents(id)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(publishedOf(id).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(await run(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded', worker: 'w1', last_seq: 5 });
    });

    it('stores events after a gap when told to accept it (the stream gave up waiting), and drops the lost part if it comes late', async () => {
      const id = await createRun();
      const ev = eventsOf(id);
      const events = [ev.running('w1'), ev.ev('playbook_on_start', {}), ev.finished('succeeded', { h1: counts() })];
      expect((await ingester.ingestBatch([events[2]!])).deferred.map((e) => e.seq)).toEqual([3]);
      expect(await ingester.ingestBatch([events[2]!], { acceptGaps: true })).toEqual({ deferred: [] });
      expect(await run(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded', last_seq: 3 });
      await ingester.ingestBatch([events[0]!, events[1]!]);
      expect((await storedEvents(id)).map((e) => e.seq)).toEqual([3]);
    });

    it('keeps runs apart: a gap in one run defers only that run', async () => {
      const [a, b] = [await createRun(), await createRun()];
      const ea = eventsOf(a);
      const eb = eventsOf(b);
      const a1 = ea.ev('playbook_on_start', {});
      const a2 = ea.ev('playbook_on_task_start', { task: 'x' });
      const b1 = eb.ev('playbook_on_start', {});
      eb.ev('playbook_on_task_start', { task: 'skipped' });
      const b3 = eb.ev('playbook_on_task_start', { task: 'y' });
      const { deferred } = await ingester.ingestBatch([b3, a2, b1, a1]);
      expect(deferred.map((e) => [e.run_id, e.seq])).toEqual([[b, 3]]);
      expect((await storedEvents(a)).map((e) => e.seq)).toEqual([1, 2]);
      expect((await storedEvents(b)).map((e) => e.seq)).toEqual([1]);
    });

    it('takes two replicas ingesting one run at once without losing or doubling an event', async () => {
      const other = newIngester();
      const id = await createRun();
      const ev = eventsOf(id);
      const events = Array.from({ length: 40 }, (_, i) => ev.ev('playbook_on_task_start', { task: `t${i}` }));
      // Each replica got every other entry of the stream; whatever one defers it offers again, as the consumer does.
      let left = [events.filter((_, i) => i % 2 === 0), events.filter((_, i) => i % 2 === 1)];
      for (let round = 0; round < 50 && left.some((l) => l.length > 0); round++) {
        const results = await Promise.all([ingester.ingestBatch(left[0]!), other.ingestBatch(left[1]!)]);
        left = results.map((r) => r.deferred);
      }
      expect(left).toEqual([[], []]);
      expect((await storedEvents(id)).map((e) => e.seq)).toEqual(events.map((e) => e.seq));
      expect(new Set(publishedOf(id).map((e) => e.seq)).size).toBe(40);
      await other.close();
    });
  });

  it('rejects flush when persisting fails, publishes nothing of that run, and keeps the other runs of the batch', async () => {
    const failing = newIngester({ batchSize: 100 });
    const good = await createRun();
    const unknown = newId('run');
    const before = published.length;
    const errorsBefore = errors.length;
    failing.push(eventsOf(good).ev('playbook_on_start', {}));
    failing.push(eventsOf(unknown).ev('playbook_on_start', {}));
    await expect(failing.flush()).rejects.toThrow(new RegExp(`persisting events of run ${unknown} failed`));
    expect(errors.length).toBe(errorsBefore + 1);
    expect(published.slice(before).map((e) => e.run_id)).toEqual([good]);
    expect(await storedEvents(unknown)).toEqual([]);
    expect((await storedEvents(good)).map((e) => e.seq)).toEqual([1]);
    // Reported once: the next flush with nothing failing resolves.
    await expect(failing.flush()).resolves.toBeUndefined();

    // A batch of only the unknown run fails whole too, and nothing of it is published.
    failing.push(eventsOf(unknown).ev('playbook_on_start', {}));
    await expect(failing.close()).rejects.toThrow(/does not exist/);
    expect(published.length).toBe(before + 1);
  });
});
