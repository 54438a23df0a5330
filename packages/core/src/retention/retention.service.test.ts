// The retention pass on a real SQLite and PostgreSQL database with runs written directly: old finished runs lose
// their events in slices and are marked, recent and unfinished runs and every per-host / per-task row stay, a dry run
// changes nothing, one audit entry records the pass and the chain still verifies. (The same pass over real ansible
// runs, with fleet, task trends and drift compared before and after: apps/api/src/system/retention.integration.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GENESIS_HASH, type RetentionRepo, type RunEventRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { entryHash } from '../audit/audit.chain.js';
import { createRetentionService } from './retention.service.js';

const NOW = new Date('2026-06-01T00:00:00.000Z');
const LONG_AGO = '2026-01-01T00:00:00.000Z';
const LAST_WEEK = '2026-05-25T00:00:00.000Z';

const logEvents = (runId: string, n: number): RunEventRow[] =>
  Array.from({ length: n }, (_, i) => ({
    run_id: runId,
    seq: i + 1,
    ts: LONG_AGO,
    kind: 'log',
    host: null,
    log_line: i + 1,
    log_byte: i * 8,
    data: { text: `line ${i + 1}\n`, start_line: i + 1, end_line: i + 1 },
  }));

describe.each(DIALECTS)('retention service on %s', (dialect) => {
  let tdb: TestDatabase;
  const runs = { oldA: 'run_oldA', oldB: 'run_oldB', recent: 'run_recent', running: 'run_running' };
  const counts = { oldA: 12, oldB: 3, recent: 4, running: 2 };

  const eventCount = async (runId: string) => (await tdb.db.repos.runEvents.list(runId, { limit: 1000 })).length;
  const rowCount = async (table: 'run_hosts' | 'run_task_results' | 'runs') =>
    Number(
      (
        await tdb.db.kysely
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    const r = tdb.db.repos;
    const finished = (finished_at: string) => ({ status: 'finished', conclusion: 'succeeded', finished_at });
    await r.runs.insert(testRunRow(runs.oldA, { ...finished(LONG_AGO), created_at: LONG_AGO }));
    await r.runs.insert(testRunRow(runs.oldB, { ...finished(LONG_AGO), created_at: LONG_AGO }));
    await r.runs.insert(testRunRow(runs.recent, { ...finished(LAST_WEEK), created_at: LAST_WEEK }));
    await r.runs.insert(testRunRow(runs.running, { status: 'running', created_at: LONG_AGO }));
    for (const [key, id] of Object.entries(runs)) await r.runEvents.insertBatch(logEvents(id, counts[key as 'oldA']));
    const host = { ok: 1, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 };
    await r.runs.replaceHosts(runs.oldA, [{ run_id: runs.oldA, host: 'web1', outcome: 'ok', ...host }]);
    await r.runs.insertTaskResults([
      {
        run_id: runs.oldA,
        seq: 2,
        task_uuid: 'u1',
        task: 'greet',
        task_path: 'site.yml:3',
        host: 'web1',
        status: 'ok',
        changed: 0,
        started_at: LONG_AGO,
        ended_at: LONG_AGO,
        duration_ms: 5,
        action: 'debug',
        message: null,
        no_log: 0,
        changes: null,
      },
    ]);
  });
  afterAll(async () => tdb?.drop());

  it('prunes old finished runs in slices, leaves the rest, audits once; a dry run changes nothing', async () => {
    const headBefore = await tdb.db.repos.audit.head();
    const statements: number[] = [];
    const repo = tdb.db.repos.retention;
    const counted: RetentionRepo = {
      ...repo,
      deleteEvents: async (ids, max) => {
        const n = await repo.deleteEvents(ids, max);
        statements.push(n);
        return n;
      },
    };
    const service = createRetentionService({
      retention: counted,
      transaction: tdb.db.transaction,
      clock: () => NOW,
      runsPerBatch: 1,
      eventsPerSlice: 5,
    });

    const dry = await service.prune({ days: 30, dryRun: true, actor: 'cli' });
    expect(dry).toMatchObject({ dryRun: true, runs: 2, events: 15, batches: 2, cutoff: '2026-05-02T00:00:00.000Z' });
    expect(dry.bytes).toBeGreaterThan(15 * 30);
    expect(statements).toEqual([]);
    expect(await eventCount(runs.oldA)).toBe(12);
    expect(await tdb.db.repos.audit.head()).toEqual(headBefore);

    const done = await service.prune({ days: 30, actor: 'system' });
    expect(done).toMatchObject({ dryRun: false, runs: 2, events: 15, bytes: dry.bytes, batches: 2 });
    // oldA (12 events) in slices of 5, 5, 2; oldB (3) in one.
    expect(statements).toEqual([5, 5, 2, 3]);
    for (const id of [runs.oldA, runs.oldB]) {
      expect(await eventCount(id)).toBe(0);
      expect((await tdb.db.repos.runs.findById(id))!.output_pruned_at).toBe(NOW.toISOString());
    }
    expect(await eventCount(runs.recent)).toBe(4);
    expect(await eventCount(runs.running)).toBe(2);
    expect((await tdb.db.repos.runs.findById(runs.recent))!.output_pruned_at).toBeNull();
    expect((await tdb.db.repos.runs.findById(runs.running))!.output_pruned_at).toBeNull();
    expect(await rowCount('runs')).toBe(4);
    expect(await rowCount('run_hosts')).toBe(1);
    expect(await rowCount('run_task_results')).toBe(1);

    const entries = await tdb.db.repos.audit.range(0, 1000);
    const pruneEntries = entries.filter((e) => e.action === 'retention.prune');
    expect(pruneEntries).toHaveLength(1);
    expect(pruneEntries[0]).toMatchObject({ actor: 'system', object: null });
    expect(pruneEntries[0]!.summary).toBe(
      `retention of 30 day(s): removed the log and events of 2 run(s) finished before 2026-05-02T00:00:00.000Z (15 event(s), ${dry.bytes} byte(s))`,
    );
    let prev = GENESIS_HASH;
    for (const e of entries) {
      expect(e.prev_hash).toBe(prev);
      expect(entryHash(e.prev_hash, e)).toBe(e.hash);
      prev = e.hash;
    }

    // Nothing left to prune: no batch, no audit entry.
    const again = await service.prune({ days: 30 });
    expect(again).toMatchObject({ runs: 0, events: 0, batches: 0 });
    expect((await tdb.db.repos.audit.range(0, 1000)).filter((e) => e.action === 'retention.prune')).toHaveLength(1);
  });
});
