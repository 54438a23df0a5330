import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import type { RunEvent } from '@baton/contracts';
import { TEST_REDIS_URL, deleteKeys, eventually, testEvent, testPrefix } from '../testing/redis-test-support.js';
import { closeRedis, openRedis } from './redis-connection.js';
import { listIngestConsumers, removeDeadConsumers } from './ingest-consumers.js';
import { createReplicaRegistry } from './replica-registry.js';
import { createRunEventConsumer } from './run-event-consumer.js';
import { createRunEventProducer } from './run-event-producer.js';
import { INGEST_GROUP, runEventStreamKey } from './run-event-stream-keys.js';

describe('dead ingest consumers', () => {
  let admin: Redis;
  const prefixes: string[] = [];

  beforeAll(() => {
    admin = openRedis(TEST_REDIS_URL, 'ingest-consumers-test');
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(admin, prefix);
    await closeRedis(admin);
  });

  const names = async (prefix: string): Promise<string[]> =>
    (await listIngestConsumers(admin, prefix)).map((c) => c.name).sort();

  it('are removed once the living have claimed what they held, never before, and live ones are kept', async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const key = runEventStreamKey(prefix);
    expect(await listIngestConsumers(admin, prefix)).toEqual([]);
    await admin.xgroup('CREATE', key, INGEST_GROUP, '0', 'MKSTREAM');
    const producer = createRunEventProducer({ redisUrl: TEST_REDIS_URL, prefix });
    for (let seq = 1; seq <= 5; seq++) producer.push(testEvent('run_dead', seq));
    await producer.close();
    // A replica that read these entries and died before acknowledging them.
    await admin.call('XREADGROUP', 'GROUP', INGEST_GROUP, 'host/111', 'COUNT', '100', 'STREAMS', key, '>');
    // One that left cleanly (nothing held), and one whose replica lives but is idle.
    await admin.xgroup('CREATECONSUMER', key, INGEST_GROUP, 'host/222');
    await admin.xgroup('CREATECONSUMER', key, INGEST_GROUP, 'host/333');
    const live = createReplicaRegistry({ redis: admin, prefix, name: 'host/333', database: 'postgres' });
    await live.join();
    const living = await live.liveNames();
    expect([...living]).toEqual(['host/333']);

    // The dead one still holds 5 entries: kept (removing it would drop them from the pending list for good).
    expect(await removeDeadConsumers({ redis: admin, prefix, live: living, minIdleMs: 0 })).toEqual({
      removed: ['host/222'],
      waiting: ['host/111'],
    });
    expect(await names(prefix)).toEqual(['host/111', 'host/333']);
    // Not idle long enough yet: not even looked at.
    expect(await removeDeadConsumers({ redis: admin, prefix, live: living, minIdleMs: 3_600_000 })).toEqual({
      removed: [],
      waiting: [],
    });

    // The living replica's consumer claims the dead one's entries and persists them.
    const stored: RunEvent[] = [];
    const consumer = createRunEventConsumer({
      redisUrl: TEST_REDIS_URL,
      prefix,
      consumer: 'host/333',
      claimIdleMs: 50,
      persist: async (events) => {
        stored.push(...events);
        return { deferred: [] };
      },
    });
    await consumer.start();
    await eventually(() => stored.length === 5, 'the dead consumer’s entries to be claimed and stored');
    await eventually(
      async () => (await listIngestConsumers(admin, prefix)).find((c) => c.name === 'host/111')?.pending === 0,
      'the dead consumer to hold nothing',
    );
    expect(await removeDeadConsumers({ redis: admin, prefix, live: living, minIdleMs: 0 })).toEqual({
      removed: ['host/111'],
      waiting: [],
    });
    expect(await names(prefix)).toEqual(['host/333']);
    expect(stored.map((e) => e.seq).sort()).toEqual([1, 2, 3, 4, 5]);
    await consumer.close();
    await live.leave();
  });
});
