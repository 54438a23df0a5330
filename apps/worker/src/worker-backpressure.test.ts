// A worker cut off from Redis for its events only (the stream's connection goes through a TCP hop the test cuts),
// while its queue still reaches Redis: past BATON_WORKER_BUFFER_MB it leases no new run though it has a free slot,
// says so in its heartbeat, loses no event, and leases again once the buffer has drained.
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { type RunOutcome, type RunPlaybookOptions, sealBundle } from '@baton/executor';
import { inlineBundle, play } from '@baton/executor/testing';
import {
  closeRedis,
  createRedisRunQueue,
  createRunClaims,
  createRunEventProducer,
  openRedis,
  runEventStreamKey,
  type WorkerHeartbeat,
} from '@baton/queue/redis';
import { startRedisProxy } from '@baton/queue/testing';
import { createWorkerDaemon } from './worker-daemon.js';

const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `baton_t_backpressure_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
const KEY = crypto.randomBytes(32);
const EVENTS_PER_RUN = 60;

async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A stand-in for ansible: EVENTS_PER_RUN events of about 1 kB each, then the run's end. */
async function chattyRun(bundle: RunBundle, opts: RunPlaybookOptions): Promise<RunOutcome> {
  const event = (seq: number, kind: RunEvent['kind'], data: Record<string, unknown>): RunEvent => ({
    run_id: bundle.run_id,
    seq,
    ts: new Date().toISOString(),
    kind,
    data,
  });
  opts.onEvent(event(1, 'status', { status: 'running' }));
  for (let seq = 2; seq < EVENTS_PER_RUN; seq++)
    opts.onEvent(event(seq, 'log', { text: `${'x'.repeat(1_000)}\n`, start_line: seq, end_line: seq + 1 }));
  opts.onEvent(event(EVENTS_PER_RUN, 'status', { status: 'finished', conclusion: 'succeeded', exit_code: 0 }));
  return { exitCode: 0, conclusion: 'succeeded', stats: {}, logLines: EVENTS_PER_RUN };
}

describe('a worker whose event buffer is full', () => {
  const admin = openRedis(REDIS_URL, 'backpressure-test');
  afterAll(async () => {
    const keys = await admin.keys(`${PREFIX}:*`);
    if (keys.length > 0) await admin.del(...keys);
    await closeRedis(admin);
  });

  it('leases no new run until the buffer drains, reports it in its heartbeat, and loses no event', async () => {
    const hop = await startRedisProxy(REDIS_URL);
    const pressure: boolean[] = [];
    const daemonRef: { current?: ReturnType<typeof createWorkerDaemon> } = {};
    const events = createRunEventProducer({
      redisUrl: hop.url,
      prefix: PREFIX,
      maxBufferedBytes: 20_000,
      onBackpressure: (full) => {
        pressure.push(full);
        daemonRef.current?.eventBufferFull(full);
      },
    });
    const queue = createRedisRunQueue({ redisUrl: REDIS_URL, prefix: PREFIX });
    const claims = createRunClaims({ redisUrl: REDIS_URL, prefix: PREFIX });
    const beats: WorkerHeartbeat[] = [];
    const logs: string[] = [];
    const started: string[] = [];
    const log = (message: string) => void logs.push(message);
    const daemon = createWorkerDaemon({
      queue,
      events,
      claims,
      registry: { beat: async (h) => void beats.push(structuredClone(h)) },
      runPlaybook: (bundle, opts) => {
        started.push(bundle.run_id);
        return chattyRun(bundle, opts);
      },
      workerKey: KEY,
      name: 'w-pressure',
      labels: [],
      capacity: 2,
      heartbeatMs: 200,
      logger: { info: log, warn: log, error: log },
      graceMs: 1_000,
    });
    daemonRef.current = daemon;
    const enqueue = (runId: string) =>
      queue.enqueue({ runId, bundle: sealBundle(inlineBundle(play('    - debug: msg=hi\n'), { run_id: runId }), KEY) });
    try {
      await daemon.start();
      await hop.down();
      // The first run's events cannot leave: 60 kB against a 20 kB cap. Its handler waits in the final flush.
      await enqueue('run_bp1');
      await eventually(() => pressure.includes(true), 'the buffer to be full');
      expect(started).toEqual(['run_bp1']);
      await eventually(() => beats.at(-1)?.paused === 'event_buffer_full', 'a heartbeat that says it is paused');
      expect(logs).toContain('event buffer full: leasing no new run until it drains (no event is dropped)');

      // A slot is free, but nothing is leased while the buffer is full: several polls (one a second) go by.
      await enqueue('run_bp2');
      await new Promise((r) => setTimeout(r, 3_000));
      expect(started).toEqual(['run_bp1']);
      expect(await queue.pendingIds()).toEqual(['run_bp2']);
      expect(daemon.running()).toEqual(['run_bp1']);

      // Redis reachable again: the buffer drains, leasing resumes, the waiting run runs.
      await hop.up();
      await eventually(() => started.length === 2, 'the waiting run to be leased after the drain');
      expect(pressure.slice(0, 2)).toEqual([true, false]);
      expect(started).toEqual(['run_bp1', 'run_bp2']);
      await eventually(() => daemon.running().length === 0, 'both runs to end');
      await events.flush();
      // The second run's burst (60 kB in one tick) may fill the buffer again for a moment: it ends drained.
      expect(pressure.at(-1)).toBe(false);
      await eventually(() => beats.at(-1) !== undefined && beats.at(-1)!.paused === undefined, 'an unpaused beat');

      // Every event of both runs is in the stream, gap-free from seq 1.
      const entries = await admin.xrange(runEventStreamKey(PREFIX), '-', '+');
      const seqsOf = (runId: string): number[] => [
        ...new Set(
          entries
            .map(([, fields]) => JSON.parse(fields[1]!) as RunEvent)
            .filter((e) => e.run_id === runId)
            .map((e) => e.seq),
        ),
      ];
      const all = Array.from({ length: EVENTS_PER_RUN }, (_, i) => i + 1);
      expect(seqsOf('run_bp1')).toEqual(all);
      expect(seqsOf('run_bp2')).toEqual(all);
    } finally {
      await hop.up();
      await daemon.stop(0);
      await queue.close();
      await events.close();
      await claims.close();
      await hop.down();
    }
  });
});
