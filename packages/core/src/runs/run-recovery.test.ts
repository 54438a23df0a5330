import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { newId } from '../common/ids.js';
import { createRunIngester, type RunIngester } from './run-ingest.js';
import { embeddedWorkerName } from '../workers/worker.service.js';
import { FORGET_WORKERS_AFTER_MS } from '../workers/worker.service.js';
import { createRunRecovery, type RecoveryQueue, type RecoverySelf } from './run-recovery.js';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const HOST = 'baton-a';
const SELF_PID = 4242;
/** This process for the sweep: pid 4242 on baton-a, where only the pids in `alive` (and its own) live. */
const alive = new Set<number>([SELF_PID]);
const self: RecoverySelf = { hostname: HOST, pid: SELF_PID, processAlive: (pid) => alive.has(pid) };

const runRow = (id: string, over: Partial<RunRow> = {}): RunRow =>
  testRunRow(id, { created_at: NOW.toISOString(), ...over });

/** A queue as the recovery sweep sees it: what it holds pending and leased, and what it was asked to enqueue (idempotently). */
function fakeQueue(refuse: (runId: string) => boolean = () => false) {
  const pending: string[] = [];
  const leased: string[] = [];
  const enqueued: Array<{ runId: string; labels?: string[] }> = [];
  const queue: RecoveryQueue = {
    async enqueue(job) {
      if (refuse(job.runId)) throw new Error(`cannot enqueue ${job.runId}`);
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

  const newRecovery = (queue: RecoveryQueue) =>
    createRunRecovery({
      runs: tdb.db.repos.runs,
      workers: tdb.db.repos.workers,
      queue,
      finish: ingester.finish,
      clock: () => NOW,
      self,
    });
  /** A queue that holds every run stored so far (pending ones queued, running ones leased) but `except`: a test's own runs stand alone. */
  const queueHoldingAllBut = async (...except: string[]) => (await fakeQueueHoldingAllBut(except)).queue;
  const fakeQueueHoldingAllBut = async (except: string[], refuse?: (runId: string) => boolean) => {
    const q = fakeQueue(refuse);
    const ids = async (status: string) =>
      (await tdb.db.repos.runs.listByStatus(status)).map((r) => r.id).filter((id) => !except.includes(id));
    q.leased.push(...(await ids('running')));
    q.pending.push(...(await ids('pending')));
    return q;
  };

  // Ids sort by creation time; ascending ids make "oldest first" checkable.
  let t = NOW.getTime();
  const createRun = async (over: Partial<RunRow> = {}) => {
    const id = newId('run', (t += 1000));
    await tdb.db.repos.runs.insert(runRow(id, over));
    return id;
  };

  it('finishes unleased running runs worker_lost, requeues pending runs the queue lacks oldest first, and is idempotent', async () => {
    const { queue, pending, leased, enqueued } = fakeQueue();
    const recovery = newRecovery(queue);

    const orphanRunning = await createRun({ status: 'running', worker: 'embedded-1' });
    const leasedRunning = await createRun({ status: 'running', worker: 'embedded-2' });
    const orphanPendingOld = await createRun({ labels: ['linux', 'eu'] });
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
    expect(first).toEqual({
      expired: [],
      lost: [orphanRunning],
      requeued: [orphanPendingOld, orphanPendingNew],
      failed: [],
    });
    expect(enqueued).toEqual([{ runId: orphanPendingOld, labels: ['linux', 'eu'] }, { runId: orphanPendingNew }]);
    const lost = await tdb.db.repos.runs.findById(orphanRunning);
    expect(lost).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'worker_lost', last_seq: 1 });
    const [event] = await tdb.db.repos.runEvents.list(orphanRunning, { limit: 10 });
    expect(event!.data).toEqual({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
    for (const id of [leasedRunning, splitRunning])
      expect((await tdb.db.repos.runs.findById(id))!.status).toBe('running');
    for (const id of [split, held, finished]) expect(enqueued.map((j) => j.runId)).not.toContain(id);

    expect(await recovery.reconcile()).toEqual({ expired: [], lost: [], requeued: [], failed: [] });
    expect(enqueued).toHaveLength(2);
    expect(await tdb.db.repos.runEvents.list(orphanRunning, { limit: 10 })).toHaveLength(1);
  });

  it('goes on past a run it cannot enqueue, reporting it, and enqueues it on a later sweep', async () => {
    const [bad, good] = [await createRun(), await createRun()];
    let refusing = true;
    const q = await fakeQueueHoldingAllBut([bad, good], (runId) => refusing && runId === bad);
    const recovery = newRecovery(q.queue);
    expect(await recovery.reconcile()).toEqual({
      expired: [],
      lost: [],
      requeued: [good],
      failed: [{ runId: bad, error: `cannot enqueue ${bad}` }],
    });
    refusing = false;
    expect(await recovery.reconcile()).toEqual({ expired: [], lost: [], requeued: [bad], failed: [] });
  });

  it('does not report a run lost when its finish loses to the executor’s own finish', async () => {
    const queue = await queueHoldingAllBut();
    const id = await createRun({ status: 'running' });
    // The executor's finished event is still buffered when the sweep looks: the finish flushes it first.
    ingester.push({
      run_id: id,
      seq: 1,
      ts: NOW.toISOString(),
      kind: 'status',
      data: { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} },
    });
    const recovery = newRecovery(queue);
    expect(await recovery.reconcile()).toEqual({ expired: [], lost: [], requeued: [], failed: [] });
    expect(await tdb.db.repos.runs.findById(id)).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
  });

  describe('a running run no lease of this process holds', () => {
    /** A worker row that last heartbeated `ageMs` before NOW. */
    const worker = async (name: string, ageMs: number, host = HOST) => {
      const at = new Date(NOW.getTime() - ageMs).toISOString();
      await tdb.db.repos.workers.upsert({
        id: newId('wrk'),
        name,
        host,
        mode: 'embedded',
        labels: [],
        capacity: 2,
        running: [],
        started_at: at,
        heartbeat_at: at,
        lease_expires_at: at,
        paused: null,
      });
      return name;
    };
    /** Sweeps with a queue holding everything but this case's run. */
    const sweepOf = async (worker: string | null) => {
      const queue = await queueHoldingAllBut();
      const id = await createRun({ status: 'running', worker });
      const result = await newRecovery(queue).reconcile();
      return { id, result, row: (await tdb.db.repos.runs.findById(id))! };
    };

    it.each([
      ['an executor with no worker row', async () => 'gone-executor'],
      ['no executor at all', async () => null],
      ['a worker that last heartbeated more than a lease ago', () => worker('daemon-silent', 30_001, 'baton-b')],
      [
        'an embedded executor of this host whose process is gone, though its row is fresh',
        () => worker(embeddedWorkerName(HOST, 5151), 1_000),
      ],
      [
        'an embedded executor of this host whose pid lives again but which stopped heartbeating',
        async () => {
          alive.add(5252);
          return worker(embeddedWorkerName(HOST, 5252), 30_001);
        },
      ],
      [
        'this process’s own name (a restart that got the same pid), though its row is fresh',
        () => worker(embeddedWorkerName(HOST, SELF_PID), 0),
      ],
    ])('is lost when it belongs to %s', async (_what, workerOf) => {
      const { id, result, row } = await sweepOf(await workerOf());
      expect(result).toEqual({ expired: [], lost: [id], requeued: [], failed: [] });
      expect(row).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
    });

    it.each([
      [
        'a live embedded executor of another process on this host',
        async () => {
          alive.add(5353);
          return worker(embeddedWorkerName(HOST, 5353), 29_000);
        },
      ],
      ['a fresh worker of another host', () => worker('baton-b/embedded/5151', 1_000, 'baton-b')],
      ['a daemon heartbeating within a lease', () => worker('daemon-1', 30_000, 'baton-c')],
    ])('is left alone when it belongs to %s', async (_what, workerOf) => {
      const { result, row } = await sweepOf(await workerOf());
      expect(result).toEqual({ expired: [], lost: [], requeued: [], failed: [] });
      expect(row).toMatchObject({ status: 'running', conclusion: null });
    });

    it('is lost once its live-looking executor has stopped heartbeating for a lease', async () => {
      const name = await worker('daemon-late', 20_000, 'baton-b');
      const { id, result } = await sweepOf(name);
      expect(result.lost).toEqual([]);
      await worker(name, 30_001, 'baton-b');
      expect(await newRecovery(await queueHoldingAllBut(id)).reconcile()).toEqual({
        expired: [],
        lost: [id],
        requeued: [],
        failed: [],
      });
    });
  });

  it('forgets workers silent for a day, and no other', async () => {
    const at = (ageMs: number) => new Date(NOW.getTime() - ageMs).toISOString();
    for (const [name, age] of [
      ['old-1', FORGET_WORKERS_AFTER_MS + 1],
      ['recent-1', FORGET_WORKERS_AFTER_MS - 1],
    ] as const) {
      await tdb.db.repos.workers.upsert({
        id: newId('wrk'),
        name,
        host: 'h',
        mode: 'daemon',
        labels: [],
        capacity: 1,
        running: [],
        started_at: at(age),
        heartbeat_at: at(age),
        lease_expires_at: at(age),
        paused: null,
      });
    }
    await newRecovery(await queueHoldingAllBut()).reconcile();
    const names = (await tdb.db.repos.workers.list()).map((w) => w.name);
    expect(names).toContain('recent-1');
    expect(names).not.toContain('old-1');
  });
});
