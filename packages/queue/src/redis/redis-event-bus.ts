import type { RunEvent } from '@baton/contracts';
import type { EventBus } from '../event-bus.js';
import { createRunFanOut, type RunChannelTransport } from '../run-fan-out.js';
import { closeRedis, openRedis } from './redis-connection.js';

export interface RedisEventBusOptions {
  redisUrl: string;
  /** Namespaces every channel (`${prefix}:run:${runId}`), so installations and test runs can share one Redis. */
  prefix: string;
  /** Connection errors, malformed messages and listener errors land here; none of them crashes the process. */
  onError?: (error: unknown) => void;
}

/** A pub/sub message on a run channel that is not a JSON object: dropped and reported, never delivered. */
export class MalformedBusMessageError extends Error {
  constructor(
    readonly channel: string,
    readonly reason: string,
  ) {
    super(`malformed event bus message on ${channel}: ${reason}`);
    this.name = 'MalformedBusMessageError';
  }
}

/** The channel a run's events travel on. */
export const runChannel = (prefix: string, runId: string): string => `${prefix}:run:${runId}`;

function parseMessage(channel: string, message: string): RunEvent {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    throw new MalformedBusMessageError(channel, 'not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedBusMessageError(channel, 'not a JSON object');
  }
  return value as RunEvent;
}

/**
 * Queue mode's EventBus: Redis pub/sub between API replicas, so an SSE client on one replica sees events that
 * another replica ingested. One publisher and one subscriber connection per bus, however many runs are
 * watched: the shared fan-out turns many listeners of a run into one SUBSCRIBE.
 */
export function createRedisEventBus({ redisUrl, prefix, onError = () => {} }: RedisEventBusOptions): EventBus {
  const publisher = openRedis(redisUrl, `${prefix}:event-bus:pub`, { onError });
  const subscriber = openRedis(redisUrl, `${prefix}:event-bus:sub`, { onError });
  const deliverers = new Map<string, (event: RunEvent) => void>();

  subscriber.on('message', (channel: string, message: string) => {
    const deliver = deliverers.get(channel);
    if (!deliver) return; // a message that raced an UNSUBSCRIBE
    try {
      deliver(parseMessage(channel, message));
    } catch (error) {
      onError(error);
    }
  });

  const transport: RunChannelTransport = {
    async open(runId, deliver) {
      const channel = runChannel(prefix, runId);
      // Set before SUBSCRIBE is sent: a message arriving right after the subscription confirms finds its deliverer.
      deliverers.set(channel, deliver);
      try {
        await subscriber.subscribe(channel);
      } catch (error) {
        if (deliverers.get(channel) === deliver) deliverers.delete(channel);
        throw error;
      }
      return async () => {
        // A later subscriber of the same run may already have opened the channel again (the fan-out ends a
        // channel asynchronously): then the Redis subscription is theirs now and stays.
        if (deliverers.get(channel) !== deliver) return;
        deliverers.delete(channel);
        await subscriber.unsubscribe(channel);
      };
    },
  };
  const fanOut = createRunFanOut({ transport, onError });
  let closed = false;

  return {
    async publish(event) {
      if (closed) throw new Error('event bus is closed');
      await publisher.publish(runChannel(prefix, event.run_id), JSON.stringify(event));
    },
    subscribe: (runId, listener) => fanOut.subscribe(runId, listener),
    subscriptionCount: () => fanOut.channelCount(),
    async close() {
      if (closed) return;
      closed = true;
      // Cleared first, so ending the channels sends no UNSUBSCRIBE (closing the connection drops them all),
      // and close does not wait on a Redis that is down.
      deliverers.clear();
      await fanOut.close();
      await Promise.all([closeRedis(subscriber), closeRedis(publisher)]);
    },
  };
}
