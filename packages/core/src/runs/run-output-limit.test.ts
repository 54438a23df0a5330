// The ingester holds the output limit itself, whichever executor wrote the events: a writer that never cuts (a
// worker set to a larger limit, a foreign writer on the stream) still leaves a bounded log ending in one notice.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { outputTruncatedLine, type RunEvent } from '@baton/contracts';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { newId } from '../common/ids.js';
import { createRunIngester, type RunIngester } from './run-ingest.js';
import { createRunOutputService } from './run-output.service.js';
import { OWN_LINES_ALLOWANCE_BYTES } from './run-output-limit.js';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const LIMIT = 4 * 1024;
const BOUND = LIMIT + OWN_LINES_ALLOWANCE_BYTES;

/** One run's events, numbered like an executor does: seq gap-free from 1, log chunks tiling the lines. */
function writer(runId: string) {
  let seq = 0;
  let line = 1;
  const ev = (kind: string, data: Record<string, unknown>): RunEvent => ({
    run_id: runId,
    seq: ++seq,
    ts: NOW.toISOString(),
    kind,
    data,
  });
  const log = (text: string, extra: Record<string, unknown> = {}) => {
    const lines = text.split('\n').length - 1;
    const e = ev('log', { text, start_line: line, end_line: line + lines, ...extra });
    line += lines;
    return e;
  };
  const result = (task: string) =>
    ev('runner_on_ok', { host: 'web1', task, start_line: line - 1, end_line: line, res: { stdout: 'x'.repeat(500) } });
  return { ev, log, result, line: () => line };
}

describe.each(DIALECTS)('the output limit in the ingester on %s', (dialect) => {
  let tdb: TestDatabase;
  let ingester: RunIngester;
  const published: RunEvent[] = [];
  const output = () =>
    createRunOutputService({
      runEvents: tdb.db.repos.runEvents,
      runs: tdb.db.repos.runs,
      access: { visibleRun: async (_p, id) => (await tdb.db.repos.runs.findById(id))! },
    });
  const admin = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1', role: 'admin' } as never;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    ingester = createRunIngester({
      transaction: tdb.db.transaction,
      clock: () => NOW,
      publish: async (e) => void published.push(e),
      outputLimitBytes: LIMIT,
      batchSize: 7,
    });
  });
  afterAll(async () => {
    await ingester.close();
    await tdb.drop();
  });

  const newRun = async () => {
    const id = newId('run');
    await tdb.db.repos.runs.insert(testRunRow(id, { status: 'running', created_at: NOW.toISOString() }));
    return id;
  };

  it('cuts a writer that never does at the bound, with one notice; every event is stored, later ones without res', async () => {
    const id = await newRun();
    const w = writer(id);
    const events: RunEvent[] = [w.ev('status', { status: 'running' })];
    for (let i = 0; i < 400; i++) {
      events.push(w.log(`${String(i).padStart(4, '0')} ${'y'.repeat(250)}\n`));
      events.push(w.result(`task ${i}`));
    }
    events.push(w.ev('playbook_on_stats', { stats: { web1: { ok: 400 } } }));
    events.push(w.ev('status', { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} }));
    // In batches, as the queue-mode stream delivers them.
    for (let i = 0; i < events.length; i += 50) await ingester.ingestBatch(events.slice(i, i + 50));

    const run = (await tdb.db.repos.runs.findById(id))!;
    expect(run).toMatchObject({ output_truncated: 1, status: 'finished', conclusion: 'succeeded' });
    expect(run.last_seq).toBe(events.length);
    expect(run.log_bytes).toBeLessThanOrEqual(BOUND);
    expect(run.log_bytes).toBeGreaterThan(BOUND - 300);
    const stored = await tdb.db.repos.runEvents.list(id, { limit: 10_000 });
    expect(stored.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    const { text, totalLines } = await output().logLines(admin, id, {});
    const notice = outputTruncatedLine(LIMIT);
    expect(text.split(notice)).toEqual([expect.any(String), '']);
    expect(Buffer.byteLength(text)).toBe(run.log_bytes);
    expect(text.split('\n').length - 1).toBe(totalLines);
    // Line and byte reads agree on the cut log: its last line is the notice.
    const last = await output().logLines(admin, id, { offset: totalLines - 1, limit: 1 });
    expect(last.text).toBe(notice);
    const tail = await output().logBytes(admin, id, { suffix: Buffer.byteLength(notice) });
    expect(tail.body.toString('utf8')).toBe(notice);

    const noticeSeq = stored.find((e) => e.kind === 'log' && e.data.output_truncated === true)!.seq;
    expect(stored.filter((e) => e.data.output_truncated === true)).toHaveLength(1);
    const after = stored.filter((e) => e.seq > noticeSeq);
    expect(after.filter((e) => e.kind === 'log').every((e) => e.data.text === '' && e.log_line === null)).toBe(true);
    for (const e of after.filter((x) => x.kind === 'runner_on_ok')) {
      expect(e.data).toEqual({ host: 'web1', task: expect.any(String), truncated: { reason: 'output_limit' } });
    }
    expect(stored.find((e) => e.kind === 'playbook_on_stats')!.data).toEqual({ stats: { web1: { ok: 400 } } });
    // What SSE clients got is what was stored.
    expect(published.filter((e) => e.run_id === id).map((e) => e.data)).toEqual(stored.map((e) => e.data));
  });

  it('keeps a cut executor log as it is (its notice, its own lines after it) and records output_truncated', async () => {
    const id = await newRun();
    const w = writer(id);
    const notice = outputTruncatedLine(LIMIT);
    await ingester.ingestBatch([
      w.ev('status', { status: 'running' }),
      w.log('a'.repeat(LIMIT - 1) + '\n'),
      w.log(notice, { output_truncated: true }),
      w.ev('runner_on_ok', { host: 'web1', truncated: { reason: 'output_limit' } }),
      w.log('baton: the run was canceled\n'),
      w.ev('status', { status: 'finished', conclusion: 'canceled', output_truncated: true }),
    ]);
    const run = (await tdb.db.repos.runs.findById(id))!;
    expect(run).toMatchObject({ output_truncated: 1, conclusion: 'canceled', log_lines: 3 });
    const { text } = await output().logLines(admin, id, {});
    expect(text).toBe(`${'a'.repeat(LIMIT - 1)}\n${notice}baton: the run was canceled\n`);
  });

  it('leaves a run under the limit untouched, output_truncated false', async () => {
    const id = await newRun();
    const w = writer(id);
    const events = [
      w.ev('status', { status: 'running' }),
      w.log('hello\n'),
      w.result('t'),
      w.ev('status', { status: 'finished', conclusion: 'succeeded' }),
    ];
    await ingester.ingestBatch(events);
    expect((await tdb.db.repos.runs.findById(id))!.output_truncated).toBe(0);
    const stored = await tdb.db.repos.runEvents.list(id, { limit: 100 });
    expect(stored.map((e) => e.data)).toEqual(events.map((e) => e.data));
  });
});
