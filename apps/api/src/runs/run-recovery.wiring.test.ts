// The ingester, the recovery sweep and the real in-process RunQueue as run.wiring.ts composes them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import { newId } from '@baton/core';
import type { RunRow } from '@baton/db';
import { DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { createHarness, type Harness } from '../testing/harness.js';

describe.each(DIALECTS)('run recovery wiring on %s', (dialect) => {
  let h: Harness;
  let tdb: TestDatabase;
  let runs: Harness['services'];

  beforeAll(async () => {
    h = await createHarness(dialect);
    tdb = h.tdb;
    runs = h.services;
  });
  afterAll(async () => {
    await runs.closeRuns();
    await h.close();
  });

  const createRun = async (over: Partial<RunRow> = {}) => {
    const id = newId('run');
    await tdb.db.repos.runs.insert(testRunRow(id, over));
    return id;
  };
  /** Resolves with the first event of the run that `match` accepts, as the live bus delivers it. */
  const nextEvent = async (runId: string, match: (e: RunEvent) => boolean) => {
    let unsubscribe = () => {};
    const seen = new Promise<RunEvent>((resolve) => {
      void runs.eventBus.subscribe(runId, (e) => match(e) && resolve(e)).then((u) => (unsubscribe = u));
    });
    const event = await seen;
    unsubscribe();
    return event;
  };

  it('finishes a run whose handler failed after claiming it as error / worker_lost, live on the bus', async () => {
    const id = await createRun();
    const finished = nextEvent(id, (e) => e.data.status === 'finished');
    const sub = runs.runQueue.lease({ name: 'executor-fails', labels: [], capacity: 1 }, async (job) => {
      if (!(await runs.runIngest.claim(job.runId, 'executor-fails'))) return;
      throw new Error('the executor broke');
    });
    await runs.runQueue.enqueue({ runId: id });
    expect((await finished).data).toEqual({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
    expect(await tdb.db.repos.runs.findById(id)).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'worker_lost',
      worker: 'executor-fails',
      last_seq: 1,
    });
    await sub.close();
  });

  it('reconciles with the real queue: an orphan running run is lost, an unqueued pending run is dispatched once', async () => {
    const orphan = await createRun({ status: 'running', worker: 'executor-gone' });
    const pending = await createRun();
    const claimed: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = () => {};
    const leased = new Promise<void>((resolve) => (started = resolve));
    const sub = runs.runQueue.lease({ name: 'executor-1', labels: [], capacity: 2 }, async (job) => {
      if (await runs.runIngest.claim(job.runId, 'executor-1')) claimed.push(job.runId);
      started();
      // Holds its lease (30 s by default: no renewal needed) until the test is done with the sweep.
      await held;
      runs.runIngest.push({
        run_id: job.runId,
        seq: 1,
        ts: new Date().toISOString(),
        kind: 'status',
        data: { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} },
      });
      await runs.runIngest.flush();
    });

    expect(await runs.runRecovery.reconcile()).toEqual({
      lost: [orphan],
      requeued: [pending],
      expired: [],
      failed: [],
    });
    await leased;
    expect(claimed).toEqual([pending]);
    expect(await tdb.db.repos.runs.findById(orphan)).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'worker_lost',
    });
    // The dispatched run is leased and running now: a second sweep leaves it alone.
    expect(await runs.runRecovery.reconcile()).toEqual({ lost: [], requeued: [], expired: [], failed: [] });
    release();
    await sub.close();
    expect(claimed).toEqual([pending]);
    expect(await tdb.db.repos.runs.findById(pending)).toMatchObject({
      status: 'finished',
      conclusion: 'succeeded',
      worker: 'executor-1',
    });
  });
});
