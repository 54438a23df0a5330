// Consumers of the ingest group (run-event-consumer.ts) are named after their API process (`<host>/<pid>`), so
// every restart leaves one behind in Redis. The leader's sweep removes those whose replica is gone once the living
// have claimed all they held: XGROUP DELCONSUMER on a consumer that still has pending entries would drop them from
// the group's pending list, and nobody would ever deliver them again (a gap in a run's events).
import type { Redis } from 'ioredis';
import { INGEST_GROUP, runEventStreamKey } from './run-event-stream-keys.js';

/** Deletes the consumer only while it holds nothing: the check and the delete are one atomic step. */
const DELETE_IF_EMPTY = `
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return -1 end
return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])`;

/** A consumer idle this long whose replica does not announce itself any more is taken for dead. Default for the sweep. */
export const DEAD_CONSUMER_IDLE_MS = 60_000;

export interface IngestConsumer {
  name: string;
  /** entries it was handed and has not acknowledged */
  pending: number;
  /** ms since it last read or claimed */
  idleMs: number;
}

/** The ingest group's consumers (none when the stream or the group does not exist yet). */
export async function listIngestConsumers(redis: Redis, prefix: string): Promise<IngestConsumer[]> {
  let reply: unknown;
  try {
    reply = await redis.call('XINFO', 'CONSUMERS', runEventStreamKey(prefix), INGEST_GROUP);
  } catch (error) {
    if (/no such key|NOGROUP/i.test(String((error as Error)?.message))) return [];
    throw error;
  }
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((entry: unknown) => {
    if (!Array.isArray(entry)) return [];
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
    const name = fields.get('name');
    return typeof name === 'string'
      ? [{ name, pending: Number(fields.get('pending') ?? 0), idleMs: Number(fields.get('idle') ?? 0) }]
      : [];
  });
}

export interface RemoveDeadConsumersOptions {
  redis: Redis;
  prefix: string;
  /** The consumers of live replicas (the replica registry's fresh names, this one included): never removed. */
  live: ReadonlySet<string>;
  /** Only consumers idle at least this long are removed. Default DEAD_CONSUMER_IDLE_MS. */
  minIdleMs?: number;
}

export interface RemovedConsumers {
  /** removed now */
  removed: string[];
  /** dead but still holding entries the living have not claimed yet: removed by a later sweep */
  waiting: string[];
}

/** Removes the ingest consumers of dead replicas that hold no pending entry. Called by the leader only. */
export async function removeDeadConsumers(options: RemoveDeadConsumersOptions): Promise<RemovedConsumers> {
  const { redis, prefix, live, minIdleMs = DEAD_CONSUMER_IDLE_MS } = options;
  const result: RemovedConsumers = { removed: [], waiting: [] };
  for (const consumer of await listIngestConsumers(redis, prefix)) {
    if (live.has(consumer.name) || consumer.idleMs < minIdleMs) continue;
    const deleted = await redis.eval(DELETE_IF_EMPTY, 1, runEventStreamKey(prefix), INGEST_GROUP, consumer.name);
    (deleted === -1 ? result.waiting : result.removed).push(consumer.name);
  }
  return result;
}
