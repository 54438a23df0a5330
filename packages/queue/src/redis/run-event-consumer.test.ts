import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { RunEvent } from '@baton/contracts';
import { deferred, within } from '../testing/index.js';
import { TEST_REDIS_URL, deleteKeys, eventually, testEvent, testPrefix } from '../testing/redis-test-support.js';
import {
  createRunEventConsumer,
  EventDeferredTooLongError,
  InvalidRunEventConsumerOptionsError,
  MalformedStreamEntryError,
  type RunEventConsumer,
  type RunEventConsumerOptions,
} from './run-event-consumer.js';
import { createRunEventProducer, type RunEventProducer } from './run-event-producer.js';
import { EVENT_FIELD, INGEST_GROUP, runEventStreamKey } from './run-event-stream-keys.js';

/**
 * The database as the ingest sees it: per run, events stored gap-free from seq 1. A seq after a gap is deferred
 * (an earlier part of the run is still elsewhere) unless the call accepts gaps; a seq already stored is a duplicate
 * (counted, accepted); a seq that fills an accepted gap late is stored.
 */
function memoryStore() {
  const stored = new Map<string, number[]>();
  const calls: RunEvent[][] = [];
  const callOptions: Array<{ acceptGaps: boolean }> = [];
  let duplicates = 0;
  const persist = async (events: RunEvent[], options = { acceptGaps: false }): Promise<{ deferred: RunEvent[] }> => {
    calls.push(events);
    callOptions.push(options);
    const later: RunEvent[] = [];
    for (const event of events) {
      const seqs = stored.get(event.run_id) ?? [];
      const last = seqs.at(-1) ?? 0;
      if (seqs.includes(event.seq)) duplicates += 1;
      else if (event.seq === last + 1 || event.seq < last || options.acceptGaps)
        stored.set(
          event.run_id,
          [...seqs, event.seq].sort((a, b) => a - b),
        );
      else later.push(event);
    }
    return { deferred: later };
  };
  return {
    persist,
    calls,
    callOptions,
    stored,
    get duplicates() {
      return duplicates;
    },
    count: () => [...stored.values()].reduce((sum, seqs) => sum + seqs.length, 0),
  };
}

const seqsUpTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('run event consumer', () => {
  let admin: Redis;
  let prefix: string;
  let key: string;
  const open: Array<{ close(): Promise<void> }> = [];
  const prefixes: string[] = [];

  const consumerOf = (options: Omit<RunEventConsumerOptions, 'redisUrl' | 'prefix'>): RunEventConsumer => {
    const consumer = createRunEventConsumer({ redisUrl: TEST_REDIS_URL, prefix, ...options });
    open.push(consumer);
    return consumer;
  };
  const producerOf = (): RunEventProducer => {
    const producer = createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix });
    open.push(producer);
    return producer;
  };
  /** Pushes every event and waits until they are all in the stream. */
  async function produce(events: RunEvent[]): Promise<void> {
    const producer = producerOf();
    for (const event of events) producer.push(event);
    await producer.flush();
  }
  /** Nothing left behind: every entry acknowledged and deleted. */
  async function streamDrained(): Promise<boolean> {
    const [length, pending] = await Promise.all([admin.xlen(key), admin.xpending(key, INGEST_GROUP)]);
    return length === 0 && Number((pending as unknown[])[0]) === 0;
  }

  beforeAll(() => {
    admin = new Redis(TEST_REDIS_URL);
  });

  beforeEach(() => {
    prefix = testPrefix();
    prefixes.push(prefix);
    key = runEventStreamKey(prefix);
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    for (const p of prefixes) await deleteKeys(admin, p);
    await admin.quit();
  });

  it('persists every event, each batch grouped by run and sorted by seq, and leaves the stream empty', async () => {
    const store = memoryStore();
    const runs = ['run-a', 'run-b', 'run-c'];
    await produce(seqsUpTo(300).flatMap((seq) => runs.map((run) => testEvent(run, seq))));
    await consumerOf({ consumer: 'replica-1', persist: store.persist }).start();

    await eventually(() => store.count() === 900, 'all 900 events stored');
    for (const run of runs) expect(store.stored.get(run)).toEqual(seqsUpTo(300));
    expect(store.duplicates).toBe(0);
    for (const call of store.calls) {
      const runOrder = call.map((e) => e.run_id).filter((run, i, all) => all.indexOf(run) === i);
      // Grouped: each run's events are one contiguous slice, in ascending seq.
      expect(call.map((e) => e.run_id)).toEqual(
        runOrder.flatMap((run) => call.filter((e) => e.run_id === run).map(() => run)),
      );
      for (const run of runOrder) {
        const seqs = call.filter((e) => e.run_id === run).map((e) => e.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
    }
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('shares the stream between two replicas: every event is taken by exactly one of them', async () => {
    const store = memoryStore();
    const firstSeen = { a: new Set<string>(), b: new Set<string>() };
    const bStarted = deferred();
    const note = (seen: Set<string>, events: RunEvent[]): void => {
      for (const e of events) seen.add(`${e.run_id}#${e.seq}`);
    };
    const replicaA = consumerOf({
      consumer: 'replica-a',
      persist: async (events) => {
        note(firstSeen.a, events);
        // A holds its first batch until B has taken some entries too, so both really share the stream.
        await within(bStarted.promise, 'replica B to take entries');
        return store.persist(events);
      },
    });
    const replicaB = consumerOf({
      consumer: 'replica-b',
      persist: async (events) => {
        note(firstSeen.b, events);
        bStarted.resolve();
        return store.persist(events);
      },
    });
    const runs = ['run-a', 'run-b', 'run-c', 'run-d'];
    await produce(seqsUpTo(400).flatMap((seq) => runs.map((run) => testEvent(run, seq))));
    await replicaA.start();
    await eventually(() => firstSeen.a.size > 0, 'replica A to take its first batch');
    await replicaB.start();

    await eventually(() => store.count() === 1600, 'all 1600 events stored');
    for (const run of runs) expect(store.stored.get(run)).toEqual(seqsUpTo(400));
    expect(store.duplicates).toBe(0);
    expect(firstSeen.a.size).toBeGreaterThan(0);
    expect(firstSeen.b.size).toBeGreaterThan(0);
    // Each entry went to one replica only: no event was offered to both.
    expect([...firstSeen.a].filter((id) => firstSeen.b.has(id))).toEqual([]);
    expect(firstSeen.a.size + firstSeen.b.size).toBe(1600);
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('claims the entries of a replica that died holding them, after claimIdleMs, and loses nothing', async () => {
    const store = memoryStore();
    await produce(seqsUpTo(20).map((seq) => testEvent('run-k', seq)));
    // A replica reads seqs 1..10 into its pending list, then dies: connection gone, nothing acknowledged.
    const dying = new Redis(TEST_REDIS_URL);
    await dying.xgroup('CREATE', key, INGEST_GROUP, '0', 'MKSTREAM');
    await dying.call('XREADGROUP', 'GROUP', INGEST_GROUP, 'replica-dead', 'COUNT', '10', 'STREAMS', key, '>');
    dying.disconnect();

    const errors: unknown[] = [];
    await consumerOf({
      consumer: 'replica-live',
      persist: store.persist,
      claimIdleMs: 200,
      onError: (e) => errors.push(e),
    }).start();

    await eventually(() => store.count() === 20, 'all 20 events stored');
    expect(store.stored.get('run-k')).toEqual(seqsUpTo(20));
    // Seqs 11..20 waited (deferred) for 1..10, which only came by claiming them.
    expect(store.calls[0]!.map((e) => e.seq)).toEqual(seqsUpTo(20).slice(10));
    await eventually(streamDrained, 'the stream acknowledged and emptied');
    expect(errors).toEqual([]);
  });

  it('after a restart under the same name, first processes its own pending entries', async () => {
    const store = memoryStore();
    await produce(seqsUpTo(20).map((seq) => testEvent('run-r', seq)));
    const crashed = new Redis(TEST_REDIS_URL);
    await crashed.xgroup('CREATE', key, INGEST_GROUP, '0', 'MKSTREAM');
    await crashed.call('XREADGROUP', 'GROUP', INGEST_GROUP, 'replica-r', 'COUNT', '10', 'STREAMS', key, '>');
    crashed.disconnect();

    // claimIdleMs far away: only reading its own pending list can bring back seqs 1..10.
    await consumerOf({ consumer: 'replica-r', persist: store.persist, claimIdleMs: 600_000 }).start();

    await eventually(() => store.count() === 20, 'all 20 events stored');
    expect(store.calls[0]!.map((e) => e.seq)).toEqual(seqsUpTo(10));
    expect(store.stored.get('run-r')).toEqual(seqsUpTo(20));
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('offers deferred events again until persist takes them, without accepting a gap before gapTimeoutMs', async () => {
    const store = memoryStore();
    const errors: unknown[] = [];
    await produce([testEvent('run-d', 2), testEvent('run-d', 3)]);
    await consumerOf({
      consumer: 'replica-1',
      persist: store.persist,
      onError: (e) => errors.push(e),
      now: () => 1_000_000,
    }).start();

    await eventually(() => store.calls.length >= 3, 'persist offered the deferred events again');
    expect(store.calls.slice(0, 3).map((call) => call.map((e) => e.seq))).toEqual([
      [2, 3],
      [2, 3],
      [2, 3],
    ]);
    expect(store.callOptions.every((options) => options.acceptGaps === false)).toBe(true);
    expect(errors).toEqual([]);

    await produce([testEvent('run-d', 1)]);
    await eventually(() => store.count() === 3, 'all three events stored');
    expect(store.stored.get('run-d')).toEqual([1, 2, 3]);
    expect(store.callOptions.every((options) => options.acceptGaps === false)).toBe(true);
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('stops waiting for a gap that never fills after gapTimeoutMs: persists with acceptGaps, reports each event once, and later events land', async () => {
    const store = memoryStore();
    let clock = 1_000_000;
    const errors: unknown[] = [];
    await produce([testEvent('run-g', 2), testEvent('run-g', 3)]);
    await consumerOf({
      consumer: 'replica-1',
      persist: store.persist,
      gapTimeoutMs: 60_000,
      onError: (e) => errors.push(e),
      now: () => clock,
    }).start();
    await eventually(() => store.calls.length >= 2, 'the events deferred and offered again');
    expect(store.stored.get('run-g')).toBeUndefined();

    clock += 60_000;
    await eventually(() => store.count() === 2, 'the events after the gap stored');
    expect(store.stored.get('run-g')).toEqual([2, 3]);
    const accepting = store.callOptions.flatMap((options, i) =>
      options.acceptGaps ? [store.calls[i]!.map((e) => e.seq)] : [],
    );
    expect(accepting).toEqual([[2, 3]]);
    expect(errors.every((e) => e instanceof EventDeferredTooLongError)).toBe(true);
    expect(errors.map((e) => (e as EventDeferredTooLongError).seq).sort()).toEqual([2, 3]);

    // The run's later events (its final status) land as usual, and so does the lost one if it turns up after all.
    await produce([testEvent('run-g', 4)]);
    await eventually(() => store.count() === 3, 'the later event stored');
    await produce([testEvent('run-g', 1)]);
    await eventually(() => store.count() === 4, 'the late event stored');
    expect(store.stored.get('run-g')).toEqual([1, 2, 3, 4]);
    expect(store.callOptions.filter((options) => options.acceptGaps)).toHaveLength(1);
    expect(errors).toHaveLength(2);
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('reads no new entries while maxDeferred entries wait, and loses none of them', async () => {
    const store = memoryStore();
    let clock = 1_000_000;
    await produce(
      seqsUpTo(20)
        .slice(1)
        .map((seq) => testEvent('run-c', seq)),
    ); // seqs 2..20: seq 1 is missing
    await consumerOf({
      consumer: 'replica-1',
      persist: store.persist,
      maxDeferred: 5,
      gapTimeoutMs: 60_000,
      now: () => clock,
    }).start();

    await eventually(() => store.calls.length >= 4, 'the deferred entries offered again and again');
    // Only 5 entries ever left the stream for this consumer: the other 14 wait there.
    expect(store.calls.map((call) => call.map((e) => e.seq))).toEqual(store.calls.map(() => [2, 3, 4, 5, 6]));
    const [pendingCount] = (await admin.xpending(key, INGEST_GROUP)) as [number];
    expect(Number(pendingCount)).toBe(5);
    expect(await admin.xlen(key)).toBe(19);

    // The gap is accepted after gapTimeoutMs: the map empties and reading resumes.
    clock += 60_000;
    await eventually(() => store.count() === 19, 'seqs 2..20 stored');
    await produce([testEvent('run-c', 1)]);
    await eventually(() => store.count() === 20, 'every event stored');
    expect(store.stored.get('run-c')).toEqual(seqsUpTo(20));
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('refuses bad options with a named error', () => {
    expect(() =>
      createRunEventConsumer({
        redisUrl: TEST_REDIS_URL,
        prefix,
        consumer: 'c',
        persist: async () => ({ deferred: [] }),
        maxDeferred: 0,
      }),
    ).toThrow(InvalidRunEventConsumerOptionsError);
  });

  it('retries the same batch while persist throws, reads nothing more meanwhile, and loses nothing', async () => {
    const store = memoryStore();
    const errors: unknown[] = [];
    const offered: number[][] = [];
    let failuresLeft = 3;
    await produce(seqsUpTo(50).map((seq) => testEvent('run-p', seq)));
    await consumerOf({
      consumer: 'replica-1',
      onError: (e) => errors.push(e),
      persist: async (events) => {
        offered.push(events.map((e) => e.seq));
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          throw new Error('database unreachable');
        }
        return store.persist(events);
      },
    }).start();

    await eventually(() => offered.length >= 1, 'the first attempt');
    await produce(
      seqsUpTo(60)
        .slice(50)
        .map((seq) => testEvent('run-p', seq)),
    );
    await eventually(() => store.count() === 60, 'all 60 events stored');

    // The failed batch came back unchanged three times; the 10 newer events only after it was taken.
    expect(offered.slice(0, 4)).toEqual([seqsUpTo(50), seqsUpTo(50), seqsUpTo(50), seqsUpTo(50)]);
    expect(offered.slice(4).flat()).toEqual(seqsUpTo(60).slice(50));
    expect(errors.map((e) => (e as Error).message)).toEqual(Array(3).fill('database unreachable'));
    expect(store.stored.get('run-p')).toEqual(seqsUpTo(60));
    await eventually(streamDrained, 'the stream acknowledged and emptied');
  });

  it('skips and reports entries that hold no RunEvent, without blocking the ones around them', async () => {
    const store = memoryStore();
    const errors: unknown[] = [];
    await produce([testEvent('run-g', 1)]);
    await admin.xadd(key, '*', EVENT_FIELD, 'not json {');
    await admin.xadd(key, '*', EVENT_FIELD, '42');
    await admin.xadd(key, '*', 'other', 'field');
    await admin.xadd(key, '*', EVENT_FIELD, JSON.stringify({ run_id: 'run-g' }));
    await produce([testEvent('run-g', 2)]);
    await consumerOf({ consumer: 'replica-1', persist: store.persist, onError: (e) => errors.push(e) }).start();

    await eventually(() => store.count() === 2, 'both valid events stored');
    await eventually(streamDrained, 'the stream acknowledged and emptied');
    expect(store.stored.get('run-g')).toEqual([1, 2]);
    expect(errors).toHaveLength(4);
    expect(errors.every((e) => e instanceof MalformedStreamEntryError)).toBe(true);
    expect(errors.map((e) => (e as MalformedStreamEntryError).reason)).toEqual([
      'not valid JSON',
      'not a JSON object',
      `no '${EVENT_FIELD}' field`,
      expect.stringMatching(/^not a RunEvent/),
    ]);
  });

  it('keeps consuming events produced while it runs, and refuses a second start', async () => {
    const store = memoryStore();
    const consumer = consumerOf({ consumer: 'replica-1', persist: store.persist });
    await consumer.start();
    await expect(consumer.start()).rejects.toThrow(/already started/);
    await produce(seqsUpTo(5).map((seq) => testEvent('run-l', seq)));
    await eventually(() => store.count() === 5, 'the live events stored');
    await consumer.close();
    expect(store.stored.get('run-l')).toEqual(seqsUpTo(5));
  });
});
