import type { RunEvent } from '@baton/contracts';
import type { EventBus } from '../event-bus.js';
import { createRunFanOut, type RunChannelTransport } from '../run-fan-out.js';
import { closeRedis, openRedis, whenFirstReady } from './redis-connection.js';
import { RedisUnavailableError } from './redis-run-queue-errors.js';

export interface RedisEventBusOptions {
  redisUrl: string;
  /** Namespaces every channel (`${prefix}:run:${runId}`), so installations and test runs can share one Redis. */
  prefix: string;
  /** Connection errors, malformed messages and listener errors land here; none of them crashes the process. */
  onError?: (error: unknown) => void;
  /**
   * How long `subscribe` waits for Redis to confirm a new channel (and the first `publish` for the first connect)
   * before rejecting with RedisUnavailableError, so the SSE route answers 503 instead of hanging. Default 5 000.
   */
  subscribeTimeoutMs?: number;
}

export const DEFAULT_SUBSCRIBE_TIMEOUT_MS = 5_000;

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
export function createRedisEventBus({
  redisUrl,
  prefix,
  onError = () => {},
  subscribeTimeoutMs = DEFAULT_SUBSCRIBE_TIMEOUT_MS,
}: RedisEventBusOptions): EventBus {
  // No offline queue: while Redis is away a publish rejects at once instead of waiting for the reconnect. The
  // ingester awaits each publish before its next batch, so waiting would stall persisting (and with it the API's
  // finish and cancel) for the whole outage; a failed publish only costs live viewers an event they re-read on
  // reconnect (Last-Event-ID), the database has it.
  const publisher = openRedis(redisUrl, `${prefix}:event-bus:pub`, {
    onError,
    overrides: { enableOfflineQueue: false },
  });
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
      let timer: NodeJS.Timeout | undefined;
      let gaveUp = false;
      const subscribing = subscriber.subscribe(channel);
      try {
        // SUBSCRIBE waits in the offline queue while the subscriber reconnects: give up after a while.
        await Promise.race([
          subscribing,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              gaveUp = true;
              reject(new RedisUnavailableError(`no subscription to ${channel} within ${subscribeTimeoutMs} ms`));
            }, subscribeTimeoutMs);
          }),
        ]);
      } catch (error) {
        if (deliverers.get(channel) === deliver) deliverers.delete(channel);
        if (gaveUp) {
          // The queued SUBSCRIBE goes out once Redis is back: undo it then, unless another listener of the run
          // opened the channel meanwhile (the subscription is theirs now).
          subscribing
            .then(
              () => (deliverers.has(channel) || closed ? undefined : subscriber.unsubscribe(channel)),
              () => undefined,
            )
            .catch(onError);
        }
        throw error;
      } finally {
        clearTimeout(timer);
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
      // Only the very first connect is waited for (a bus used right after it was created); later, a publisher that
      // is not connected rejects at once.
      await whenFirstReady(publisher, subscribeTimeoutMs);
      if (publisher.status !== 'ready') throw new RedisUnavailableError(`event bus publisher is ${publisher.status}`);
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
