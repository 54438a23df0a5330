import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { RunEvent } from '@baton/contracts';
import type { EventBus } from '../event-bus.js';
import { Counter, eventBusContract, within } from '../testing/index.js';
import {
  createRedisEventBus,
  MalformedBusMessageError,
  runChannel,
  type RedisEventBusOptions,
} from './redis-event-bus.js';
import { RedisUnavailableError } from './redis-run-queue-errors.js';
import {
  TEST_REDIS_URL,
  clientsNamed,
  deleteKeys,
  eventually,
  startRedisProxy,
  testEvent,
  testPrefix,
} from '../testing/redis-test-support.js';

// Two bus instances with one prefix stand for two API replicas: the contract publishes on one, listens on the other.
eventBusContract('redis', async () => {
  const prefix = testPrefix();
  return {
    publisher: createRedisEventBus({ redisUrl: TEST_REDIS_URL, prefix }),
    subscriber: createRedisEventBus({ redisUrl: TEST_REDIS_URL, prefix }),
  };
});

describe('Redis EventBus', () => {
  let admin: Redis;
  const prefixes: string[] = [];
  const buses: EventBus[] = [];

  const newPrefix = (): string => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    return prefix;
  };
  const newBus = (
    prefix: string,
    onError?: (error: unknown) => void,
    options: Partial<RedisEventBusOptions> = {},
  ): EventBus => {
    const bus = createRedisEventBus({ redisUrl: TEST_REDIS_URL, prefix, onError, ...options });
    buses.push(bus);
    return bus;
  };

  beforeAll(() => {
    admin = new Redis(TEST_REDIS_URL);
  });

  afterAll(async () => {
    await Promise.all(buses.map((bus) => bus.close()));
    for (const prefix of prefixes) await deleteKeys(admin, prefix);
    await admin.quit();
  });

  it('carries an event published on replica A to subscribers on replica B, and to A’s own subscribers', async () => {
    const prefix = newPrefix();
    const replicaA = newBus(prefix);
    const replicaB = newBus(prefix);
    const onB: RunEvent[] = [];
    const onA: RunEvent[] = [];
    const counted = new Counter();
    await replicaB.subscribe('run-x', (event) => {
      onB.push(event);
      counted.increment();
    });
    await replicaA.subscribe('run-x', (event) => {
      onA.push(event);
      counted.increment();
    });

    await replicaA.publish(testEvent('run-x', 1));
    await replicaB.publish(testEvent('run-x', 2));
    await counted.reach(4, 'both events on both replicas');

    expect(onB).toEqual([testEvent('run-x', 1), testEvent('run-x', 2)]);
    expect(onA).toEqual([testEvent('run-x', 1), testEvent('run-x', 2)]);
  });

  it('does not leak events between installations with different prefixes', async () => {
    const ours = newBus(newPrefix());
    const theirs = newBus(newPrefix());
    const received: RunEvent[] = [];
    const counted = new Counter();
    await ours.subscribe('run-x', (event) => {
      received.push(event);
      counted.increment();
    });

    await theirs.publish(testEvent('run-x', 1));
    await ours.publish(testEvent('run-x', 2));
    await counted.reach(1, 'our own event');

    expect(received.map((e) => e.seq)).toEqual([2]);
  });

  it('holds one publisher and one subscriber connection per bus however many runs it watches', async () => {
    const prefix = newPrefix();
    const bus = newBus(prefix);
    for (let i = 0; i < 5; i += 1) await bus.subscribe(`run-${i}`, () => {});
    await bus.publish(testEvent('run-0', 1));

    const connections = await clientsNamed(admin, `${prefix}:event-bus`);
    expect(connections.map((c) => c.name).sort()).toEqual([`${prefix}:event-bus:pub`, `${prefix}:event-bus:sub`]);
    expect(bus.subscriptionCount()).toBe(5);
  });

  it('resubscribes a run that was left and watched again at once', async () => {
    const prefix = newPrefix();
    const bus = newBus(prefix);
    const first = await bus.subscribe('run-x', () => {});
    // Unsubscribe and subscribe again in one tick: the old channel's end must not cancel the new subscription.
    first();
    const received: RunEvent[] = [];
    const counted = new Counter();
    await bus.subscribe('run-x', (event) => {
      received.push(event);
      counted.increment();
    });
    await bus.publish(testEvent('run-x', 1));
    await counted.reach(1, 'the event after resubscribing');

    expect(received.map((e) => e.seq)).toEqual([1]);
  });

  it('reports a malformed message on a run channel and keeps delivering', async () => {
    const prefix = newPrefix();
    const errors: unknown[] = [];
    const bus = newBus(prefix, (error) => errors.push(error));
    const received: RunEvent[] = [];
    const counted = new Counter();
    await bus.subscribe('run-x', (event) => {
      received.push(event);
      counted.increment();
    });

    await admin.publish(runChannel(prefix, 'run-x'), 'not json {');
    await admin.publish(runChannel(prefix, 'run-x'), '[1,2]');
    await bus.publish(testEvent('run-x', 1));
    await counted.reach(1, 'the valid event');

    expect(received.map((e) => e.seq)).toEqual([1]);
    expect(errors).toHaveLength(2);
    expect(errors.every((error) => error instanceof MalformedBusMessageError)).toBe(true);
  });

  it('reports an unreachable Redis through onError instead of crashing, and still closes', async () => {
    const errors: unknown[] = [];
    // Port 1 refuses connections: the bus keeps retrying in the background and says so.
    const bus = createRedisEventBus({
      redisUrl: 'redis://127.0.0.1:1',
      prefix: newPrefix(),
      onError: (e) => errors.push(e),
    });
    await eventually(() => errors.length > 0, 'a connection error report');
    await bus.close();

    expect(String((errors[0] as Error).message)).toMatch(/ECONNREFUSED/);
    await expect(bus.publish(testEvent('run-x', 1))).rejects.toThrow(/closed/);
  });

  it('rejects a publish at once while Redis is unreachable, instead of waiting for the reconnect, and publishes again once it is back', async () => {
    const prefix = newPrefix();
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    try {
      const bus = newBus(prefix, (error) => errors.push(error), { redisUrl: proxy.url });
      const listener = newBus(prefix);
      const received: RunEvent[] = [];
      const counted = new Counter();
      await listener.subscribe('run-x', (event) => {
        received.push(event);
        counted.increment();
      });
      await bus.publish(testEvent('run-x', 1));

      await proxy.down();
      await eventually(() => errors.length > 0, 'the publisher to notice the outage');
      await expect(within(bus.publish(testEvent('run-x', 2)), 'publish to fail')).rejects.toBeInstanceOf(
        RedisUnavailableError,
      );

      await proxy.up();
      await eventually(async () => {
        try {
          await bus.publish(testEvent('run-x', 3));
          return true;
        } catch {
          return false;
        }
      }, 'publish to work again');
      await counted.reach(2, 'the events published while connected');
      // Nothing published during the outage turns up later (it was refused, not queued).
      expect(received.map((e) => e.seq)).toEqual([1, 3]);
    } finally {
      await proxy.close();
    }
  });

  it('rejects a subscribe with RedisUnavailableError when the channel cannot be opened in time, and subscribes again once Redis is back', async () => {
    const prefix = newPrefix();
    const proxy = await startRedisProxy();
    const errors: unknown[] = [];
    try {
      const bus = newBus(prefix, (error) => errors.push(error), { redisUrl: proxy.url, subscribeTimeoutMs: 300 });
      await bus.subscribe('run-warm', () => {}); // connected once

      await proxy.down();
      await eventually(() => errors.length > 0, 'the subscriber to notice the outage');
      await expect(
        within(
          bus.subscribe('run-x', () => {}),
          'subscribe to fail',
        ),
      ).rejects.toBeInstanceOf(RedisUnavailableError);
      expect(bus.subscriptionCount()).toBe(1); // only run-warm: the failed channel is not kept

      await proxy.up();
      const received: RunEvent[] = [];
      const counted = new Counter();
      await eventually(async () => {
        try {
          await bus.subscribe('run-x', (event) => {
            received.push(event);
            counted.increment();
          });
          return true;
        } catch {
          return false;
        }
      }, 'subscribe to work again');
      await newBus(prefix).publish(testEvent('run-x', 1));
      await counted.reach(1, 'the event after resubscribing');
      expect(received.map((e) => e.seq)).toEqual([1]);
    } finally {
      await proxy.close();
    }
  });
});
