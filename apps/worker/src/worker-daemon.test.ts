import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { type RunOutcome, type RunPlaybookOptions, runPlaybook, sealBundle } from '@baton/executor';
import { inlineBundle, play, succeededOutcome, tempDir } from '@baton/executor/testing';
import {
  createInProcessRunQueue,
  type JobHandler,
  LeaseExpiredError,
  type Lease,
  type LeaseLossReason,
  type RunJob,
  type RunQueue,
} from '@baton/queue';
import { closeRedis, createRunClaims, openRedis, type RunClaims, type WorkerHeartbeat } from '@baton/queue/redis';
import { createWorkerDaemon, type WorkerDaemon, type WorkerDaemonDeps } from './worker-daemon.js';

const KEY = crypto.randomBytes(32);
/** Claims go to the real Redis, under a prefix of this suite's own. */
const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `baton_t_daemon_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
const QUICK = play('    - debug: msg=hello\n');
const SHORT_SLEEP = play('    - command: sleep 1\n');
const LONG_SLEEP = play('    - command: sleep 300\n');

/** Waits for `check` to hold, failing with `what` after a generous safety net (never a measure of speed). */
async function eventually(check: () => boolean, what: string, ms = 45_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What the daemon sent to its event sink, registry and logger. */
function recorder() {
  const events: RunEvent[] = [];
  const beats: WorkerHeartbeat[] = [];
  const logs: Array<{ level: string; message: string; meta: Record<string, unknown> }> = [];
  let flushes = 0;
  const log =
    (level: string) =>
    (message: string, meta: Record<string, unknown> = {}) =>
      void logs.push({ level, message, meta });
  return {
    events,
    beats,
    logs,
    flushes: () => flushes,
    sink: { push: (e: RunEvent) => void events.push(e), flush: async () => void (flushes += 1) },
    registry: { beat: async (h: WorkerHeartbeat) => void beats.push(structuredClone(h)) },
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    of: (runId: string) => events.filter((e) => e.run_id === runId),
    finalOf: (runId: string) =>
      events.find((e) => e.run_id === runId && e.kind === 'status' && e.data.status === 'finished'),
  };
}

/**
 * The in-process queue as a worker sees it in queue mode. It keeps only run ids and labels (embedded mode
 * builds bundles at dispatch), so the sealed bundle rides beside it here, as BullMQ carries it in the job.
 */
function queueWithBundles(queue: RunQueue) {
  const bundles = new Map<string, string>();
  return {
    lease: (spec: Parameters<RunQueue['lease']>[0], handler: JobHandler) =>
      queue.lease(spec, (job, lease) =>
        handler({ ...job, ...(bundles.has(job.runId) ? { bundle: bundles.get(job.runId)! } : {}) }, lease),
      ),
    leasedIds: () => queue.leasedIds(),
    async enqueue(job: RunJob) {
      if (job.bundle !== undefined) bundles.set(job.runId, job.bundle);
      await queue.enqueue({ runId: job.runId });
    },
  };
}

describe('createWorkerDaemon', () => {
  let workRoot: string;
  let rec: ReturnType<typeof recorder>;
  let queue: RunQueue;
  let seam: ReturnType<typeof queueWithBundles>;
  let lost: Array<{ runId: string; reason: LeaseLossReason }>;
  let daemon: WorkerDaemon | undefined;
  let playbookCalls: string[];
  let claims: RunClaims;

  const runPlaybookCounted = (bundle: RunBundle, opts: RunPlaybookOptions): Promise<RunOutcome> => {
    playbookCalls.push(bundle.run_id);
    return runPlaybook(bundle, opts);
  };

  function startDaemon(extra: Partial<WorkerDaemonDeps> = {}, leaseMs = 30_000): Promise<void> {
    queue = createInProcessRunQueue({
      leaseMs,
      onLost: (runId, _worker, reason) => {
        lost.push({ runId, reason });
        if (reason === 'expired') daemon?.leaseLost(runId);
      },
    });
    seam = queueWithBundles(queue);
    daemon = createWorkerDaemon({
      queue: seam,
      events: rec.sink,
      registry: rec.registry,
      claims,
      runPlaybook: runPlaybookCounted,
      workerKey: KEY,
      name: 'w-test',
      labels: ['linux'],
      capacity: 2,
      logger: rec.logger,
      graceMs: 60_000,
      host: 'host-t',
      pid: 1234,
      playbookOptions: {
        workRoot,
        sandbox: { mode: 'off', hidden: [] },
        interruptGraceMs: 2_000,
        terminateGraceMs: 1_000,
      },
      ...extra,
    });
    return daemon.start();
  }

  const sealed = (runId: string, content: string) => sealBundle(inlineBundle(content, { run_id: runId }), KEY);

  beforeEach(() => {
    workRoot = tempDir('baton-worker-daemon');
    rec = recorder();
    lost = [];
    playbookCalls = [];
    daemon = undefined;
    claims = createRunClaims({ redisUrl: REDIS_URL, prefix: PREFIX });
  });

  afterEach(async () => {
    daemon?.abortAll();
    await daemon?.stop(0);
    await queue?.close();
    await claims.close();
    fs.rmSync(workRoot, { recursive: true, force: true });
  });

  afterAll(async () => {
    const redis = openRedis(REDIS_URL, 'daemon-test-cleanup');
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await closeRedis(redis);
  });

  it('runs a sealed bundle: events gap-free from seq 1, running names the worker, a finished status last, then a flush', async () => {
    await startDaemon();
    await seam.enqueue({ runId: 'run_ok', bundle: sealed('run_ok', QUICK) });
    await eventually(() => rec.finalOf('run_ok') !== undefined, 'the run to finish');
    await eventually(() => daemon!.running().length === 0, 'the run to be released');

    const events = rec.of('run_ok');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ kind: 'status', data: { status: 'running', worker: 'w-test' } });
    expect(events.at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'succeeded', exit_code: 0 });
    expect(events.some((e) => e.kind === 'runner_on_ok')).toBe(true);
    expect(rec.flushes()).toBeGreaterThanOrEqual(1);
    expect(rec.logs).toContainEqual({
      level: 'info',
      message: 'ansible-playbook started',
      meta: expect.objectContaining({ run_id: 'run_ok', pid: expect.any(Number) }),
    });
    expect(lost).toEqual([]);
  });

  /**
   * Flips a bit of the first ciphertext byte. Not the last base64url character: its low bits may be padding that
   * decoding drops, which would leave the ciphertext as it was.
   */
  const alterCiphertext = (text: string): string => {
    const parts = text.split('.');
    const bytes = Buffer.from(parts[5]!, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    return [...parts.slice(0, 5), bytes.toString('base64url')].join('.');
  };

  it.each([
    ['sealed under another key', () => sealBundle(inlineBundle(QUICK, { run_id: 'run_bad' }), crypto.randomBytes(32))],
    ['sealed for another run', () => sealed('run_other', QUICK)],
    ['altered', () => alterCiphertext(sealed('run_bad', QUICK))],
    ['not a sealed bundle', () => 'garbage'],
    ['missing', () => undefined],
  ])(
    'does not run a bundle %s: one error / bad_bundle event at seq 1, flushed, and the bundle never logged',
    async (_what, bundleOf) => {
      await startDaemon();
      const bundle = bundleOf();
      await seam.enqueue({ runId: 'run_bad', ...(bundle !== undefined ? { bundle } : {}) });
      await eventually(
        () => rec.events.length > 0 && daemon!.running().length === 0 && rec.flushes() > 0,
        'the refusal',
      );
      await queue.close();

      expect(rec.events).toEqual([
        {
          run_id: 'run_bad',
          seq: 1,
          ts: expect.any(String),
          kind: 'status',
          data: { status: 'finished', conclusion: 'error', reason: 'bad_bundle' },
        },
      ]);
      expect(playbookCalls).toEqual([]);
      expect(rec.logs).toContainEqual({
        level: 'warn',
        message: 'run not started: bad bundle',
        meta: expect.objectContaining({ run_id: 'run_bad', reason: 'bad_bundle' }),
      });
      if (bundle !== undefined && bundle.length > 20) expect(JSON.stringify(rec.logs)).not.toContain(bundle.slice(-20));
      expect(lost).toEqual([]);
    },
  );

  it('never runs one enqueue twice: the same job re-added is dropped unrun, a new enqueue (new nonce) runs', async () => {
    await startDaemon();
    const job = { runId: 'run_once', bundle: sealed('run_once', QUICK) };
    await seam.enqueue(job);
    await eventually(() => rec.finalOf('run_once') !== undefined && daemon!.running().length === 0, 'the first run');
    const firstEvents = rec.of('run_once').length;

    // The identical payload again (a stale snapshot, a foreign writer): leased, claimed before, not run.
    await seam.enqueue(job);
    await eventually(() => rec.logs.some((l) => l.meta.reason === 'already_claimed'), 'the duplicate to be dropped');
    await eventually(() => daemon!.running().length === 0, 'the job to settle');
    expect(playbookCalls).toEqual(['run_once']);
    expect(rec.of('run_once')).toHaveLength(firstEvents);
    expect(lost).toEqual([]);
    expect(rec.logs).toContainEqual({
      level: 'warn',
      message: expect.stringMatching(/claimed before/),
      meta: { run_id: 'run_once', reason: 'already_claimed' },
    });

    // Another process (another worker) gets the same copy: refused by Redis, not by this daemon's memory.
    const other = createRunClaims({ redisUrl: REDIS_URL, prefix: PREFIX });
    const { openSealedBundle } = await import('@baton/executor');
    const { nonce } = openSealedBundle(job.bundle, 'run_once', KEY);
    expect(await other.claim('run_once', nonce, 60_000)).toBe(false);
    await other.close();

    // A new enqueue of the run (the recovery sweep after Redis lost it) seals a new nonce: it runs.
    await seam.enqueue({ runId: 'run_once', bundle: sealed('run_once', QUICK) });
    await eventually(() => playbookCalls.length === 2 && daemon!.running().length === 0, 'the new enqueue to run');
  });

  it('does not run an expired bundle: one error / bundle_expired event at seq 1', async () => {
    await startDaemon();
    const old = sealBundle(inlineBundle(QUICK, { run_id: 'run_old' }), KEY, {
      now: Date.now() - 90_000,
      lifetimeMs: 60_000,
    });
    await seam.enqueue({ runId: 'run_old', bundle: old });
    await eventually(() => rec.events.length > 0 && rec.flushes() > 0, 'the refusal');
    expect(rec.events).toEqual([
      expect.objectContaining({
        run_id: 'run_old',
        seq: 1,
        data: { status: 'finished', conclusion: 'error', reason: 'bundle_expired' },
      }),
    ]);
    expect(playbookCalls).toEqual([]);
  });

  it('a claim Redis never answers fails the job (reported lost), and nothing runs', async () => {
    await startDaemon({
      claims: { claim: () => Promise.reject(new Error('Redis did not answer the claim')) },
    });
    await seam.enqueue({ runId: 'run_unclaimed', bundle: sealed('run_unclaimed', QUICK) });
    await eventually(() => lost.length > 0, 'the loss report');
    expect(lost).toEqual([{ runId: 'run_unclaimed', reason: 'handler_failed' }]);
    expect(playbookCalls).toEqual([]);
    expect(rec.events).toEqual([]);
  });

  it('stop with a grace period lets a short run finish, takes no new run, and ends with a stopped beat', async () => {
    await startDaemon();
    await seam.enqueue({ runId: 'run_short', bundle: sealed('run_short', SHORT_SLEEP) });
    await eventually(() => rec.logs.some((l) => l.message === 'ansible-playbook started'), 'ansible to start');

    const stopped = daemon!.stop(60_000);
    await seam.enqueue({ runId: 'run_late', bundle: sealed('run_late', QUICK) });
    await stopped;

    expect(rec.finalOf('run_short')!.data).toMatchObject({ conclusion: 'succeeded' });
    expect(rec.of('run_late')).toEqual([]);
    expect(await queue.pendingIds()).toEqual(['run_late']);
    expect(rec.beats.at(-1)).toMatchObject({ name: 'w-test', stopped: true, running: [], lease_expires_at: null });
  });

  it('stop with no grace cancels a sleeping playbook as canceled / shutdown', async () => {
    await startDaemon();
    await seam.enqueue({ runId: 'run_sleep', bundle: sealed('run_sleep', LONG_SLEEP) });
    await eventually(() => rec.events.some((e) => e.kind === 'playbook_on_task_start'), 'the sleep task to start');

    await daemon!.stop(0);

    expect(rec.finalOf('run_sleep')!.data).toMatchObject({
      status: 'finished',
      conclusion: 'canceled',
      reason: 'shutdown',
    });
    const events = rec.of('run_sleep');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(rec.beats.at(-1)).toMatchObject({ stopped: true, running: [] });
    expect(lost).toEqual([]);
  });

  it('ends a run whose lease expired error / worker_lost, not canceled', async () => {
    // A lease of 1 s that nobody renews (the heartbeat is an hour away): the queue reports it expired.
    await startDaemon({ heartbeatMs: 3_600_000 }, 1_000);
    await seam.enqueue({ runId: 'run_lost', bundle: sealed('run_lost', LONG_SLEEP) });
    await eventually(() => rec.finalOf('run_lost') !== undefined, 'the lost run to end');

    expect(lost).toEqual([{ runId: 'run_lost', reason: 'expired' }]);
    expect(rec.finalOf('run_lost')!.data).toMatchObject({
      status: 'finished',
      conclusion: 'error',
      reason: 'worker_lost',
    });
    expect(rec.of('run_lost').some((e) => e.kind === 'log' && String(e.data.text).includes('lost its lease'))).toBe(
      true,
    );
  });

  it('cancels a run whose lease the queue aborted for a cancel as canceled / canceled', async () => {
    await startDaemon();
    await seam.enqueue({ runId: 'run_cancel', bundle: sealed('run_cancel', LONG_SLEEP) });
    await eventually(() => rec.events.some((e) => e.kind === 'playbook_on_task_start'), 'the sleep task to start');
    expect(await queue.cancel('run_cancel')).toBe(true);
    await eventually(() => rec.finalOf('run_cancel') !== undefined, 'the canceled run to end');
    expect(rec.finalOf('run_cancel')!.data).toMatchObject({ conclusion: 'canceled', reason: 'canceled' });
  });
});

/** A queue seam the test drives by hand: it hands jobs to the daemon's handler with leases it controls. */
function manualQueue() {
  let handler: JobHandler | undefined;
  const heartbeats = new Map<string, number>();
  const controllers = new Map<string, AbortController>();
  const settled: Array<Promise<void>> = [];
  return {
    heartbeats,
    controllers,
    lease(_spec: unknown, h: JobHandler) {
      handler = h;
      return { close: async () => void (await Promise.allSettled(settled)), pause() {}, resume() {} };
    },
    leasedIds: async () =>
      [...controllers.keys()].map((runId) => ({ runId, worker: 'w-manual', expiresAt: Date.UTC(2030, 0, 1) })),
    give(job: RunJob): Promise<void> {
      const controller = new AbortController();
      controllers.set(job.runId, controller);
      const lease: Lease = {
        signal: controller.signal,
        heartbeat: () => void heartbeats.set(job.runId, (heartbeats.get(job.runId) ?? 0) + 1),
      };
      const done = handler!(job, lease);
      settled.push(done.catch(() => {}));
      return done;
    },
  };
}

/** Held by a test to keep a stopping run from ending (a real ansible takes a while to stop). */
let stopGate: Promise<void> | undefined;

/** An event as runPlaybook emits it, stamped now. */
const eventOf = (runId: string, seq: number, kind: RunEvent['kind'], data: RunEvent['data']): RunEvent => ({
  run_id: runId,
  seq,
  ts: new Date().toISOString(),
  kind,
  data,
});

/** A stand-in for runPlaybook: a running event, then waits for the abort and ends with the conclusion it implies. */
async function fakeRun(bundle: RunBundle, opts: RunPlaybookOptions): Promise<RunOutcome> {
  opts.onEvent(eventOf(bundle.run_id, 1, 'status', { status: 'running' }));
  if (!opts.signal!.aborted)
    await new Promise((resolve) => opts.signal!.addEventListener('abort', resolve, { once: true }));
  await stopGate;
  const reason = (opts.signal!.reason as Error).name;
  const outcome =
    reason === 'WorkerLostAbort'
      ? { conclusion: 'error', reason: 'worker_lost' }
      : { conclusion: 'canceled', reason: reason === 'ShutdownAbort' ? 'shutdown' : 'canceled' };
  opts.onEvent(eventOf(bundle.run_id, 2, 'status', { status: 'finished', ...outcome }));
  return { exitCode: null, conclusion: outcome.conclusion as RunOutcome['conclusion'], stats: {}, logLines: 0 };
}

describe('createWorkerDaemon with a queue driven by hand', () => {
  let rec: ReturnType<typeof recorder>;
  let daemon: WorkerDaemon;
  let queue: ReturnType<typeof manualQueue>;

  const make = (extra: Partial<WorkerDaemonDeps> = {}) => {
    queue = manualQueue();
    daemon = createWorkerDaemon({
      queue,
      events: rec.sink,
      registry: rec.registry,
      // Every job here is given once: claims are the other suite's subject.
      claims: { claim: async () => true },
      runPlaybook: fakeRun,
      workerKey: KEY,
      name: 'w-manual',
      labels: ['a', 'b'],
      capacity: 3,
      logger: rec.logger,
      graceMs: 0,
      host: 'host-m',
      pid: 77,
      ...extra,
    });
    return daemon;
  };

  beforeEach(() => {
    rec = recorder();
  });

  afterEach(async () => {
    await daemon.stop(0);
  });

  it('heartbeats every held lease and beats the registry with the running ids and the lease expiry', async () => {
    await make({ heartbeatMs: 25 }).start();
    expect(rec.beats[0]).toMatchObject({
      name: 'w-manual',
      host: 'host-m',
      pid: 77,
      labels: ['a', 'b'],
      capacity: 3,
      running: [],
      lease_expires_at: null,
    });
    expect(rec.beats[0]).not.toHaveProperty('stopped');

    const run = queue.give({ runId: 'run_hb', bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_hb' }), KEY) });
    await eventually(() => (queue.heartbeats.get('run_hb') ?? 0) >= 2, 'two lease heartbeats');
    await eventually(() => rec.beats.some((b) => b.running.includes('run_hb')), 'a beat naming the run');
    const during = rec.beats.find((b) => b.running.includes('run_hb'))!;
    expect(during).toMatchObject({
      running: ['run_hb'],
      lease_expires_at: new Date(Date.UTC(2030, 0, 1)).toISOString(),
      started_at: rec.beats[0]!.started_at,
    });
    expect(Date.parse(during.last_heartbeat)).toBeGreaterThanOrEqual(Date.parse(rec.beats[0]!.last_heartbeat));

    await daemon.stop(0);
    await run;
    expect(rec.finalOf('run_hb')!.data).toMatchObject({ conclusion: 'canceled', reason: 'shutdown' });
    expect(rec.beats.at(-1)).toMatchObject({ running: [], stopped: true, lease_expires_at: null });
  });

  it('logs a failing registry or lease heartbeat and goes on', async () => {
    let calls = 0;
    await make({
      heartbeatMs: 25,
      registry: {
        beat: async () =>
          void (
            (calls += 1),
            (() => {
              throw new Error('redis away');
            })()
          ),
      },
    }).start();
    await eventually(() => calls >= 3, 'three beats despite failures');
    expect(rec.logs.filter((l) => l.message === 'worker heartbeat failed')[0]!.meta).toEqual({ error: 'redis away' });
  });

  it('ends the run error / worker_lost when the queue reports the expiry right after aborting the lease', async () => {
    await make().start();
    const run = queue.give({ runId: 'run_lost', bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_lost' }), KEY) });
    await eventually(() => rec.of('run_lost').length === 1, 'the run to start');
    queue.controllers.get('run_lost')!.abort(new Error('lock lost'));
    daemon.leaseLost('run_lost');
    await run;
    expect(rec.finalOf('run_lost')!.data).toEqual({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
    expect(rec.logs).toContainEqual({
      level: 'warn',
      message: 'lease lost: stopping the run',
      meta: { run_id: 'run_lost' },
    });
  });

  it("ends the run error / worker_lost when the lease is aborted with a LeaseExpiredError (the Redis queue's reason)", async () => {
    await make().start();
    const run = queue.give({
      runId: 'run_expired',
      bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_expired' }), KEY),
    });
    await eventually(() => rec.of('run_expired').length === 1, 'the run to start');
    queue.controllers.get('run_expired')!.abort(new LeaseExpiredError('run_expired'));
    await run;
    expect(rec.finalOf('run_expired')!.data).toEqual({
      status: 'finished',
      conclusion: 'error',
      reason: 'worker_lost',
    });
  });

  it('still ends the run error / worker_lost when the expiry is reported after the abort was taken for a cancel', async () => {
    let release!: () => void;
    stopGate = new Promise<void>((r) => (release = r));
    try {
      await make().start();
      const run = queue.give({
        runId: 'run_late',
        bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_late' }), KEY),
      });
      await eventually(() => rec.of('run_late').length === 1, 'the run to start');
      queue.controllers.get('run_late')!.abort(new Error('lock lost'));
      // Two turns: the daemon has passed the abort on as a cancel by now.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      daemon.leaseLost('run_late');
      release();
      await run;
      expect(rec.finalOf('run_late')!.data).toEqual({ status: 'finished', conclusion: 'error', reason: 'worker_lost' });
    } finally {
      stopGate = undefined;
    }
  });

  it('ends a canceled run canceled / canceled and ignores leaseLost for runs it does not hold', async () => {
    await make().start();
    daemon.leaseLost('run_unknown');
    const run = queue.give({ runId: 'run_c', bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_c' }), KEY) });
    await eventually(() => rec.of('run_c').length === 1, 'the run to start');
    queue.controllers.get('run_c')!.abort(new Error('run run_c canceled'));
    await run;
    expect(rec.finalOf('run_c')!.data).toEqual({ status: 'finished', conclusion: 'canceled', reason: 'canceled' });
  });

  it('finishes the run error / executor_error with the next seq when runPlaybook throws', async () => {
    await make({
      runPlaybook: async (bundle, opts) => {
        opts.onEvent(eventOf(bundle.run_id, 1, 'status', { status: 'running' }));
        opts.onEvent(eventOf(bundle.run_id, 2, 'log', { text: 'x\n', start_line: 1, end_line: 2 }));
        throw new Error('executor bug');
      },
    }).start();
    await queue.give({ runId: 'run_throw', bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_throw' }), KEY) });
    expect(rec.of('run_throw').map((e) => [e.seq, e.kind])).toEqual([
      [1, 'status'],
      [2, 'log'],
      [3, 'status'],
    ]);
    expect(rec.finalOf('run_throw')!.data).toEqual({
      status: 'finished',
      conclusion: 'error',
      reason: 'executor_error',
    });
    expect(rec.logs).toContainEqual({
      level: 'error',
      message: 'executor failed',
      meta: { run_id: 'run_throw', last_seq: 2, error: 'executor bug' },
    });
  });

  it('logs what runPlaybook could not clean up after the run, with the run id', async () => {
    await make({
      runPlaybook: async (bundle, opts) => {
        opts.onEvent(eventOf(bundle.run_id, 1, 'status', { status: 'finished', conclusion: 'succeeded' }));
        return succeededOutcome({ cleanupProblems: ['removing the run directory: EBUSY'] });
      },
    }).start();
    await queue.give({ runId: 'run_dirty', bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_dirty' }), KEY) });
    expect(rec.logs).toContainEqual({
      level: 'warn',
      message: 'cleanup after the run failed',
      meta: { run_id: 'run_dirty', problems: ['removing the run directory: EBUSY'] },
    });
  });

  it("fails the job when the run's events cannot be flushed, so the queue reports it lost", async () => {
    await make({ events: { push: () => {}, flush: async () => Promise.reject(new Error('stream down')) } }).start();
    const run = queue.give({
      runId: 'run_noflush',
      bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_noflush' }), KEY),
    });
    await eventually(() => daemon.running().includes('run_noflush'), 'the run to start');
    daemon.abortAll();
    await expect(run).rejects.toThrow('stream down');
    expect(daemon.running()).toEqual([]);
  });

  it('cancels at once a run leased after the grace period ran out', async () => {
    await make().start();
    daemon.abortAll();
    await queue.give({ runId: 'run_after', bundle: sealBundle(inlineBundle(QUICK, { run_id: 'run_after' }), KEY) });
    expect(rec.finalOf('run_after')!.data).toMatchObject({ conclusion: 'canceled', reason: 'shutdown' });
  });
});
