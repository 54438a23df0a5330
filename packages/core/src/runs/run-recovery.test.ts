import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { newId } from '../common/ids.js';
import { createRunIngester, type RunIngester } from './run-ingest.js';
import { createRunRecovery, type RecoveryQueue } from './run-recovery.js';

const NOW = new Date('2025-03-01T12:00:00.000Z');

function runRow(id: string, over: Partial<RunRow> = {}): RunRow {
  return {
    id, kind: 'run', parent_id: null, shard_index: null, shard_count: null, retry_of: null, status: 'pending', conclusion: null, reason: null,
    playbook_source: 'inline', playbook: '- hosts: all\n', project_id: null, git_commit: null, template_id: null, inventory_id: null,
    inventory_content: 'web1\n', inventory_format: 'ini', host_limit: null, hosts: null, extra_vars: null, credential_ids: '[]', check_mode: 0,
    forks: null, verbosity: null, timeout_s: null, labels: '[]', submitted_by: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1', worker: null, exit_code: null,
    stats: null, last_seq: 0, log_lines: 0, log_bytes: 0, created_at: NOW.toISOString(), started_at: null, finished_at: null, cancel_requested_at: null,
    ...over,
  };
}

/** A queue as the recovery sweep sees it: what it holds pending and leased, and what it was asked to enqueue (idempotently). */
function fakeQueue() {
  const pending: string[] = [];
  const leased: string[] = [];
  const enqueued: Array<{ runId: string; labels?: string[] }> = [];
  const queue: RecoveryQueue = {
    async enqueue(job) {
      enqueued.push(job);
      if (!pending.includes(job.runId) && !leased.includes(job.runId)) pending.push(job.runId);
    },
    pendingIds: async () => [...pending],
    leasedIds: async () => leased.map((runId) => ({ runId })),
  };
  return { queue, pending, leased, enqueued };
}

describe.each(DIALECTS)('run recovery on %s', (dialect) => {
  let tdb: TestDatabase;
  let ingester: RunIngester;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    ingester = createRunIngester({ transaction: tdb.db.transaction, publish: async () => {}, clock: () => NOW });
  });
  afterAll(async () => {
    await ingester.close();
    await tdb.drop();
  });

  // Ids sort by creation time; ascending ids make "oldest first" checkable.
  let t = NOW.getTime();
  const createRun = async (over: Partial<RunRow> = {}) => {
    const id = newId('run', (t += 1000));
    await tdb.db.repos.runs.insert(runRow(id, over));
    return id;
  };

  it('finishes unleased running runs worker_lost, requeues pending runs the queue lacks oldest first, and is idempotent', async () => {
    const { queue, pending, leased, enqueued } = fakeQueue();
    const recovery = createRunRecovery({ runs: tdb.db.repos.runs, queue, finish: ingester.finish });

    const orphanRunning = await createRun({ status: 'running', worker: 'embedded-1' });
    const leasedRunning = await createRun({ status: 'running', worker: 'embedded-2' });
    const orphanPendingOld = await createRun({ labels: '["linux","eu"]' });
    const queuedPending = await createRun();
    const leasedPending = await createRun();
    const orphanPendingNew = await createRun({ kind: 'shard' });
    const split = await createRun({ kind: 'split' }); // never queued itself
    const splitRunning = await createRun({ kind: 'split', status: 'running' }); // has no lease of its own
    const held = await createRun({ status: 'held' });
    const finished = await createRun({ status: 'finished', conclusion: 'succeeded' });
    leased.push(leasedRunning, leasedPending);
    pending.push(queuedPending);

    const first = await recovery.reconcile();
    expect(first).toEqual({ lost: [orphanRunning], requeued: [orphanPendingOld, orphanPendingNew] });
    expect(enqueued).toEqual([{ runId: orphanPendingOld, labels: ['linux', 'eu'] }, { runId: orphanPendingNew }]);
    const lost = await tdb.db.repos.runs.findById(orphanRunning);
    expect(lost).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'worker_lost', last_seq: 1 });
    const [event] = await tdb.db.repos.runEvents.list(orphanRunning, { limit: 10 });
    expect(JSON.parse(event!.data)).toEqual({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
    for (const id of [leasedRunning, splitRunning]) expect((await tdb.db.repos.runs.findById(id))!.status).toBe('running');
    for (const id of [split, held, finished]) expect(enqueued.map((j) => j.runId)).not.toContain(id);

    expect(await recovery.reconcile()).toEqual({ lost: [], requeued: [] });
    expect(enqueued).toHaveLength(2);
    expect(await tdb.db.repos.runEvents.list(orphanRunning, { limit: 10 })).toHaveLength(1);
  });

  it('does not report a run lost when its finish loses to the executor’s own finish', async () => {
    const { queue, pending, leased } = fakeQueue();
    // The runs of the test above are all accounted for by this queue.
    leased.push(...(await tdb.db.repos.runs.listByStatus('running')).map((r) => r.id));
    pending.push(...(await tdb.db.repos.runs.listByStatus('pending')).map((r) => r.id));
    const id = await createRun({ status: 'running' });
    // The executor's finished event is still buffered when the sweep looks: the finish flushes it first.
    ingester.push({ run_id: id, seq: 1, ts: NOW.toISOString(), kind: 'status', data: { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} } });
    const recovery = createRunRecovery({ runs: tdb.db.repos.runs, queue, finish: ingester.finish });
    expect(await recovery.reconcile()).toEqual({ lost: [], requeued: [] });
    expect(await tdb.db.repos.runs.findById(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
  });
});
