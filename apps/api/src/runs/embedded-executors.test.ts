// Embedded executors when a run's bundle cannot be built after their claim: core's one dispatch decision
// (classifyBundleFailure) ends it missing_input or executor_error, or leaves it to the recovery sweep.
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConflictError, embeddedWorkerName, newId, RunInputMissingError } from '@baton/core';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import { createLogger } from '../logger.js';
import { createHarness, type Harness } from '../testing/harness.js';
import { createEmbeddedExecutors, type EmbeddedExecutors } from './embedded-executors.js';

/** Polls until `check` holds (a safety net of 10 s, not a speed threshold). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(DIALECTS)('embedded executors meeting a bundle that cannot be built, on %s', (dialect) => {
  let h: Harness;
  let executors: EmbeddedExecutors;
  /** What the next bundle build throws. */
  let failure: unknown;
  let playbooks = 0;

  beforeAll(async () => {
    h = await createHarness(dialect);
    executors = createEmbeddedExecutors({
      queue: h.services.runQueue,
      ingest: h.services.runIngest,
      workers: h.services.workers,
      bundles: { build: async () => Promise.reject(failure) },
      runPlaybook: async () => {
        playbooks += 1;
        throw new Error('never started: no bundle');
      },
      // The name `baton serve` gives them: the sweep in this process knows they are its own.
      name: embeddedWorkerName(os.hostname(), process.pid),
      capacity: 1,
      logger: createLogger('error', { silent: true }),
      leaseMs: 30_000,
    });
    await executors.start();
  });
  afterAll(async () => {
    await executors.stop(0);
    await h.close();
  });

  /** Enqueues a fresh pending run and waits until the executors have let go of it. */
  const dispatch = async (err: unknown): Promise<string> => {
    failure = err;
    const id = newId('run');
    await h.tdb.db.repos.runs.insert(testRunRow(id, { submitted_by: h.admin.id }));
    await h.services.runQueue.enqueue({ runId: id });
    // Its claim made it running; its lease goes once the executor's handler has returned.
    await until(
      async () =>
        (await h.tdb.db.repos.runs.findById(id))?.status !== 'pending' &&
        (await h.services.runQueue.leasedIds()).length === 0,
      `run ${id} to be let go`,
    );
    return id;
  };

  it.each<[string, Error, string]>([
    ['a referenced object gone', new RunInputMissingError('inventory inv_1 no longer exists'), 'missing_input'],
    [
      'a run our rules refuse',
      new ConflictError('credential cred_1 is a token credential, which a run cannot use'),
      'executor_error',
    ],
  ])('ends the run error at once for %s', async (_what, err, reason) => {
    const id = await dispatch(err);
    expect(await h.tdb.db.repos.runs.findById(id)).toMatchObject({ status: 'finished', conclusion: 'error', reason });
  });

  it('never finishes a run on a database error: it stays claimed until the recovery sweep finds it without an executor', async () => {
    const id = await dispatch(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    );
    expect(await h.tdb.db.repos.runs.findById(id)).toMatchObject({ status: 'running', conclusion: null });
    const swept = await h.services.runRecovery.reconcile();
    expect(swept.lost).toEqual([id]);
    expect(await h.tdb.db.repos.runs.findById(id)).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'worker_lost',
    });
    expect(playbooks).toBe(0);
  });
});
