import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { RunEvent } from '@baton/contracts';
import { within } from '../testing/index.js';
import {
  TEST_REDIS_URL,
  clientsNamed,
  deleteKeys,
  eventually,
  startRedisProxy,
  testEvent,
  testPrefix,
} from '../testing/redis-test-support.js';
import {
  createRunEventProducer,
  InvalidRunEventProducerOptionsError,
  RunEventBufferFullError,
  RunEventProducerClosedError,
  UnserializableRunEventError,
} from './run-event-producer.js';
import { EVENT_FIELD, runEventStreamKey } from './run-event-stream-keys.js';

describe('run event producer', () => {
  let admin: Redis;
  const prefixes: string[] = [];
  const newPrefix = (): string => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    return prefix;
  };

  /** The stream's events in stream order. */
  async function streamEvents(prefix: string): Promise<RunEvent[]> {
    const entries = await admin.xrange(runEventStreamKey(prefix), '-', '+');
    return entries.map(([, fields]) => {
      expect(fields[0]).toBe(EVENT_FIELD);
      return JSON.parse(fields[1]!) as RunEvent;
    });
  }

  beforeAll(() => {
    admin = new Redis(TEST_REDIS_URL);
  });

  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(admin, prefix);
    await admin.quit();
  });

  it('has every event pushed before flush in the stream, in push order, when flush resolves', async () => {
    const prefix = newPrefix();
    const producer = createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix });
    const pushed: RunEvent[] = [];
    // More than one batch in one tick, two runs interleaved, then a later tick.
    for (let seq = 1; seq <= 600; seq += 1) {
      for (const runId of ['run-a', 'run-b']) {
        const event = testEvent(runId, seq);
        pushed.push(event);
        producer.push(event);
      }
    }
    await Promise.resolve();
    for (let seq = 601; seq <= 650; seq += 1) {
      pushed.push(testEvent('run-a', seq));
      producer.push(testEvent('run-a', seq));
    }
    await producer.flush();

    expect(await streamEvents(prefix)).toEqual(pushed);
    await producer.close();
  });

  it('resolves a flush with nothing pending at once, and close flushes what is left', async () => {
    const prefix = newPrefix();
    const producer = createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix });
    await producer.flush();
    producer.push(testEvent('run-a', 1));
    producer.push(testEvent('run-a', 2));
    await producer.close();

    expect((await streamEvents(prefix)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('refuses a push after close and an event JSON cannot carry, with named errors', async () => {
    const producer = createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix: newPrefix() });
    const cyclic = testEvent('run-a', 1) as RunEvent & { data: Record<string, unknown> };
    cyclic.data.self = cyclic;
    expect(() => producer.push(cyclic)).toThrow(UnserializableRunEventError);
    expect(() => producer.push(undefined as unknown as RunEvent)).toThrow(UnserializableRunEventError);
    await producer.close();

    expect(() => producer.push(testEvent('run-a', 2))).toThrow(RunEventProducerClosedError);
  });

  it('delivers everything after its connection is killed', async () => {
    const prefix = newPrefix();
    const errors: unknown[] = [];
    const producer = createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix, onError: (e) => errors.push(e) });
    for (let seq = 1; seq <= 100; seq += 1) producer.push(testEvent('run-a', seq));
    await producer.flush();

    const [connection] = await clientsNamed(admin, `${prefix}:events-producer`);
    expect(connection).toBeDefined();
    await admin.call('CLIENT', 'KILL', 'ID', connection!.id);
    for (let seq = 101; seq <= 200; seq += 1) producer.push(testEvent('run-a', seq));
    await producer.flush();

    const seqs = (await streamEvents(prefix)).map((e) => e.seq);
    // A batch whose reply was lost may be in twice (the ingest is idempotent); order and completeness must hold.
    expect([...new Set(seqs)]).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    await producer.close();
  });

  it('keeps retrying while Redis is unreachable and sends everything, in order, once it is back', async () => {
    const prefix = newPrefix();
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    const producer = createRunEventProducer({ redisUrl: proxy.url, prefix, onError: (e) => errors.push(e) });
    try {
      for (let seq = 1; seq <= 50; seq += 1) producer.push(testEvent('run-a', seq));
      await within(producer.flush(), 'the first flush through the proxy');

      await proxy.down();
      for (let seq = 51; seq <= 100; seq += 1) producer.push(testEvent('run-a', seq));
      let flushed = false;
      const flushing = producer.flush().then(() => {
        flushed = true;
      });
      await eventually(() => errors.length > 0, 'a report that Redis is unreachable');
      expect(flushed).toBe(false);

      await proxy.up();
      await within(flushing, 'the flush once Redis is back', 15_000);
      const seqs = (await streamEvents(prefix)).map((e) => e.seq);
      expect([...new Set(seqs)]).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    } finally {
      await proxy.up(); // a no-op unless the test failed while it was down
      await within(producer.close(), 'closing the producer');
      await proxy.close();
    }
  });

  it('reports once via onError when more than maxBuffered events wait for Redis, drops none, and reports a later crossing again', async () => {
    const prefix = newPrefix();
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    const producer = createRunEventProducer({
      redisUrl: proxy.url,
      prefix,
      maxBuffered: 10,
      onError: (e) => errors.push(e),
    });
    const overflows = (): RunEventBufferFullError[] =>
      errors.filter((e): e is RunEventBufferFullError => e instanceof RunEventBufferFullError);
    try {
      producer.push(testEvent('run-a', 1));
      await within(producer.flush(), 'the first flush through the proxy');

      await proxy.down();
      await eventually(() => errors.length > 0, 'a report that Redis is unreachable');
      for (let seq = 2; seq <= 10; seq += 1) producer.push(testEvent('run-a', seq));
      expect(overflows()).toEqual([]); // 9 waiting: under the cap
      for (let seq = 11; seq <= 40; seq += 1) producer.push(testEvent('run-a', seq));
      expect(overflows()).toHaveLength(1);
      expect(overflows()[0]!.maxBuffered).toBe(10);

      await proxy.up();
      await within(producer.flush(), 'the flush once Redis is back', 15_000);
      const seqs = (await streamEvents(prefix)).map((e) => e.seq);
      expect([...new Set(seqs)]).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));

      // Drained below the cap: crossing it again is a new report.
      await proxy.down();
      await eventually(() => errors.length > overflows().length + 1, 'the second outage to be noticed');
      for (let seq = 41; seq <= 60; seq += 1) producer.push(testEvent('run-a', seq));
      expect(overflows()).toHaveLength(2);
      await proxy.up();
      await within(producer.flush(), 'the second flush once Redis is back', 15_000);
      expect([...new Set((await streamEvents(prefix)).map((e) => e.seq))]).toEqual(
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
    } finally {
      await proxy.up();
      await within(producer.close(), 'closing the producer');
      await proxy.close();
    }
  });

  it('is full past maxBufferedBytes while Redis is away (onBackpressure true, once), empty again after (false), losing nothing', async () => {
    const prefix = newPrefix();
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    const pressure: boolean[] = [];
    const producer = createRunEventProducer({
      redisUrl: proxy.url,
      prefix,
      maxBufferedBytes: 20_000,
      onError: (e) => errors.push(e),
      onBackpressure: (full) => pressure.push(full),
    });
    const bigEvent = (seq: number): RunEvent => ({ ...testEvent('run-big', seq), data: { text: 'x'.repeat(1_000) } });
    try {
      producer.push(bigEvent(1));
      await within(producer.flush(), 'the first flush through the proxy');
      expect(producer.buffered()).toEqual({ events: 0, bytes: 0 });

      await proxy.down();
      await eventually(() => errors.length > 0, 'a report that Redis is unreachable');
      for (let seq = 2; seq <= 15; seq += 1) producer.push(bigEvent(seq));
      expect(pressure).toEqual([]); // 14 events of about 1 kB: under the cap
      for (let seq = 16; seq <= 60; seq += 1) producer.push(bigEvent(seq));
      expect(pressure).toEqual([true]);
      expect(producer.buffered().events).toBe(59);
      expect(producer.buffered().bytes).toBeGreaterThan(20_000);
      const full = errors.filter((e): e is RunEventBufferFullError => e instanceof RunEventBufferFullError);
      expect(full).toHaveLength(1);
      expect(full[0]!.maxBufferedBytes).toBe(20_000);

      await proxy.up();
      await within(producer.flush(), 'the flush once Redis is back', 15_000);
      expect(pressure).toEqual([true, false]);
      expect(producer.buffered()).toEqual({ events: 0, bytes: 0 });
      expect([...new Set((await streamEvents(prefix)).map((e) => e.seq))]).toEqual(
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
    } finally {
      await proxy.up();
      await within(producer.close(), 'closing the producer');
      await proxy.close();
    }
  });

  it('refuses a bad maxBuffered with a named error', () => {
    expect(() => createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix: newPrefix(), maxBuffered: 0 })).toThrow(
      InvalidRunEventProducerOptionsError,
    );
    expect(() =>
      createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix: newPrefix(), maxBufferedBytes: 0.5 }),
    ).toThrow(/maxBufferedBytes must be a positive integer/);
  });
});
