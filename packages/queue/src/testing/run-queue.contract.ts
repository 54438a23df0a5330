import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { LeaseExpiredError, RunCanceledError, RunQueueClosedError } from '../run-queue-errors.js';
import type { JobHandler, Lease, LeaseLossReason, OnLeaseLost, RunJob, RunQueue, WorkerSpec } from '../run-queue.js';
import { Counter, deferred, within, type Deferred } from './async.js';

/** What one implementation hands the contract: a fresh queue and a way to let its time pass. */
export interface RunQueueHarness {
  queue: RunQueue;
  /** The lease duration the queue was built with. */
  leaseMs: number;
  /** Lets at least `ms` of the queue's time pass and its lease checks run (a manual clock, or a real wait). */
  elapse(ms: number): Promise<void>;
}

export type MakeRunQueue = (options: { onLost: OnLeaseLost }) => Promise<RunQueueHarness>;

interface Lost {
  runId: string;
  worker: string;
  reason: LeaseLossReason;
  error?: unknown;
}

/**
 * Records what handlers were given. With `hold` set, each handler waits until the test releases its run,
 * so a test can look at the queue while leases are held.
 */
class Bench {
  readonly handled: Array<{ runId: string; worker: string }> = [];
  readonly started = new Counter();
  readonly finished = new Counter();
  readonly leases = new Map<string, Lease>();
  readonly maxActive = new Map<string, number>();
  hold = false;
  private readonly active = new Map<string, number>();
  private readonly gates = new Map<string, Deferred>();
  private readonly done = new Map<string, Deferred>();

  handler(worker: string): JobHandler {
    return async (job, lease) => {
      this.handled.push({ runId: job.runId, worker });
      this.leases.set(job.runId, lease);
      const active = (this.active.get(worker) ?? 0) + 1;
      this.active.set(worker, active);
      this.maxActive.set(worker, Math.max(active, this.maxActive.get(worker) ?? 0));
      this.started.increment();
      try {
        if (this.hold) await this.signal(this.gates, job.runId).promise;
      } finally {
        this.active.set(worker, (this.active.get(worker) ?? 1) - 1);
        this.finished.increment();
        this.signal(this.done, job.runId).resolve();
      }
    };
  }

  release(runId: string): void {
    this.signal(this.gates, runId).resolve();
  }

  /** Resolves once a handler for `runId` has finished. */
  finishedRun(runId: string): Promise<void> {
    return within(this.signal(this.done, runId).promise, `${runId} to finish`);
  }

  releaseAll(): void {
    this.hold = false;
    for (const gate of this.gates.values()) gate.resolve();
  }

  timesHandled(runId: string): number {
    return this.handled.filter((h) => h.runId === runId).length;
  }

  workerOf(runId: string): string | undefined {
    return this.handled.find((h) => h.runId === runId)?.worker;
  }

  /** The one-shot signal for `runId` in `signals`, created by whichever side asks first. */
  private signal(signals: Map<string, Deferred>, runId: string): Deferred {
    let signal = signals.get(runId);
    if (!signal) {
      signal = deferred();
      signals.set(runId, signal);
    }
    return signal;
  }
}

const worker = (name: string, capacity = 1, labels: string[] = []): WorkerSpec => ({ name, labels, capacity });
const runIds = (count: number, prefix = 'run'): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);

/**
 * The behaviour every RunQueue must show (ARCHITECTURE.md, "A run's path"), run against each implementation.
 */
export function runQueueContract(name: string, make: MakeRunQueue): void {
  describe(`RunQueue contract: ${name}`, () => {
    let harness: RunQueueHarness;
    let queue: RunQueue;
    let bench: Bench;
    let lost: Lost[];
    let lostCount: Counter;

    beforeEach(async () => {
      lost = [];
      lostCount = new Counter();
      bench = new Bench();
      harness = await make({
        onLost: (runId, workerName, reason, error) => {
          lost.push({ runId, worker: workerName, reason, error });
          lostCount.increment();
        },
      });
      queue = harness.queue;
    });

    afterEach(async () => {
      bench.releaseAll();
      await queue.close();
    });

    /**
     * Enqueues a sentinel run and waits until it is handled. Delivery is FIFO, so a run that was going to be
     * delivered (again) would have been by then: "never delivered" becomes checkable without waiting for time.
     */
    async function barrier(): Promise<void> {
      bench.hold = false;
      await queue.enqueue({ runId: 'sentinel' });
      await bench.finishedRun('sentinel');
      expect(bench.timesHandled('sentinel')).toBe(1);
    }

    it('delivers jobs to a worker in the order they were enqueued', async () => {
      const early = runIds(5, 'early');
      for (const runId of early) await queue.enqueue({ runId });
      queue.lease(worker('w1'), bench.handler('w1'));
      await bench.finished.reach(5, 'the runs enqueued before the worker');
      const late = runIds(3, 'late');
      for (const runId of late) await queue.enqueue({ runId });
      await bench.finished.reach(8, 'the runs enqueued after the worker');

      expect(bench.handled.map((h) => h.runId)).toEqual([...early, ...late]);
    });

    it('hands the handler the job as enqueued: labels and sealed bundle intact', async () => {
      const [runId] = runIds(1, 'whole');
      const received = deferred<RunJob>();
      queue.lease(worker('w1', 1, ['linux']), async (job) => received.resolve({ ...job }));
      await queue.enqueue({ runId: runId!, labels: ['linux'], bundle: 'wb1.iv.tag.ciphertext' });
      await expect(within(received.promise, 'the job')).resolves.toEqual({
        runId,
        labels: ['linux'],
        bundle: 'wb1.iv.tag.ciphertext',
      });
    });

    it('hands each job to exactly one of several concurrent workers', async () => {
      const ids = runIds(30);
      // The first job of each worker waits until all three workers hold one, proving they ran concurrently.
      const allBusy = deferred();
      const busy = new Counter();
      const handled: Array<{ runId: string; worker: string }> = [];
      const finished = new Counter();
      const workers = ['w1', 'w2', 'w3'];
      for (const name of workers) {
        queue.lease(worker(name), async (job) => {
          handled.push({ runId: job.runId, worker: name });
          busy.increment();
          if (busy.value === workers.length) allBusy.resolve();
          if (busy.value <= workers.length) await allBusy.promise;
          finished.increment();
        });
      }
      for (const runId of ids) await queue.enqueue({ runId });
      await finished.reach(ids.length, 'every run to be handled');

      expect(handled.map((h) => h.runId).sort()).toEqual(ids);
      expect(new Set(handled.slice(0, 3).map((h) => h.worker))).toEqual(new Set(workers));
      expect(await queue.pendingIds()).toEqual([]);
      expect(await queue.leasedIds()).toEqual([]);
    });

    it('never gives a worker more jobs at once than its capacity', async () => {
      bench.hold = true;
      const ids = runIds(5);
      queue.lease(worker('w1', 2), bench.handler('w1'));
      for (const runId of ids) await queue.enqueue({ runId });
      await bench.started.reach(2, 'the worker to fill its capacity');

      expect((await queue.leasedIds()).map((l) => l.runId).sort()).toEqual(ids.slice(0, 2));
      expect(await queue.pendingIds()).toEqual(ids.slice(2));

      bench.release(ids[0]!);
      await bench.started.reach(3, 'a freed slot to be refilled');
      expect(await queue.pendingIds()).toEqual(ids.slice(3));

      bench.releaseAll();
      await bench.finished.reach(5, 'every run to finish');
      expect(bench.maxActive.get('w1')).toBe(2);
    });

    it('routes a job only to a worker holding all its labels, and an unroutable job waits', async () => {
      queue.lease(worker('linux-only', 5, ['linux']), bench.handler('linux-only'));
      queue.lease(worker('linux-gpu', 5, ['linux', 'gpu']), bench.handler('linux-gpu'));
      await queue.enqueue({ runId: 'needs-arm', labels: ['arm'] });
      await queue.enqueue({ runId: 'needs-gpu', labels: ['gpu'] });
      await queue.enqueue({ runId: 'needs-linux-gpu', labels: ['linux', 'gpu'] });
      await queue.enqueue({ runId: 'needs-linux', labels: ['linux'] });
      await queue.enqueue({ runId: 'needs-nothing' });
      await bench.finished.reach(4, 'the routable runs');

      expect(bench.workerOf('needs-gpu')).toBe('linux-gpu');
      expect(bench.workerOf('needs-linux-gpu')).toBe('linux-gpu');
      expect(['linux-only', 'linux-gpu']).toContain(bench.workerOf('needs-linux'));
      expect(['linux-only', 'linux-gpu']).toContain(bench.workerOf('needs-nothing'));
      expect(bench.timesHandled('needs-arm')).toBe(0);
      expect(await queue.pendingIds()).toEqual(['needs-arm']);

      queue.lease(worker('arm', 1, ['arm', 'linux']), bench.handler('arm'));
      await bench.finished.reach(5, 'the arm run once an arm worker arrives');
      expect(bench.workerOf('needs-arm')).toBe('arm');
    });

    it('ignores enqueueing a run that is already pending or leased', async () => {
      await queue.enqueue({ runId: 'r1' });
      await queue.enqueue({ runId: 'r1' });
      expect(await queue.pendingIds()).toEqual(['r1']);

      bench.hold = true;
      queue.lease(worker('w1', 2), bench.handler('w1'));
      await bench.started.reach(1, 'r1 to be leased');
      await queue.enqueue({ runId: 'r1' });
      expect(await queue.pendingIds()).toEqual([]);
      expect((await queue.leasedIds()).map((l) => l.runId)).toEqual(['r1']);

      bench.release('r1');
      await bench.finished.reach(1, 'r1 to finish');
      await barrier();
      expect(bench.timesHandled('r1')).toBe(1);
    });

    it('cancels a pending run so that it is never delivered', async () => {
      await queue.enqueue({ runId: 'r1' });
      await queue.enqueue({ runId: 'r2' });
      expect(await queue.cancel('r1')).toBe(true);
      expect(await queue.pendingIds()).toEqual(['r2']);

      queue.lease(worker('w1'), bench.handler('w1'));
      await barrier();
      expect(bench.handled.map((h) => h.runId)).toEqual(['r2', 'sentinel']);
      expect(await queue.cancel('r1')).toBe(false);
    });

    it('cancels a leased run by aborting its signal, and a handler that then throws is not reported lost', async () => {
      const aborted = deferred<unknown>();
      queue.lease(worker('w1'), async (_job, lease) => {
        await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve()));
        aborted.resolve(lease.signal.reason);
        // A real executor ends a canceled run by failing; that is not a lost worker.
        throw new Error('playbook interrupted');
      });
      await queue.enqueue({ runId: 'r1' });
      await waitForLease(queue, 'r1');

      expect(await queue.cancel('r1')).toBe(true);
      // A RunCanceledError: the holder tells a cancel from a lost lease by the reason's class.
      await expect(within(aborted.promise, 'the handler to see the abort')).resolves.toBeInstanceOf(RunCanceledError);
      await waitUntilSettled(queue, 'r1');
      expect(lost).toEqual([]);
    });

    it('answers false when canceling a run it does not know', async () => {
      expect(await queue.cancel('never-enqueued')).toBe(false);
    });

    it('reports an expired lease lost, aborts its signal, and never delivers the run again', async () => {
      bench.hold = true;
      queue.lease(worker('w1'), bench.handler('w1'));
      await queue.enqueue({ runId: 'r1' });
      await bench.started.reach(1, 'r1 to be leased');

      await harness.elapse(harness.leaseMs + 1);
      await lostCount.reach(1, 'the expired lease to be reported');
      expect(lost).toEqual([{ runId: 'r1', worker: 'w1', reason: 'expired', error: undefined }]);
      expect(bench.leases.get('r1')!.signal.aborted).toBe(true);
      expect(bench.leases.get('r1')!.signal.reason).toBeInstanceOf(LeaseExpiredError);
      expect(await queue.leasedIds()).toEqual([]);
      expect(await queue.pendingIds()).toEqual([]);

      bench.release('r1');
      await barrier();
      expect(bench.timesHandled('r1')).toBe(1);
      expect(lost).toHaveLength(1);
    });

    it('keeps a lease alive while its holder heartbeats', async () => {
      bench.hold = true;
      queue.lease(worker('w1'), bench.handler('w1'));
      await queue.enqueue({ runId: 'r1' });
      await bench.started.reach(1, 'r1 to be leased');
      const lease = bench.leases.get('r1')!;
      const [first] = await queue.leasedIds();

      // Three heartbeats two thirds of a lease apart: twice the lease duration passes in all.
      for (let round = 0; round < 3; round += 1) {
        await harness.elapse(Math.floor((harness.leaseMs * 2) / 3));
        lease.heartbeat();
      }

      const [renewed] = await queue.leasedIds();
      expect(renewed?.runId).toBe('r1');
      expect(renewed!.expiresAt).toBeGreaterThan(first!.expiresAt);
      expect(lease.signal.aborted).toBe(false);
      bench.release('r1');
      await bench.finished.reach(1, 'r1 to finish');
      expect(lost).toEqual([]);
    });

    it('reports a handler that throws as lost and does not run it again', async () => {
      const failure = new Error('executor crashed');
      const record = bench.handler('w1');
      queue.lease(worker('w1'), async (job, lease) => {
        await record(job, lease);
        if (job.runId === 'r1') throw failure;
      });
      await queue.enqueue({ runId: 'r1' });
      await lostCount.reach(1, 'the failed handler to be reported');

      expect(lost).toEqual([{ runId: 'r1', worker: 'w1', reason: 'handler_failed', error: failure }]);
      await barrier();
      expect(bench.timesHandled('r1')).toBe(1);
    });

    it('stops leasing to a closed worker, whose close waits for its handlers in flight', async () => {
      bench.hold = true;
      const first = queue.lease(worker('w1'), bench.handler('w1'));
      await queue.enqueue({ runId: 'r0' });
      await bench.started.reach(1, 'r0 to be leased');
      let closed = false;
      const closing = first.close().then(() => {
        closed = true;
      });

      await queue.enqueue({ runId: 'r1' });
      expect(await queue.pendingIds()).toEqual(['r1']);
      queue.lease(worker('w2'), bench.handler('w2'));
      await bench.started.reach(2, 'r1 to go to the open worker');
      expect(bench.workerOf('r1')).toBe('w2');
      expect(closed).toBe(false);

      bench.release('r0');
      await within(closing, 'the closed worker to drain');
      expect(closed).toBe(true);
    });

    it('delivers nothing more once closed, and refuses new work', async () => {
      bench.hold = true;
      const subscription = queue.lease(worker('w1'), bench.handler('w1'));
      await queue.enqueue({ runId: 'r0' });
      await queue.enqueue({ runId: 'r1' });
      await bench.started.reach(1, 'r0 to be leased');
      await queue.close();

      // Freeing the worker's only slot would pull r1 on an open queue.
      bench.release('r0');
      await bench.finishedRun('r0');
      // One turn of the event loop: time for an open queue to have handed r1 to the freed worker.
      await new Promise((resolve) => setImmediate(resolve));
      expect(bench.handled.map((h) => h.runId)).toEqual(['r0']);
      await within(subscription.close(), 'the worker to drain r0');

      await expect(queue.enqueue({ runId: 'r2' })).rejects.toThrow(RunQueueClosedError);
      expect(() => queue.lease(worker('w2'), bench.handler('w2'))).toThrow(RunQueueClosedError);
    });
  });
}

/** Waits, between turns of the event loop, until `runId` holds a lease (delivery may be asynchronous). */
async function waitForLease(queue: RunQueue, runId: string): Promise<void> {
  await pollUntil(async () => (await queue.leasedIds()).some((l) => l.runId === runId), `${runId} to be leased`);
}

async function waitUntilSettled(queue: RunQueue, runId: string): Promise<void> {
  await pollUntil(async () => !(await queue.leasedIds()).some((l) => l.runId === runId), `${runId} to be released`);
}

async function pollUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
  let gaveUp = false;
  const polling = (async () => {
    while (!gaveUp && !(await condition())) await new Promise((resolve) => setImmediate(resolve));
  })();
  try {
    await within(polling, what);
  } finally {
    // Stops the loop when `within` gave up, so a failed test leaves nothing spinning.
    gaveUp = true;
  }
}
