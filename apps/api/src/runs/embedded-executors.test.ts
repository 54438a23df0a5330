// Embedded executors when a run's bundle cannot be built after their claim: core's one dispatch decision
// (classifyBundleFailure) ends it missing_input or executor_error, or leaves it to the recovery sweep. And after a
// run: what runPlaybook could not clean up goes to the server's log.
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConflictError, embeddedWorkerName, newId, RunInputMissingError } from '@baton/core';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import { inlineBundle, succeededOutcome } from '@baton/executor/testing';
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

describe.each(DIALECTS)('embedded executors after a run, on %s', (dialect) => {
  let h: Harness;
  let executors: EmbeddedExecutors;
  const warnings: Array<{ message: string; meta: unknown }> = [];

  beforeAll(async () => {
    h = await createHarness(dialect);
    const logger = createLogger('error', { silent: true });
    logger.warn = ((message: string, meta: unknown) => {
      warnings.push({ message, meta });
      return logger;
    }) as typeof logger.warn;
    executors = createEmbeddedExecutors({
      queue: h.services.runQueue,
      ingest: h.services.runIngest,
      workers: h.services.workers,
      bundles: { build: async (runId) => ({ ...inlineBundle('- hosts: all\n  tasks: []\n'), run_id: runId }) },
      // What runPlaybook does around a run whose clean-up failed: a final status, then the problems in its outcome.
      runPlaybook: async (bundle, opts) => {
        const event = (seq: number, data: Record<string, unknown>) =>
          opts.onEvent({ run_id: bundle.run_id, seq, ts: new Date().toISOString(), kind: 'status', data });
        event(1, { status: 'running' });
        event(2, { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} });
        return succeededOutcome({ cleanupProblems: ['removing the run directory: EBUSY'] });
      },
      name: embeddedWorkerName(os.hostname(), process.pid),
      capacity: 1,
      logger,
      leaseMs: 30_000,
    });
    await executors.start();
  });
  afterAll(async () => {
    await executors.stop(0);
    await h.close();
  });

  it("logs what could not be cleaned up with the run id, the run's own end untouched", async () => {
    const id = newId('run');
    await h.tdb.db.repos.runs.insert(testRunRow(id, { submitted_by: h.admin.id }));
    await h.services.runQueue.enqueue({ runId: id });
    await until(async () => (await h.tdb.db.repos.runs.findById(id))?.status === 'finished', `run ${id} to finish`);
    await until(async () => warnings.length > 0, 'the warning');
    expect(await h.tdb.db.repos.runs.findById(id)).toMatchObject({ conclusion: 'succeeded' });
    expect(warnings).toEqual([
      {
        message: 'cleanup after the run failed',
        meta: { run_id: id, problems: ['removing the run directory: EBUSY'] },
      },
    ]);
  });
});
