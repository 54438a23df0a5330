import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunEventRow, RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { NotFoundError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { createRunAccess } from './run-access.js';
import { createRunIngester } from './run-ingest.js';
import { createRunOutputService, isFinalEvent, type RunOutputService } from './run-output.service.js';

const admin: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA0', username: 'root', role: 'admin' };
const submitter: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1', username: 'op', role: 'operator' };
const stranger: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA2', username: 'other', role: 'operator' };

/** Chunks as the executor cuts them: whole lines, some with multibyte characters (2, 3 and 4 bytes in UTF-8). */
const CHUNKS = [
  'PLAY [all] ****\n',
  'TASK [ping] ✓\nok: [web1]\n',
  'ünïcode 日本語 🎉\n',
  'a\nb\nc\n',
  '\n',
  'PLAY RECAP\n',
];
const LOG = CHUNKS.join('');
const LOG_BYTES = Buffer.from(LOG, 'utf8');
const LOG_LINES = LOG.split('\n')
  .slice(0, -1)
  .map((l) => `${l}\n`);

const runRow = (id: string, over: Partial<RunRow> = {}): RunRow =>
  testRunRow(id, { status: 'running', submitted_by: submitter.id, ...over });

/** Stores a run and its events the way the ingester does: log chunks carry their first line and byte offset, the run its totals. */
async function seedRun(
  tdb: TestDatabase,
  chunks: string[],
  extra: Array<{ kind: string; host?: string; data: Record<string, unknown> }> = [],
) {
  const id = newId('run');
  await tdb.db.repos.runs.insert(runRow(id));
  const rows: RunEventRow[] = [];
  let line = 1;
  let byte = 0;
  const ts = new Date().toISOString();
  const push = (kind: string, host: string | null, data: Record<string, unknown>, logAt: [number, number] | null) =>
    rows.push({
      run_id: id,
      seq: rows.length + 1,
      ts,
      kind,
      host,
      log_line: logAt?.[0] ?? null,
      log_byte: logAt?.[1] ?? null,
      data,
    });
  push('status', null, { status: 'running' }, null);
  chunks.forEach((text, i) => {
    const lines = text.split('\n').length - 1;
    push('log', null, { text, start_line: line, end_line: line + lines }, [line, byte]);
    line += lines;
    byte += Buffer.byteLength(text, 'utf8');
    // an ansible event between log chunks, as in a real run
    if (i % 2 === 0)
      push('runner_on_ok', i % 4 === 0 ? 'web1' : 'web2', { host: i % 4 === 0 ? 'web1' : 'web2', task: `t${i}` }, null);
  });
  for (const e of extra) push(e.kind, e.host ?? null, e.data, null);
  await tdb.db.repos.runEvents.insertBatch(rows);
  await tdb.db.repos.runs.advanceProgress(id, { lastSeq: rows.length, logLines: line - 1, logBytes: byte });
  return { id, rows };
}

describe.each(DIALECTS)('run output service on %s', (dialect) => {
  let tdb: TestDatabase;
  let service: RunOutputService;
  let run: { id: string; rows: RunEventRow[] };

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    const { repos } = tdb.db;
    const access = createRunAccess({
      runs: repos.runs,
      authz: createAuthorizer({ grants: repos.grants, teams: repos.teams }),
      teams: repos.teams,
    });
    service = createRunOutputService({ runEvents: repos.runEvents, runs: repos.runs, access });
    run = await seedRun(tdb, CHUNKS);
  });
  afterAll(() => tdb.drop());

  it('answers every line window exactly, across chunk boundaries and past the end, with the total', async () => {
    expect(LOG_LINES).toHaveLength(9);
    for (let offset = 0; offset <= LOG_LINES.length + 1; offset++) {
      for (const limit of [undefined, 1, 2, 3, 4, 5, 9, 20]) {
        const got = await service.logLines(submitter, run.id, { offset, limit });
        const want = LOG_LINES.slice(offset, limit === undefined ? undefined : offset + limit).join('');
        expect({ offset, limit, text: got.text }).toEqual({ offset, limit, text: want });
        expect(got.totalLines).toBe(9);
      }
    }
    expect((await service.logLines(submitter, run.id, {})).text).toBe(LOG);
  });

  it('answers every byte range exactly, cutting multibyte characters where asked', async () => {
    const total = LOG_BYTES.length;
    for (let start = 0; start < total; start++) {
      for (let end = start; end <= total + 1; end++) {
        const got = await service.logBytes(submitter, run.id, { start, end });
        const want = LOG_BYTES.subarray(start, end + 1);
        expect({ start, end, hex: got.body.toString('hex') }).toEqual({ start, end, hex: want.toString('hex') });
        expect(got.range).toEqual({ start, end: Math.min(end, total - 1) });
        expect(got.totalBytes).toBe(total);
      }
    }
  });

  it('answers open-ended and suffix ranges, and null for ranges outside the log', async () => {
    const total = LOG_BYTES.length;
    const open = await service.logBytes(submitter, run.id, { start: 20 });
    expect(open.body.equals(LOG_BYTES.subarray(20))).toBe(true);
    expect(open.range).toEqual({ start: 20, end: total - 1 });
    const suffix = await service.logBytes(submitter, run.id, { suffix: 7 });
    expect(suffix.body.equals(LOG_BYTES.subarray(total - 7))).toBe(true);
    expect(suffix.range).toEqual({ start: total - 7, end: total - 1 });
    const longSuffix = await service.logBytes(submitter, run.id, { suffix: total + 100 });
    expect(longSuffix.body.equals(LOG_BYTES)).toBe(true);
    for (const r of [{ start: total }, { start: total + 5, end: total + 9 }, { suffix: 0 }]) {
      expect(await service.logBytes(submitter, run.id, r)).toEqual({
        body: Buffer.alloc(0),
        totalBytes: total,
        range: null,
      });
    }
  });

  it('treats a run with no log as empty: no lines, every byte range unsatisfiable', async () => {
    const empty = await seedRun(tdb, []);
    expect(await service.logLines(submitter, empty.id, {})).toEqual({ text: '', totalLines: 0 });
    expect((await service.logBytes(submitter, empty.id, { start: 0 })).range).toBeNull();
    expect((await service.logBytes(submitter, empty.id, { suffix: 10 })).range).toBeNull();
  });

  it('cuts a growing log at the totals of the run row, so a chunk stored before its totals is not served yet', async () => {
    const growing = await seedRun(tdb, ['one\n', 'two\n']);
    // The next chunk is stored but the totals have not moved on yet.
    await tdb.db.repos.runEvents.insertBatch([
      {
        run_id: growing.id,
        seq: growing.rows.length + 1,
        ts: new Date().toISOString(),
        kind: 'log',
        host: null,
        log_line: 3,
        log_byte: 8,
        data: { text: 'three\n', start_line: 3, end_line: 4 },
      },
    ]);
    expect(await service.logLines(submitter, growing.id, {})).toEqual({ text: 'one\ntwo\n', totalLines: 2 });
    expect((await service.logBytes(submitter, growing.id, { start: 0 })).body.toString()).toBe('one\ntwo\n');
  });

  it('reads a log chunk whose text is not a string (stored as the ingester takes it) as empty, not as a 500', async () => {
    const id = newId('run');
    await tdb.db.repos.runs.insert(runRow(id));
    const ingester = createRunIngester({
      transaction: tdb.db.transaction,
      publish: async () => {},
      clock: () => new Date(),
    });
    const chunks: Array<Record<string, unknown>> = [
      { text: 'a\n', start_line: 1, end_line: 2 },
      { text: 42, start_line: 2, end_line: 3 },
      { text: 'c\n', start_line: 3, end_line: 4 },
      { start_line: 4, end_line: 5 },
      { text: { nested: true }, start_line: 5, end_line: 6 },
      { text: 'f\n', start_line: 6, end_line: 7 },
    ];
    chunks.forEach((data, i) =>
      ingester.push({ run_id: id, seq: i + 1, ts: new Date().toISOString(), kind: 'log', data }),
    );
    await ingester.close();

    expect(await service.logLines(submitter, id, {})).toEqual({ text: 'a\nc\nf\n', totalLines: 6 });
    expect((await service.logLines(submitter, id, { offset: 1, limit: 4 })).text).toBe('c\n');
    const bytes = await service.logBytes(submitter, id, { start: 0 });
    expect(bytes).toMatchObject({ totalBytes: 6, range: { start: 0, end: 5 } });
    expect(bytes.body.toString()).toBe('a\nc\nf\n');
    expect((await service.logBytes(submitter, id, { start: 2, end: 3 })).body.toString()).toBe('c\n');
  });

  it('lists events in seq order by kind, host and after_seq, within the limit', async () => {
    const all = await service.events(submitter, run.id, { limit: 1000 });
    expect(all.map((e) => e.seq)).toEqual(run.rows.map((r) => r.seq));
    expect(all[0]).toEqual({
      run_id: run.id,
      seq: 1,
      ts: run.rows[0]!.ts,
      kind: 'status',
      data: { status: 'running' },
    });
    const logs = await service.events(submitter, run.id, { kind: 'log', limit: 1000 });
    expect(logs.map((e) => e.data.text)).toEqual(CHUNKS);
    const web2 = await service.events(submitter, run.id, { host: 'web2', limit: 1000 });
    expect(web2.length).toBeGreaterThan(0);
    expect(web2.every((e) => e.kind === 'runner_on_ok' && e.data.host === 'web2')).toBe(true);
    const page = await service.events(submitter, run.id, { after_seq: 3, limit: 2 });
    expect(page.map((e) => e.seq)).toEqual([4, 5]);
    expect(await service.events(submitter, run.id, { after_seq: run.rows.length, limit: 10 })).toEqual([]);
    expect((await service.eventsAfter(run.id, 3, 2)).map((e) => e.seq)).toEqual([4, 5]);
  });

  it('hides a run from whoever may not see it (404), shows it to its submitter and admins', async () => {
    await expect(service.events(stranger, run.id, { limit: 10 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.logLines(stranger, run.id, {})).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.logBytes(stranger, run.id, { start: 0 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.logLines(admin, newId('run'), {})).rejects.toBeInstanceOf(NotFoundError);
    expect((await service.logLines(admin, run.id, {})).text).toBe(LOG);
  });

  it('knows a run is over once it is finished or gone, and which event is the final one', async () => {
    expect(await service.isOver(run.id)).toBe(false);
    const done = newId('run');
    await tdb.db.repos.runs.insert(runRow(done, { status: 'finished', conclusion: 'succeeded' }));
    expect(await service.isOver(done)).toBe(true);
    expect(await service.isOver(newId('run'))).toBe(true);
    expect(isFinalEvent({ kind: 'status', data: { status: 'finished', conclusion: 'failed' } })).toBe(true);
    expect(isFinalEvent({ kind: 'status', data: { status: 'running' } })).toBe(false);
    expect(isFinalEvent({ kind: 'log', data: { status: 'finished' } })).toBe(false);
  });
});
