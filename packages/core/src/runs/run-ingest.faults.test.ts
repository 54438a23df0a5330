// The ingester against what can go wrong on the way into the database: text PostgreSQL refuses, a database that
// drops out for a moment or for good, one event that can never be stored, and envelopes that name no run.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import type { RunEventRow, RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { newId } from '../common/ids.js';
import { createRunIngester, type IngestTx, isDeterministicFailure } from './run-ingest.js';

const NOW = new Date('2025-03-01T12:00:00.000Z');
/** Short waits between retries: the tests count attempts, never time. */
const RETRY_DELAYS_MS = [1, 1, 1];

const runRow = (id: string, over: Partial<RunRow> = {}): RunRow =>
  testRunRow(id, { status: 'running', created_at: NOW.toISOString(), ...over });

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

function eventsOf(runId: string) {
  let seq = 0;
  return (kind: string, data: Record<string, unknown>): RunEvent => ({
    run_id: runId,
    seq: ++seq,
    ts: NOW.toISOString(),
    kind,
    data,
  });
}

const errorWithCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDeterministicFailure', () => {
  it.each([
    ['22021', true],
    ['22P05', true],
    ['23505', true],
    ['42P01', true],
    ['54000', true],
    ['SQLITE_CONSTRAINT_FOREIGNKEY', true],
    ['SQLITE_TOOBIG', true],
    ['SQLITE_MISMATCH', true],
    ['08006', false],
    ['40001', false],
    ['40P01', false],
    ['57P01', false],
    ['53300', false],
    ['SQLITE_BUSY', false],
    ['SQLITE_LOCKED', false],
    ['SQLITE_IOERR_WRITE', false],
    ['SQLITE_FULL', false],
    ['ECONNRESET', false],
    ['ECONNREFUSED', false],
    ['EPIPE', false],
  ])('a database error coded %s: %p', (code, expected) => {
    expect(isDeterministicFailure(errorWithCode('x', code))).toBe(expected);
  });

  it('counts our own code choking as deterministic, anything else as passing', () => {
    expect(isDeterministicFailure(new TypeError('x is not a function'))).toBe(true);
    expect(isDeterministicFailure(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isDeterministicFailure(undefined)).toBe(false);
  });
});

describe.each(DIALECTS)('run ingester faults on %s', (dialect) => {
  let tdb: TestDatabase;
  const published: RunEvent[] = [];
  const errors: Error[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
  });
  afterAll(() => tdb.drop());

  /** An ingester whose transactions pass through `wrap` (a fault injected in front of the real database). */
  const ingesterWith = (wrap: (tx: IngestTx) => IngestTx = (tx) => tx, opts: { batchSize?: number } = {}) =>
    createRunIngester({
      transaction: (fn) => tdb.db.transaction((r) => fn(wrap(r))),
      clock: () => NOW,
      retryDelaysMs: RETRY_DELAYS_MS,
      publish: async (e) => void published.push(e),
      onError: (e) => errors.push(e as Error),
      ...opts,
    });
  /** The events' inserts fail with `fail(rows)` when it returns an error. */
  const failingInserts =
    (fail: (rows: RunEventRow[]) => Error | undefined) =>
    (tx: IngestTx): IngestTx => ({
      ...tx,
      runEvents: {
        ...tx.runEvents,
        insertBatch: async (rows) => {
          const err = fail(rows);
          if (err) throw err;
          return tx.runEvents.insertBatch(rows);
        },
      },
    });

  const createRun = async (over: Partial<RunRow> = {}) => {
    const id = newId('run');
    await tdb.db.repos.runs.insert(runRow(id, over));
    return id;
  };
  const run = async (id: string) => (await tdb.db.repos.runs.findById(id))!;
  const stored = (id: string) => tdb.db.repos.runEvents.list(id, { limit: 1000 });
  const publishedOf = (id: string) => published.filter((e) => e.run_id === id);

  it('strips NUL from every text column it writes, so PostgreSQL takes the batch, and keeps it in the JSON data', async () => {
    const id = await createRun({ status: 'pending' });
    const ev = eventsOf(id);
    const ingester = ingesterWith();
    ingester.push(ev('status', { status: 'running', worker: 'exec\0utor-1' }));
    ingester.push(ev('playbook_on_task_start', { task: 'ins\0tall', task_uuid: 'u\0u' }));
    ingester.push(
      ev('runner_on_failed', {
        host: 'web\u00001',
        task: 'ins\0tall',
        task_uuid: 'u\0u',
        task_path: 'site.yml\0:4',
        start: '2025-03-01T12:00:01\0Z',
      }),
    );
    ingester.push(ev('custom\0kind', { text: 'a\0b' }));
    ingester.push({
      ...ev('status', {
        status: 'finished',
        conclusion: 'failed',
        reason: 'ansi\0ble_error',
        exit_code: 2,
        stats: { 'web\u00001': counts({ failed: 1 }) },
      }),
      ts: '2025-03-01T12:05:00\0Z',
    });
    await ingester.close();

    expect(errors).toEqual([]);
    const rows = await stored(id);
    expect(rows.map((r) => [r.seq, r.kind, r.host])).toEqual([
      [1, 'status', null],
      [2, 'playbook_on_task_start', null],
      [3, 'runner_on_failed', 'web1'],
      [4, 'customkind', null],
      [5, 'status', null],
    ]);
    expect(rows[2]!.data).toMatchObject({ host: 'web\u00001' });
    expect(rows.every((r) => !r.ts.includes('\0'))).toBe(true);
    expect(await tdb.db.repos.runs.taskResultsOf(id)).toEqual([
      expect.objectContaining({
        host: 'web1',
        task: 'install',
        task_uuid: 'uu',
        task_path: 'site.yml:4',
        status: 'failed',
        started_at: '2025-03-01T12:00:01.000Z',
      }),
    ]);
    expect(await run(id)).toMatchObject({
      status: 'finished',
      conclusion: 'failed',
      reason: 'ansible_error',
      worker: 'executor-1',
      last_seq: 5,
    });
    expect((await tdb.db.repos.runs.hostsOf(id)).map((h) => [h.host, h.outcome])).toEqual([['web1', 'failed']]);
  });

  it('retries a batch the database refused for a moment, and loses nothing', async () => {
    const id = await createRun();
    const ev = eventsOf(id);
    let attempts = 0;
    const ingester = ingesterWith(
      failingInserts(() =>
        ++attempts <= 2 ? errorWithCode('Connection terminated unexpectedly', 'ECONNRESET') : undefined,
      ),
    );
    const before = errors.length;
    ingester.push(ev('playbook_on_start', {}));
    ingester.push(
      ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: { web1: counts() } }),
    );
    await expect(ingester.close()).resolves.toBeUndefined();

    expect(attempts).toBe(3);
    expect(errors.length).toBe(before);
    expect((await stored(id)).map((r) => [r.seq, r.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'status'],
    ]);
    expect(publishedOf(id).map((e) => e.seq)).toEqual([1, 2]);
    expect(await run(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
  });

  it('gives up after three retries when the database stays away: flush rejects, and nothing is stored in place of the events', async () => {
    const id = await createRun();
    const ev = eventsOf(id);
    let attempts = 0;
    const ingester = ingesterWith(
      failingInserts(() => (++attempts, errorWithCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))),
    );
    ingester.push(ev('playbook_on_start', {}));
    ingester.push(ev('log', { text: 'PLAY\n', start_line: 1, end_line: 2 }));
    await expect(ingester.close()).rejects.toThrow(
      new RegExp(`persisting events of run ${id} failed: connect ECONNREFUSED`),
    );

    expect(attempts).toBe(1 + RETRY_DELAYS_MS.length);
    expect(await stored(id)).toEqual([]);
    expect(publishedOf(id)).toEqual([]);
    expect(await run(id)).toMatchObject({ status: 'running', last_seq: 0 });
  });

  it('rejects ingestBatch when the database stays away, so the stream keeps the events; they land once it is back', async () => {
    const id = await createRun();
    const ev = eventsOf(id);
    let down = true;
    const ingester = ingesterWith(
      failingInserts(() => (down ? errorWithCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED') : undefined)),
    );
    const events = [
      ev('playbook_on_start', {}),
      ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: { web1: counts() } }),
    ];
    await expect(ingester.ingestBatch(events)).rejects.toThrow(/ECONNREFUSED/);
    expect(await stored(id)).toEqual([]);
    down = false;
    await expect(ingester.ingestBatch(events)).resolves.toEqual({ deferred: [] });
    expect((await stored(id)).map((r) => r.seq)).toEqual([1, 2]);
    expect(await run(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
    await ingester.close();
  });

  it('stores an event the database always refuses as an invalid event with its seq, and the rest of the batch, the final status too', async () => {
    const [id, other] = [await createRun(), await createRun()];
    const ev = eventsOf(id);
    const evOther = eventsOf(other);
    let attempts = 0;
    // Any insert holding the poisoned event fails, every time, as PostgreSQL fails a value it cannot take.
    const ingester = ingesterWith(
      failingInserts(
        (rows) => (
          ++attempts,
          rows.some((r) => JSON.stringify(r.data).includes('poison'))
            ? errorWithCode('invalid byte sequence for encoding "UTF8": 0x00', '22021')
            : undefined
        ),
      ),
    );
    ingester.push(ev('playbook_on_start', {}));
    ingester.push(evOther('playbook_on_start', {}));
    ingester.push(ev('runner_on_ok', { host: 'web1', task: 'poison', task_uuid: 'p1' }));
    ingester.push(ev('log', { text: 'ok: [web1]\n', start_line: 1, end_line: 2 }));
    ingester.push(
      ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: { web1: counts() } }),
    );
    ingester.push(evOther('log', { text: 'fine\n', start_line: 1, end_line: 2 }));
    await expect(ingester.close()).resolves.toBeUndefined();

    const rows = await stored(id);
    expect(rows.map((r) => [r.seq, r.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'invalid'],
      [3, 'log'],
      [4, 'status'],
    ]);
    expect(rows[1]!.data).toEqual({
      kind: 'runner_on_ok',
      reason: 'not storable: invalid byte sequence for encoding "UTF8": 0x00',
    });
    expect(publishedOf(id).map((e) => [e.seq, e.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'invalid'],
      [3, 'log'],
      [4, 'status'],
    ]);
    expect(await run(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded', last_seq: 4, log_lines: 1 });
    expect(await tdb.db.repos.runs.taskResultsOf(id)).toEqual([]);
    // The other run of the batch is whole.
    expect((await stored(other)).map((r) => r.kind)).toEqual(['playbook_on_start', 'log']);
    // Reported, once, naming the event; and no retry was spent on a failure that cannot pass.
    expect(errors.filter((e) => e.message.includes(`event 2 of run ${id}`))).toHaveLength(1);
    expect(attempts).toBeLessThan(12);
  });

  it('still ends a run whose final status event cannot be stored: error / invalid_final_event after the invalid event', async () => {
    const id = await createRun();
    const ev = eventsOf(id);
    const ingester = ingesterWith(
      failingInserts((rows) =>
        rows.some((r) => JSON.stringify(r.data).includes('"succeeded"'))
          ? errorWithCode('value too long', '22001')
          : undefined,
      ),
    );
    ingester.push(ev('playbook_on_start', {}));
    ingester.push(
      ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: { web1: counts() } }),
    );
    await expect(ingester.close()).resolves.toBeUndefined();

    expect((await stored(id)).map((r) => [r.seq, r.kind, r.data.reason])).toEqual([
      [1, 'playbook_on_start', undefined],
      [2, 'invalid', 'not storable: value too long'],
      [3, 'status', 'invalid_final_event'],
    ]);
    expect(await run(id)).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'invalid_final_event',
      last_seq: 3,
    });
    expect(publishedOf(id).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('reports a run it could not end that way either (flush rejects), and leaves it running for the recovery sweep', async () => {
    const id = await createRun();
    const ev = eventsOf(id);
    // Every `finished` status fails, the API's own too.
    const ingester = ingesterWith(
      failingInserts((rows) =>
        rows.some((r) => JSON.stringify(r.data).includes('"finished"'))
          ? errorWithCode('value too long', '22001')
          : undefined,
      ),
    );
    ingester.push(ev('playbook_on_start', {}));
    ingester.push(
      ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: { web1: counts() } }),
    );
    await expect(ingester.close()).rejects.toThrow(new RegExp(`persisting events of run ${id} failed: value too long`));
    expect((await stored(id)).map((r) => r.kind)).toEqual(['playbook_on_start', 'invalid']);
    expect(await run(id)).toMatchObject({ status: 'running', last_seq: 2 });
  });

  it('drops envelopes with no valid run id or seq (reported), and stores an event with odd kind or data as invalid', async () => {
    const id = await createRun();
    const ingester = ingesterWith();
    const before = errors.length;
    const base = { ts: NOW.toISOString(), kind: 'playbook_on_start', data: {} };
    ingester.push({ ...base, run_id: id, seq: 1 });
    ingester.push({ ...base, run_id: 'run_\0nope', seq: 1 });
    ingester.push({ ...base, run_id: id, seq: 2 ** 31 });
    ingester.push({ ...base, run_id: id, seq: 0 });
    ingester.push({ ...base, run_id: id, seq: 2.5 });
    ingester.push({ ...base, run_id: id, seq: 2, data: null as unknown as Record<string, unknown> });
    ingester.push({ ...base, run_id: id, seq: 3, kind: 42 as unknown as string });
    ingester.push({ ...base, run_id: id, seq: 4, ts: 'yesterday' });
    await expect(ingester.close()).rejects.toThrow(/4 event\(s\) with no valid run id or seq were dropped/);

    expect(errors.length).toBe(before + 1);
    const rows = await stored(id);
    expect(rows.map((r) => [r.seq, r.kind])).toEqual([
      [1, 'playbook_on_start'],
      [2, 'invalid'],
      [3, 'invalid'],
      [4, 'playbook_on_start'],
    ]);
    expect(rows[1]!.data).toEqual({ kind: 'playbook_on_start', reason: 'kind must be a string and data an object' });
    expect(rows[3]!.ts).toBe(NOW.toISOString());
  });
});
