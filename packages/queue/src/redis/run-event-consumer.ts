import { RunEvent } from '@baton/contracts';
import type { Redis } from 'ioredis';
import { closeRedis, openRedis } from './redis-connection.js';
import { EVENT_FIELD, INGEST_GROUP, retryDelay, runEventStreamKey } from './run-event-stream-keys.js';

export interface RunEventConsumer {
  /** Creates the group `ingest` (MKSTREAM, from id 0) if missing, then consumes in the background. */
  start(): Promise<void>;
  /** Stops reading, waits for the batch in hand, closes its connections. */
  close(): Promise<void>;
}

export interface RunEventConsumerOptions {
  redisUrl: string;
  prefix: string;
  /** Unique per API process, e.g. `${hostname}/${pid}`; a restarted process with the same name first re-reads its own pending entries. */
  consumer: string;
  /**
   * Persists events (grouped by run and sorted by seq) and says which it could not take yet: events whose seq leaves a
   * gap after what the run has stored (an earlier part of that run is still in another replica's hands). Throws if
   * the database is unreachable. Events it neither deferred nor threw on count as persisted (including duplicates).
   * `acceptGaps: true` (only for events deferred longer than `gapTimeoutMs`) asks it to store them despite the gap:
   * the missing events are taken as lost, so the run's later events (its final status) still land.
   */
  persist: (events: RunEvent[], options: { acceptGaps: boolean }) => Promise<{ deferred: RunEvent[] }>;
  /** Entries another consumer has held longer than this are claimed (XAUTOCLAIM): that replica died. Default 30 000. */
  claimIdleMs?: number;
  onError?: (err: unknown) => void;
  /** The clock that ages deferred entries (against gapTimeoutMs); tests move it by hand. Default Date.now. */
  now?: () => number;
  /** An entry deferred this long stops waiting for the gap before it to fill: offered with `acceptGaps: true`. Default 120 000. */
  gapTimeoutMs?: number;
  /**
   * The most deferred entries held in memory (default 100 000). At the cap no new entries are read or claimed until
   * some are taken (back-pressure: they wait in the stream, nothing is dropped).
   */
  maxDeferred?: number;
}

/** A stream entry that does not hold a RunEvent: acknowledged, deleted and reported, so it never blocks the stream. */
export class MalformedStreamEntryError extends Error {
  constructor(
    readonly entryId: string,
    readonly reason: string,
  ) {
    super(`run event stream entry ${entryId} skipped: ${reason}`);
    this.name = 'MalformedStreamEntryError';
  }
}

export class InvalidRunEventConsumerOptionsError extends Error {
  constructor(detail: string) {
    super(`invalid run event consumer options: ${detail}`);
    this.name = 'InvalidRunEventConsumerOptionsError';
  }
}

/** Reported once per entry deferred longer than gapTimeoutMs: an earlier part of its run seems lost, the gap is accepted. */
export class EventDeferredTooLongError extends Error {
  constructor(
    readonly entryId: string,
    readonly runId: string,
    readonly seq: number,
    readonly deferredMs: number,
  ) {
    super(
      `run event ${runId}#${seq} (entry ${entryId}) deferred for ${Math.round(deferredMs / 1000)} s: an earlier event of the run is missing, persisting it with the gap`,
    );
    this.name = 'EventDeferredTooLongError';
  }
}

const READ_COUNT = 500;
const READ_BLOCK_MS = 1_000;
/** How long deferred entries wait before persist is offered them again (as XREADGROUP BLOCK, so new entries join). */
const DEFER_PAUSE_MS = 75;
export const DEFAULT_GAP_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_DEFERRED = 100_000;
/** How long close waits for a blocked read to return before cutting the reader's connection. */
const CLOSE_READ_GRACE_MS = 1_500;

interface RawEntry {
  id: string;
  /** null: the entry was deleted while still pending */
  fields: string[] | null;
}

interface HeldEvent {
  id: string;
  event: RunEvent;
  /** run_id + seq: two entries with one key are one event sent twice */
  key: string;
  deferredSince?: number;
  reported?: boolean;
}

const eventKey = (event: RunEvent): string => `${event.run_id}\u0000${event.seq}`;

function toEntries(list: unknown): RawEntry[] {
  if (!Array.isArray(list)) return [];
  return list
    .filter((item): item is [unknown, unknown] => Array.isArray(item))
    .map(([id, fields]) => ({ id: String(id), fields: Array.isArray(fields) ? fields.map(String) : null }));
}

/** XREADGROUP's reply: RESP2 gives `[[key, entries]]`; RESP3 with ioredis' legacy mapping gives `[key, entries]`. */
function readReplyEntries(reply: unknown): RawEntry[] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  if (typeof reply[0] === 'string') return toEntries(reply[1]);
  return reply.flatMap((stream: unknown) => (Array.isArray(stream) ? toEntries(stream[1]) : []));
}

type Decoded = { event: RunEvent } | { error: MalformedStreamEntryError | null };

function decode(entry: RawEntry): Decoded {
  if (entry.fields === null) return { error: null }; // already deleted: nothing to persist or report
  let json: string | undefined;
  for (let i = 0; i + 1 < entry.fields.length; i += 2) {
    if (entry.fields[i] === EVENT_FIELD) json = entry.fields[i + 1];
  }
  if (json === undefined) return { error: new MalformedStreamEntryError(entry.id, `no '${EVENT_FIELD}' field`) };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { error: new MalformedStreamEntryError(entry.id, 'not valid JSON') };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { error: new MalformedStreamEntryError(entry.id, 'not a JSON object') };
  }
  const parsed = RunEvent.safeParse(value);
  if (!parsed.success)
    return { error: new MalformedStreamEntryError(entry.id, `not a RunEvent: ${parsed.error.message}`) };
  return { event: parsed.data };
}

/** Groups by run (in order of first appearance) and sorts each run by seq, as persist expects. */
function orderForPersist(events: RunEvent[]): RunEvent[] {
  const runOrder = new Map<string, number>();
  for (const event of events) if (!runOrder.has(event.run_id)) runOrder.set(event.run_id, runOrder.size);
  return [...events].sort((a, b) => runOrder.get(a.run_id)! - runOrder.get(b.run_id)! || a.seq - b.seq);
}

/**
 * The API's side of the run event stream (ARCHITECTURE.md, "A run's path" step 4). Every API replica runs one,
 * all in the group `ingest`: an entry goes to one replica, which persists it and only then acknowledges and
 * deletes it. What a dead replica held is claimed by a live one after `claimIdleMs`. Persisting is idempotent
 * on (run_id, seq), so the cost of any doubt (a retried batch, a claimed entry) is a duplicate, never a loss.
 */
export function createRunEventConsumer(options: RunEventConsumerOptions): RunEventConsumer {
  const {
    redisUrl,
    prefix,
    consumer,
    persist,
    claimIdleMs = 30_000,
    onError = () => {},
    now = Date.now,
    gapTimeoutMs = DEFAULT_GAP_TIMEOUT_MS,
    maxDeferred = DEFAULT_MAX_DEFERRED,
  } = options;
  if (!Number.isInteger(maxDeferred) || maxDeferred < 1)
    throw new InvalidRunEventConsumerOptionsError('maxDeferred must be a positive integer');
  if (typeof gapTimeoutMs !== 'number' || !(gapTimeoutMs >= 0))
    throw new InvalidRunEventConsumerOptionsError('gapTimeoutMs must be a number ≥ 0');
  const key = runEventStreamKey(prefix);
  const claimEveryMs = Math.max(1, Math.floor(claimIdleMs / 2));

  let reader: Redis | undefined;
  let commands: Redis | undefined;
  /** Deferred events by entry id: offered to persist again with every batch until taken. */
  const deferred = new Map<string, HeldEvent>();
  /** Persisted or skipped entries whose XACK + XDEL has not gone through yet. */
  let unacked: string[] = [];
  let nextClaimAt = 0;
  let claimCursor = '0-0';
  let started = false;
  let stopping = false;
  let loop: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let wakeSleeper: (() => void) | undefined;

  /** A pause that close cuts short. */
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakeSleeper = undefined;
        resolve();
      }
      wakeSleeper = done;
    });

  async function ensureGroup(): Promise<void> {
    try {
      await commands!.xgroup('CREATE', key, INGEST_GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!String((error as Error)?.message).includes('BUSYGROUP')) throw error;
    }
  }

  async function flushAcks(): Promise<void> {
    if (unacked.length === 0) return;
    const ids = unacked;
    unacked = [];
    try {
      const results = await commands!
        .multi()
        .xack(key, INGEST_GROUP, ...ids)
        .xdel(key, ...ids)
        .exec();
      const failed = results?.find(([error]) => error);
      if (failed) throw failed[0];
    } catch (error) {
      // Persisted already: acknowledging later is enough (a re-delivery in between is a harmless duplicate).
      unacked = ids.concat(unacked);
      onError(error);
    }
  }

  /** Resets the idle time of entries we still hold, so no other replica takes them for a dead one's. */
  async function keepOwnership(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += READ_COUNT) {
      await commands!.call('XCLAIM', key, INGEST_GROUP, consumer, '0', ...ids.slice(i, i + READ_COUNT), 'JUSTID');
    }
  }

  /** One page of entries other consumers have held longer than claimIdleMs. */
  async function claimIdle(count: number): Promise<RawEntry[]> {
    const reply = (await commands!.call(
      'XAUTOCLAIM',
      key,
      INGEST_GROUP,
      consumer,
      String(claimIdleMs),
      claimCursor,
      'COUNT',
      String(count),
    )) as unknown[];
    claimCursor = String(reply?.[0] ?? '0-0');
    return toEntries(reply?.[1]);
  }

  /** Calls persist until it answers; undefined if close cut a retry short (nothing is acknowledged then). */
  async function persistWithRetry(
    events: RunEvent[],
    heldIds: string[],
    acceptGaps: boolean,
  ): Promise<RunEvent[] | undefined> {
    for (let failures = 0; ;) {
      try {
        const result = await persist(events, { acceptGaps });
        return Array.isArray(result?.deferred) ? result.deferred : [];
      } catch (error) {
        failures += 1;
        onError(error);
        if (stopping) return undefined;
        await sleep(retryDelay(failures));
        if (stopping) return undefined;
        if (Date.now() >= nextClaimAt) {
          nextClaimAt = Date.now() + claimEveryMs;
          await keepOwnership(heldIds).catch(onError);
        }
      }
    }
  }

  /** Groups entries by event (run_id + seq): one event sent twice is offered once. */
  function byEvent(held: HeldEvent[]): Map<string, HeldEvent[]> {
    const entriesByEvent = new Map<string, HeldEvent[]>();
    for (const entry of held) entriesByEvent.set(entry.key, [...(entriesByEvent.get(entry.key) ?? []), entry]);
    return entriesByEvent;
  }

  /** Offers one group of events to persist and settles its entries; false if close cut the retries short. */
  async function offer(entriesByEvent: Map<string, HeldEvent[]>, acceptGaps: boolean): Promise<boolean> {
    if (entriesByEvent.size === 0) return true;
    const events = orderForPersist([...entriesByEvent.values()].map((sameEvent) => sameEvent[0]!.event));
    const heldIds = [...entriesByEvent.values()].flat().map((held) => held.id);
    const stillDeferred = await persistWithRetry(events, heldIds, acceptGaps);
    if (stillDeferred === undefined) return false;
    settle(entriesByEvent, new Set(stillDeferred.map(eventKey)));
    return true;
  }

  /**
   * Persists new entries together with the deferred ones, then acknowledges what persist took. Events deferred
   * longer than gapTimeoutMs go in a second call with `acceptGaps: true`: the gap before them has not filled in
   * all that time (its events were lost, e.g. with a worker's buffer), and waiting on would keep the run's final
   * status out of the database for good.
   */
  async function handle(entries: RawEntry[]): Promise<void> {
    const fresh: HeldEvent[] = [];
    for (const entry of entries) {
      if (deferred.has(entry.id)) continue;
      const decoded = decode(entry);
      if ('event' in decoded) {
        fresh.push({ id: entry.id, event: decoded.event, key: eventKey(decoded.event) });
      } else {
        unacked.push(entry.id);
        if (decoded.error) onError(decoded.error);
      }
    }
    const at = now();
    const normal = new Map<string, HeldEvent[]>();
    const overdue = new Map<string, HeldEvent[]>();
    for (const [eventId, sameEvent] of byEvent([...deferred.values(), ...fresh])) {
      const isOverdue = sameEvent.some(
        (held) => held.deferredSince !== undefined && at - held.deferredSince >= gapTimeoutMs,
      );
      (isOverdue ? overdue : normal).set(eventId, sameEvent);
    }
    for (const [, sameEvent] of overdue) {
      for (const held of sameEvent) {
        if (held.reported) continue;
        held.reported = true;
        onError(
          new EventDeferredTooLongError(held.id, held.event.run_id, held.event.seq, at - (held.deferredSince ?? at)),
        );
      }
    }
    if (!(await offer(normal, false))) return;
    if (!(await offer(overdue, true))) return;
    await flushAcks();
  }

  function settle(entriesByEvent: Map<string, HeldEvent[]>, deferredKeys: Set<string>): void {
    const at = now();
    for (const [eventId, sameEvent] of entriesByEvent) {
      for (const held of sameEvent) {
        if (!deferredKeys.has(eventId)) {
          deferred.delete(held.id);
          unacked.push(held.id);
          continue;
        }
        held.deferredSince ??= at;
        deferred.set(held.id, held);
      }
    }
  }

  async function readGroup(from: string, block: number | undefined, count = READ_COUNT): Promise<RawEntry[]> {
    const blockArgs = block === undefined ? [] : ['BLOCK', String(block)];
    const reply = await reader!.call(
      'XREADGROUP',
      'GROUP',
      INGEST_GROUP,
      consumer,
      'COUNT',
      String(count),
      ...blockArgs,
      'STREAMS',
      key,
      from,
    );
    return readReplyEntries(reply);
  }

  /**
   * One turn: due claims, then new entries (blocking only when there is nothing else to do), then persist. No more
   * entries are taken than the deferred map has room for: every entry taken may end up deferred.
   */
  async function turn(): Promise<void> {
    await flushAcks();
    const work: RawEntry[] = [];
    const room = (): number => Math.min(READ_COUNT, maxDeferred - deferred.size - work.length);
    if (Date.now() >= nextClaimAt) {
      await keepOwnership([...deferred.keys()]);
      if (room() > 0) {
        work.push(...(await claimIdle(room())));
        // More idle entries than one page: claim the next page on the next turn.
        nextClaimAt = claimCursor === '0-0' ? Date.now() + claimEveryMs : Date.now();
      } else {
        nextClaimAt = Date.now() + claimEveryMs;
      }
    }
    if (room() > 0) {
      const block = deferred.size > 0 ? DEFER_PAUSE_MS : Math.max(1, Math.min(READ_BLOCK_MS, nextClaimAt - Date.now()));
      work.push(...(await readGroup('>', work.length > 0 ? undefined : block, room())));
    } else if (work.length === 0) {
      // Full: offer the deferred ones again after the usual pause, reading nothing new until some are taken.
      await sleep(DEFER_PAUSE_MS);
      if (stopping) return;
    }
    if (work.length > 0 || deferred.size > 0) await handle(work);
  }

  async function run(): Promise<void> {
    // After a restart under the same name, what this consumer read but never acknowledged comes first.
    let ownPendingFrom: string | undefined = '0';
    for (let failures = 0; !stopping;) {
      try {
        const room = Math.min(READ_COUNT, maxDeferred - deferred.size);
        if (ownPendingFrom !== undefined && room <= 0) {
          await sleep(DEFER_PAUSE_MS);
          if (!stopping) await handle([]);
        } else if (ownPendingFrom !== undefined) {
          const entries = await readGroup(ownPendingFrom, undefined, room);
          ownPendingFrom = entries.at(-1)?.id;
          if (entries.length > 0) await handle(entries);
        } else {
          await turn();
        }
        failures = 0;
      } catch (error) {
        if (stopping) break;
        failures += 1;
        onError(error);
        // The stream or the group is gone (e.g. Redis restarted without persistence): make them again.
        if (String((error as Error)?.message).includes('NOGROUP')) await ensureGroup().catch(onError);
        await sleep(retryDelay(failures));
      }
    }
  }

  return {
    async start() {
      if (started || closing) throw new Error('run event consumer was already started or closed');
      started = true;
      commands = openRedis(redisUrl, `${prefix}:events-ingest:${consumer}`, { onError });
      // Its own connection: XREADGROUP BLOCK holds it while acks and claims go on the other.
      reader = openRedis(redisUrl, `${prefix}:events-reader:${consumer}`, { onError });
      await ensureGroup();
      loop = run();
    },
    close() {
      closing ??= (async () => {
        stopping = true;
        wakeSleeper?.();
        if (loop) {
          // A read may be blocked for up to a second, or hang on an unreachable Redis: wait a little, then cut it.
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([loop, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_READ_GRACE_MS)))]);
          clearTimeout(timer);
        }
        if (reader) reader.disconnect();
        await loop;
        if (commands) {
          if (commands.status === 'ready') await flushAcks();
          await closeRedis(commands);
        }
      })();
      return closing;
    },
  };
}
