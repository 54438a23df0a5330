import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { Lease, OnLeaseLost, RunJob, RunQueue } from '../run-queue.js';
import { Counter, deferred, runQueueContract, within, type Deferred } from '../testing/index.js';
import { deleteKeys, eventually, startRedisProxy, TEST_REDIS_URL, testPrefix } from '../testing/redis-test-support.js';
import {
  InvalidRunJobError,
  InvalidWorkerSpecError,
  LeaseExpiredError,
  RunCanceledError,
  RunQueueClosedError,
} from '../run-queue-errors.js';
import { POLL_MS } from './redis-run-queue-leasing.js';
import {
  createRedisRunQueue,
  InvalidRunQueueOptionsError,
  RedisUnavailableError,
  type RedisRunQueueOptions,
} from './redis-run-queue.js';

const LEASE_MS = 1_500;
const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Every prefix any test used, deleted at the end (SCAN + DEL; this Redis is shared with other suites).
const prefixes: string[] = [];
const newPrefix = (): string => {
  const prefix = testPrefix();
  prefixes.push(prefix);
  return prefix;
};

let admin: Redis;
beforeAll(() => {
  admin = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(admin, prefix);
  await admin.quit();
});

// The contract with real time: `elapse` waits for real, and the queue's own lease timers notice expiry.
runQueueContract('redis', async ({ onLost }) => ({
  queue: createRedisRunQueue({ redisUrl: TEST_REDIS_URL, prefix: newPrefix(), leaseMs: LEASE_MS, onLost }),
  leaseMs: LEASE_MS,
  elapse: (ms) => wait(ms),
}));

type LostCall = Parameters<OnLeaseLost>;

/** Opens queues on the test Redis (short leases) and closes them all after the enclosing describe. */
function queuesClosedAfterAll(): (options: Partial<RedisRunQueueOptions> & { prefix: string }) => RunQueue {
  const queues: RunQueue[] = [];
  afterAll(async () => {
    await Promise.all(queues.map((queue) => queue.close()));
  });
  return (options) => {
    const queue = createRedisRunQueue({ redisUrl: TEST_REDIS_URL, leaseMs: LEASE_MS, ...options });
    queues.push(queue);
    return queue;
  };
}

describe('Redis RunQueue', () => {
  const open = queuesClosedAfterAll();

  it('hands the whole job (labels and sealed bundle) to the handler, under keys that all start with the prefix', async () => {
    const prefix = newPrefix();
    const queue = open({ prefix });
    // A run id no other suite uses, so a search of the whole (shared) Redis finds only this queue's keys.
    const runId = `run_${prefix}`;
    await queue.enqueue({ runId, labels: ['linux', 'gpu'], bundle: 'sealed:abc' });

    const keys = await admin.keys(`*${runId}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.startsWith(`${prefix}:`))).toBe(true);

    const received = deferred<RunJob>();
    queue.lease({ name: 'w1', labels: ['gpu', 'linux', 'x86'], capacity: 1 }, async (job) => received.resolve(job));
    await expect(within(received.promise, 'the job')).resolves.toEqual({
      runId,
      labels: ['linux', 'gpu'],
      bundle: 'sealed:abc',
    });
  });

  it('never runs a finished run id again: its record stays, so the recovery sweep re-enqueueing a run whose events lag is a no-op', async () => {
    const queue = open({ prefix: newPrefix() });
    const finished = new Counter();
    queue.lease({ name: 'w1', labels: [], capacity: 1 }, async () => finished.increment());

    await queue.enqueue({ runId: 'run_r' });
    await finished.reach(1, 'the first job');
    await eventually(async () => (await queue.leasedIds()).length === 0, 'the first job to finish');
    await queue.enqueue({ runId: 'run_r' });
    expect(await queue.pendingIds()).toEqual([]);
    // A later job proves the worker still takes work, and that run_r was not among it.
    await queue.enqueue({ runId: 'run_s' });
    await finished.reach(2, 'the next run');
    expect(finished.value).toBe(2);
  });

  it('leases nothing to a paused worker, whose runs in flight go on, and leases again after resume', async () => {
    const prefix = newPrefix();
    const queue = open({ prefix });
    const received: string[] = [];
    const first = deferred<void>();
    const sub = queue.lease({ name: 'w-paused', labels: [], capacity: 2 }, async (job) => {
      received.push(job.runId);
      if (job.runId === 'run_p1') await first.promise;
    });
    await queue.enqueue({ runId: 'run_p1' });
    await eventually(() => received.length === 1, 'the first job');
    sub.pause();
    await queue.enqueue({ runId: 'run_p2' });
    // Several polls (one a second) and the enqueue notice go by: a paused worker with a free slot still takes nothing.
    await wait(3 * POLL_MS);
    expect(received).toEqual(['run_p1']);
    expect(await queue.pendingIds()).toEqual(['run_p2']);
    // The run it holds finishes normally meanwhile.
    first.resolve();
    await eventually(async () => (await queue.leasedIds()).length === 0, 'the first run to finish');
    sub.resume();
    await eventually(() => received.length === 2, 'the second job after resume');
    expect(received).toEqual(['run_p1', 'run_p2']);
  });

  it('treats a run id as one job even when enqueued again with other labels', async () => {
    const queue = open({ prefix: newPrefix() });
    await queue.enqueue({ runId: 'run_l', labels: ['gpu'] });
    await queue.enqueue({ runId: 'run_l', labels: ['arm'] });
    await queue.enqueue({ runId: 'run_l' });
    expect(await queue.pendingIds()).toEqual(['run_l']);
  });

  it('lists pending runs oldest first across label sets', async () => {
    const queue = open({ prefix: newPrefix() });
    await queue.enqueue({ runId: 'run_1', labels: ['a'] });
    await wait(2); // distinct enqueue timestamps, so the order across queues is defined
    await queue.enqueue({ runId: 'run_2' });
    await wait(2);
    await queue.enqueue({ runId: 'run_3', labels: ['a'] });
    await wait(2);
    await queue.enqueue({ runId: 'run_4', labels: ['b'] });
    expect(await queue.pendingIds()).toEqual(['run_1', 'run_2', 'run_3', 'run_4']);
  });

  it('refuses bad input with named errors', async () => {
    const queue = open({ prefix: newPrefix() });
    await expect(queue.enqueue({ runId: '' })).rejects.toBeInstanceOf(InvalidRunJobError);
    await expect(queue.enqueue({ runId: '42' })).rejects.toBeInstanceOf(InvalidRunJobError);
    await expect(queue.enqueue({ runId: 'a:b' })).rejects.toBeInstanceOf(InvalidRunJobError);
    await expect(queue.enqueue({ runId: 'run_x', labels: [''] })).rejects.toBeInstanceOf(InvalidRunJobError);
    await expect(queue.enqueue(null as unknown as RunJob)).rejects.toBeInstanceOf(InvalidRunJobError);
    expect(() => queue.lease({ name: 'w', labels: [], capacity: 0 }, async () => {})).toThrow(InvalidWorkerSpecError);
    expect(() => queue.lease({ name: '', labels: [], capacity: 1 }, async () => {})).toThrow(InvalidWorkerSpecError);
    expect(() => createRedisRunQueue({ redisUrl: TEST_REDIS_URL, prefix: 'a:b' })).toThrow(InvalidRunQueueOptionsError);
    expect(() => createRedisRunQueue({ redisUrl: TEST_REDIS_URL, prefix: 'p', leaseMs: 0 })).toThrow(
      InvalidRunQueueOptionsError,
    );
    await queue.close();
    await expect(queue.cancel('run_x')).rejects.toBeInstanceOf(RunQueueClosedError);
    await expect(queue.pendingIds()).rejects.toBeInstanceOf(RunQueueClosedError);
  });

  it('survives Redis being unreachable: enqueue rejects, errors are reported, close still returns', async () => {
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    const queue = open({ prefix: newPrefix(), redisUrl: proxy.url, onError: (error) => errors.push(error) });
    await queue.enqueue({ runId: 'run_before' });
    expect(await queue.pendingIds()).toEqual(['run_before']);

    await proxy.down();
    await eventually(() => errors.length > 0, 'the connection error to be reported');
    await expect(queue.enqueue({ runId: 'run_during' })).rejects.toBeInstanceOf(RedisUnavailableError);

    await proxy.up();
    await eventually(async () => {
      try {
        await queue.enqueue({ runId: 'run_after' });
        return true;
      } catch {
        return false;
      }
    }, 'enqueue to work again once Redis is back');
    expect(await queue.pendingIds()).toEqual(['run_before', 'run_after']);
    await queue.close();
    await proxy.close();
  });

  it('fails enqueue at once against a Redis that never answers, without crashing', async () => {
    const proxy = await startRedisProxy();
    await proxy.down();
    const errors: unknown[] = [];
    const queue = open({ prefix: newPrefix(), redisUrl: proxy.url, onError: (error) => errors.push(error) });
    await expect(queue.enqueue({ runId: 'run_x' })).rejects.toBeInstanceOf(RedisUnavailableError);
    expect(errors.length).toBeGreaterThan(0);
    await queue.close();
    await proxy.close();
  });

  describe('several instances on one prefix (API replicas and worker daemons)', () => {
    /** A handler that records what it ran and holds each run until released; heartbeats while `beat` is set. */
    function holdingHandler(name: string, started: Counter, ran: Array<{ runId: string; worker: string }>) {
      const gates = new Map<string, Deferred>();
      const leases = new Map<string, Lease>();
      const gate = (runId: string): Deferred => {
        if (!gates.has(runId)) gates.set(runId, deferred());
        return gates.get(runId)!;
      };
      return {
        leases,
        release: (runId: string) => gate(runId).resolve(),
        releaseAll: () => gates.forEach((g) => g.resolve()),
        handler: async (job: Readonly<RunJob>, lease: Lease) => {
          ran.push({ runId: job.runId, worker: name });
          leases.set(job.runId, lease);
          started.increment();
          // Keeps the lease alive like the worker daemon does, until the gate opens or the run is aborted.
          const beat = setInterval(() => lease.heartbeat(), Math.floor(LEASE_MS / 3));
          try {
            await Promise.race([
              gate(job.runId).promise,
              new Promise((resolve) => lease.signal.addEventListener('abort', resolve)),
            ]);
          } finally {
            clearInterval(beat);
          }
        },
      };
    }

    it('runs each job once across worker instances, spreads them, and routes labels across instances', async () => {
      const prefix = newPrefix();
      const api = open({ prefix, watchLeases: true });
      const started = new Counter();
      const ran: Array<{ runId: string; worker: string }> = [];
      const a = holdingHandler('worker-a', started, ran);
      const b = holdingHandler('worker-b', started, ran);
      open({ prefix }).lease({ name: 'worker-a', labels: ['linux'], capacity: 2 }, a.handler);
      open({ prefix }).lease({ name: 'worker-b', labels: ['linux', 'gpu'], capacity: 2 }, b.handler);

      const ids = Array.from({ length: 12 }, (_, i) => `run_${String(i).padStart(2, '0')}`);
      for (const runId of ids) await api.enqueue({ runId });
      // Both daemons fill their capacity before any run finishes: the jobs spread over both.
      await started.reach(4, 'both workers to fill their capacity');
      expect(ran.filter((r) => r.worker === 'worker-a')).toHaveLength(2);
      expect(ran.filter((r) => r.worker === 'worker-b')).toHaveLength(2);
      expect((await api.leasedIds()).map((l) => l.worker).sort()).toEqual([
        'worker-a',
        'worker-a',
        'worker-b',
        'worker-b',
      ]);

      await api.enqueue({ runId: 'run_gpu', labels: ['gpu'] });
      for (const runId of ids) {
        a.release(runId);
        b.release(runId);
      }
      await started.reach(13, 'every run, the gpu one included');
      b.release('run_gpu');
      expect(ran.find((r) => r.runId === 'run_gpu')?.worker).toBe('worker-b');
      expect(ran.map((r) => r.runId).sort()).toEqual([...ids, 'run_gpu'].sort());
      await eventually(
        async () => (await api.leasedIds()).length === 0 && (await api.pendingIds()).length === 0,
        'the queue to drain',
      );
    });

    it('delivers a cancel from the API instance to the worker instance that holds the run', async () => {
      const prefix = newPrefix();
      const apiLost: LostCall[] = [];
      const workerLost: LostCall[] = [];
      const api = open({ prefix, watchLeases: true, onLost: (...args) => apiLost.push(args) });
      const started = new Counter();
      const ran: Array<{ runId: string; worker: string }> = [];
      const w = holdingHandler('worker-a', started, ran);
      const subscription = open({ prefix, onLost: (...args) => workerLost.push(args) }).lease(
        { name: 'worker-a', labels: [], capacity: 1 },
        async (job, lease) => {
          await w.handler(job, lease);
          // An executor ends a canceled run by failing: not a lost worker.
          if (lease.signal.aborted) throw new Error('playbook interrupted');
        },
      );

      await api.enqueue({ runId: 'run_c' });
      await started.reach(1, 'the run to start on the worker instance');
      expect(await api.cancel('run_c')).toBe(true);
      await eventually(() => w.leases.get('run_c')!.signal.aborted, 'the cancel to reach the worker instance');
      await eventually(async () => (await api.leasedIds()).length === 0, 'the canceled run to be released');
      expect(await api.cancel('run_c')).toBe(false);
      await within(subscription.close(), 'the worker to drain');
      expect(apiLost).toEqual([]);
      expect(workerLost).toEqual([]);
    });

    it('has an API instance report the run of a worker that died exactly once, and never run it again', async () => {
      const prefix = newPrefix();
      const apiLost: LostCall[] = [];
      const workerLost: LostCall[] = [];
      const lostCount = new Counter();
      const onApiLost: OnLeaseLost = (...args) => {
        apiLost.push(args);
        lostCount.increment();
      };
      // Two API replicas watch leases: the claim must let only one of them report.
      const api = open({ prefix, watchLeases: true, onLost: onApiLost });
      open({ prefix, watchLeases: true, onLost: onApiLost });

      // The doomed worker reaches Redis through a proxy: taking the proxy down is a worker that vanished
      // without completing its job, whose heartbeats (and own lease checks) no longer reach Redis.
      const proxy = await startRedisProxy();
      const started = new Counter();
      const ran: Array<{ runId: string; worker: string }> = [];
      const doomed = holdingHandler('worker-doomed', started, ran);
      const doomedQueue = open({ prefix, redisUrl: proxy.url, onLost: (...args) => workerLost.push(args) });
      doomedQueue.lease({ name: 'worker-doomed', labels: [], capacity: 1 }, doomed.handler);
      await api.enqueue({ runId: 'run_d' });
      await started.reach(1, 'the doomed worker to take the run');
      expect((await api.leasedIds()).map((l) => l.worker)).toEqual(['worker-doomed']);

      await proxy.down();
      await lostCount.reach(1, 'an API replica to report the lost lease');
      expect(apiLost).toEqual([['run_d', 'worker-doomed', 'expired']]);
      expect(await api.leasedIds()).toEqual([]);
      expect(await api.pendingIds()).toEqual([]);

      // A healthy worker arrives: the lost run is not delivered again, and no replica reports it a second time.
      const healthy = holdingHandler('worker-ok', started, ran);
      open({ prefix }).lease({ name: 'worker-ok', labels: [], capacity: 1 }, healthy.handler);
      await api.enqueue({ runId: 'run_next' });
      healthy.release('run_next');
      await started.reach(2, 'the next run on the healthy worker');
      await wait(LEASE_MS); // a full lease more of watcher sweeps on both replicas
      expect(apiLost).toHaveLength(1);
      expect(ran.map((r) => r.runId)).toEqual(['run_d', 'run_next']);
      expect(workerLost).toEqual([]);

      await doomedQueue.close();
      doomed.releaseAll();
      await proxy.close();
    });
  });
});

/**
 * A TCP hop in front of Redis that can stop passing replies (`freeze`: commands reach Redis, answers do not come
 * back) and then cut every connection for good, so a test can drop the connection in the middle of a call.
 */
async function startFreezableProxy(): Promise<{ url: string; freeze(): void; cut(): Promise<void> }> {
  const { hostname, port } = new URL(TEST_REDIS_URL);
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port || 6379), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!frozen) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze: () => {
      frozen = true;
    },
    cut: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Redis RunQueue robustness', () => {
  const open = queuesClosedAfterAll();

  /**
   * A handler like the worker daemon's: heartbeats every third of the lease until its signal aborts, then ends the
   * playbook by failing (as an interrupted executor does). `leases` resolves with the lease of the run it got.
   */
  function abortableHandler(leaseMs: number) {
    const lease = deferred<Lease>();
    const handler = async (_job: Readonly<RunJob>, given: Lease): Promise<void> => {
      lease.resolve(given);
      const beat = setInterval(() => given.heartbeat(), Math.floor(leaseMs / 3));
      try {
        if (!given.signal.aborted)
          await new Promise((resolve) => given.signal.addEventListener('abort', resolve, { once: true }));
      } finally {
        clearInterval(beat);
      }
      throw new Error('playbook interrupted');
    };
    return { handler, lease: lease.promise };
  }

  it('aborts a run as canceled on its next heartbeat when the cancel marker is set but the PUBLISH never arrived', async () => {
    const prefix = newPrefix();
    const lost: LostCall[] = [];
    const api = open({ prefix, onLost: (...args) => lost.push(args) });
    const { handler, lease } = abortableHandler(LEASE_MS);
    open({ prefix, onLost: (...args) => lost.push(args) }).lease(
      { name: 'worker-a', labels: [], capacity: 1 },
      handler,
    );
    await api.enqueue({ runId: 'run_m' });
    const held = await within(lease, 'the run to start');

    // What a cancel leaves behind when the worker's subscriber missed its PUBLISH: only the marker.
    await admin.set(`${prefix}:canceled:run_m`, '1');
    await eventually(() => held.signal.aborted, 'the heartbeat to notice the marker');
    expect(held.signal.reason).toBeInstanceOf(RunCanceledError);
    await eventually(async () => (await api.leasedIds()).length === 0, 'the canceled run to be released');
    await eventually(async () => (await admin.exists(`${prefix}:canceled:run_m`)) === 0, 'the marker to be cleared');
    expect(lost).toEqual([]);
  });

  it('delivers a cancel published while the worker was cut off from Redis, once it is back', async () => {
    const prefix = newPrefix();
    const leaseMs = 6_000; // the outage stays well inside the lease: this is about the cancel, not the lease
    const lost: LostCall[] = [];
    const api = open({ prefix, leaseMs, onLost: (...args) => lost.push(args) });
    const proxy = await startRedisProxy();
    const workerErrors: unknown[] = [];
    const { handler, lease } = abortableHandler(leaseMs);
    const worker = open({
      prefix,
      leaseMs,
      redisUrl: proxy.url,
      onError: (error) => workerErrors.push(error),
      onLost: (...args) => lost.push(args),
    });
    worker.lease({ name: 'worker-a', labels: [], capacity: 1 }, handler);
    await api.enqueue({ runId: 'run_p' });
    const held = await within(lease, 'the run to start');

    await proxy.down();
    await eventually(() => workerErrors.length > 0, 'the worker to lose its connections');
    expect(await api.cancel('run_p')).toBe(true); // its PUBLISH reaches no subscriber of the worker
    await proxy.up();

    await eventually(() => held.signal.aborted, 'the worker to find the cancel after reconnecting');
    expect(held.signal.reason).toBeInstanceOf(RunCanceledError);
    await eventually(async () => (await api.leasedIds()).length === 0, 'the canceled run to be released');
    expect(lost).toEqual([]);
    await worker.close();
    await proxy.close();
  });

  it('stops a run locally once its lease ran out while Redis is unreachable, and leaves the report to the API', async () => {
    const prefix = newPrefix();
    const apiLost: LostCall[] = [];
    const workerLost: LostCall[] = [];
    const api = open({ prefix, watchLeases: true, onLost: (...args) => apiLost.push(args) });
    const proxy = await startRedisProxy();
    const { handler, lease } = abortableHandler(LEASE_MS);
    const worker = open({ prefix, redisUrl: proxy.url, onLost: (...args) => workerLost.push(args) });
    worker.lease({ name: 'worker-cut', labels: [], capacity: 1 }, handler);
    await api.enqueue({ runId: 'run_o' });
    const held = await within(lease, 'the run to start');

    await proxy.down();
    // Redis stays unreachable for the worker: only its own clock can tell it the lease is over.
    await eventually(() => held.signal.aborted, 'the worker to give the lease up on its own');
    expect(held.signal.reason).toBeInstanceOf(LeaseExpiredError);
    await eventually(() => apiLost.length > 0, 'the API to report the lost lease');
    expect(apiLost).toEqual([['run_o', 'worker-cut', 'expired']]);
    expect(workerLost).toEqual([]);
    await worker.close();
    await proxy.close();
  });

  it('registers a label set again on every enqueue, so a run re-enqueued after Redis lost its keys reaches a new worker', async () => {
    const prefix = newPrefix();
    const api = open({ prefix });
    await api.enqueue({ runId: 'run_w', labels: ['gpu'] });
    // Redis restarted empty: every key of the installation is gone, while the API instance's cache remembers the set.
    await deleteKeys(admin, prefix);
    await api.enqueue({ runId: 'run_w', labels: ['gpu'] });

    const received = deferred<RunJob>();
    open({ prefix }).lease({ name: 'worker-gpu', labels: ['gpu'], capacity: 1 }, async (job) => received.resolve(job));
    await expect(within(received.promise, 'the labeled run on a worker started after the wipe')).resolves.toEqual({
      runId: 'run_w',
      labels: ['gpu'],
    });
  });

  it('rejects enqueue, cancel, pendingIds and leasedIds with RedisUnavailableError while its connection is down', async () => {
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    const queue = open({ prefix: newPrefix(), redisUrl: proxy.url, onError: (error) => errors.push(error) });
    expect(await queue.pendingIds()).toEqual([]);
    await proxy.down();
    await eventually(() => errors.length > 0, 'the connection loss to be reported');

    await expect(within(queue.enqueue({ runId: 'run_x' }), 'enqueue to fail')).rejects.toBeInstanceOf(
      RedisUnavailableError,
    );
    await expect(within(queue.cancel('run_x'), 'cancel to fail')).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(within(queue.pendingIds(), 'pendingIds to fail')).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(within(queue.leasedIds(), 'leasedIds to fail')).rejects.toBeInstanceOf(RedisUnavailableError);
    await queue.close();
    await proxy.close();
  });

  it('rejects a call with RedisUnavailableError when the connection drops while it waits for Redis', async () => {
    const proxy = await startFreezableProxy();
    const queue = open({ prefix: newPrefix(), redisUrl: proxy.url });
    expect(await queue.pendingIds()).toEqual([]);

    proxy.freeze(); // the next commands reach Redis, their replies do not come back
    const pending = queue.pendingIds();
    const leased = queue.leasedIds();
    const canceled = queue.cancel('run_x');
    await proxy.cut(); // and now the connection is gone, with no Redis to reconnect to
    await expect(within(pending, 'pendingIds to fail')).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(within(leased, 'leasedIds to fail')).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(within(canceled, 'cancel to fail')).rejects.toBeInstanceOf(RedisUnavailableError);
    await queue.close();
  });
});
