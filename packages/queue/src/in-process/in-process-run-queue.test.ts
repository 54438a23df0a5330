import { describe, expect, it } from '@jest/globals';
import { DEFAULT_LEASE_MS, type OnLeaseLost } from '../run-queue.js';
import { deferred, ManualTimers, runQueueContract } from '../testing/index.js';
import { createInProcessRunQueue } from './in-process-run-queue.js';

/** Lets the handlers started by fired timers (from microtasks) run before the test looks. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

runQueueContract('in-process', async ({ onLost }) => {
  const timers = new ManualTimers();
  const leaseMs = 1_000;
  return {
    queue: createInProcessRunQueue({ onLost, leaseMs, timers }),
    leaseMs,
    elapse: async (ms) => {
      timers.advance(ms);
      await settle();
    },
  };
});

describe('in-process RunQueue', () => {
  /** A queue whose one worker holds run r1 until the returned `release` is called. */
  async function holdingOneRun(lost: Parameters<OnLeaseLost>[] = []) {
    const timers = new ManualTimers();
    const queue = createInProcessRunQueue({ onLost: (...args) => lost.push(args), timers });
    const started = deferred();
    const released = deferred();
    queue.lease({ name: 'w1', labels: [], capacity: 1 }, async () => {
      started.resolve();
      await released.promise;
    });
    await queue.enqueue({ runId: 'r1' });
    await started.promise;
    return { queue, timers, release: () => released.resolve() };
  }

  it('expires a lease after the default 30 s without a heartbeat', async () => {
    const lost: Parameters<OnLeaseLost>[] = [];
    const { queue, timers, release } = await holdingOneRun(lost);

    timers.advance(DEFAULT_LEASE_MS - 1);
    expect(lost).toEqual([]);
    timers.advance(1);
    expect(lost).toEqual([['r1', 'w1', 'expired']]);

    release();
    await queue.close();
  });

  it('leaves no timer scheduled once closed, even with a lease held', async () => {
    const { queue, timers, release } = await holdingOneRun();
    expect(timers.pendingCount()).toBe(1);

    await queue.close();
    expect(timers.pendingCount()).toBe(0);
    release();
  });
});
