import type { RunEvent } from '@baton/contracts';
import { closeRedis, openRedis } from './redis-connection.js';
import { EVENT_FIELD, retryDelay, runEventStreamKey } from './run-event-stream-keys.js';

export interface RunEventProducer {
  /** Buffers one event (synchronous, called from runPlaybook's onEvent); sent in order, batched per tick. */
  push(event: RunEvent): void;
  /** Resolves once every event pushed so far is in Redis (retries while Redis is unreachable; never drops). */
  flush(): Promise<void>;
  /** Flushes, then closes its connection. */
  close(): Promise<void>;
  /** Events pushed and not yet confirmed by Redis, and the bytes of their JSON. */
  buffered(): { events: number; bytes: number };
}

export interface RunEventProducerOptions {
  redisUrl: string;
  prefix: string;
  /** Failed sends (they are retried), connection errors, and RunEventBufferFullError. */
  onError?: (err: unknown) => void;
  /** Unsent events beyond which the buffer is full (RunEventBufferFullError, onBackpressure). Default 200 000. */
  maxBuffered?: number;
  /** Unsent bytes (of the events' JSON) beyond which the buffer is full. Default 64 MiB (BATON_WORKER_BUFFER_MB). */
  maxBufferedBytes?: number;
  /**
   * Called with true when the buffer becomes full, and with false once it has drained back to half of both caps:
   * the worker stops leasing new runs meanwhile. Events are never dropped either way.
   */
  onBackpressure?: (full: boolean) => void;
}

export const DEFAULT_MAX_BUFFERED = 200_000;
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/**
 * Reported through onError when the unsent buffer crosses maxBuffered (Redis has been unreachable for long): the
 * worker's memory grows until Redis is back. Nothing is dropped.
 */
export class RunEventBufferFullError extends Error {
  constructor(
    readonly buffered: number,
    readonly maxBuffered: number,
    readonly bufferedBytes = 0,
    readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
  ) {
    super(
      `run event producer holds ${buffered} unsent events of ${bufferedBytes} bytes (caps: ${maxBuffered} events, ${maxBufferedBytes} bytes): Redis has been unreachable for long; no new run is leased until it drains`,
    );
    this.name = 'RunEventBufferFullError';
  }
}

export class InvalidRunEventProducerOptionsError extends Error {
  constructor(detail: string) {
    super(`invalid run event producer options: ${detail}`);
    this.name = 'InvalidRunEventProducerOptionsError';
  }
}

/** `push` after `close`: the event would never be sent. */
export class RunEventProducerClosedError extends Error {
  constructor() {
    super('run event producer is closed');
    this.name = 'RunEventProducerClosedError';
  }
}

/** An event that JSON cannot carry (a cycle, a BigInt): refused at `push`, so it cannot wedge the stream. */
export class UnserializableRunEventError extends Error {
  constructor(
    readonly runId: unknown,
    readonly seq: unknown,
    cause: unknown,
  ) {
    super(
      `run event ${String(runId)}#${String(seq)} cannot be serialized: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.name = 'UnserializableRunEventError';
  }
}

/** Events per MULTI: big enough to keep round trips few, small enough not to stall Redis. */
const BATCH_SIZE = 500;

interface FlushWaiter {
  target: number;
  resolve: () => void;
}

/**
 * The worker's side of the run event stream: XADD each event to `${prefix}:events` (field `e` = the JSON).
 * One batch is in flight at a time and a failed batch is retried before anything newer, so the stream holds a
 * run's events in push order. A batch goes in one MULTI: all of it or none. A reply lost in a disconnect may
 * get a batch added twice; the ingest persists idempotently on (run_id, seq), so a duplicate is harmless,
 * while a dropped event would be a gap forever.
 */
export function createRunEventProducer({
  redisUrl,
  prefix,
  onError = () => {},
  maxBuffered = DEFAULT_MAX_BUFFERED,
  maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
  onBackpressure = () => {},
}: RunEventProducerOptions): RunEventProducer {
  if (!Number.isInteger(maxBuffered) || maxBuffered < 1)
    throw new InvalidRunEventProducerOptionsError('maxBuffered must be a positive integer');
  if (!Number.isInteger(maxBufferedBytes) || maxBufferedBytes < 1)
    throw new InvalidRunEventProducerOptionsError('maxBufferedBytes must be a positive integer');
  const redis = openRedis(redisUrl, `${prefix}:events-producer`, { onError });
  const key = runEventStreamKey(prefix);
  /** Serialized events not yet confirmed by Redis, oldest first, and their size in bytes. */
  const unsent: string[] = [];
  const sizes: number[] = [];
  let unsentBytes = 0;
  let pushedCount = 0;
  let sentCount = 0;
  let waiters: FlushWaiter[] = [];
  let scheduled = false;
  let sending = false;
  let closing: Promise<void> | undefined;
  /** Set from the moment the buffer goes over a cap until it has drained to half of both (hysteresis: no flapping). */
  let full = false;

  const checkPressure = (): void => {
    if (!full && (unsent.length > maxBuffered || unsentBytes > maxBufferedBytes)) {
      full = true;
      onError(new RunEventBufferFullError(unsent.length, maxBuffered, unsentBytes, maxBufferedBytes));
      onBackpressure(true);
    } else if (full && unsent.length <= maxBuffered / 2 && unsentBytes <= maxBufferedBytes / 2) {
      full = false;
      onBackpressure(false);
    }
  };

  const settleWaiters = (): void => {
    waiters = waiters.filter((waiter) => {
      if (sentCount < waiter.target) return true;
      waiter.resolve();
      return false;
    });
  };

  /** Sends one batch; resolves to how many events Redis confirmed (all of the batch, or none). */
  async function sendBatch(batch: string[]): Promise<number> {
    const multi = redis.multi();
    for (const json of batch) multi.xadd(key, '*', EVENT_FIELD, json);
    const results = await multi.exec();
    if (!results) throw new Error('run event batch was aborted');
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
    return batch.length;
  }

  async function drain(): Promise<void> {
    let failures = 0;
    while (unsent.length > 0) {
      const batch = unsent.slice(0, BATCH_SIZE);
      try {
        const sent = await sendBatch(batch);
        unsent.splice(0, sent);
        for (const size of sizes.splice(0, sent)) unsentBytes -= size;
        sentCount += sent;
        checkPressure();
        failures = 0;
        settleWaiters();
      } catch (error) {
        failures += 1;
        onError(error);
        await new Promise((resolve) => setTimeout(resolve, retryDelay(failures)));
      }
    }
  }

  const schedule = (): void => {
    if (scheduled || sending) return;
    scheduled = true;
    // setImmediate: every event pushed in this tick joins one batch.
    setImmediate(() => {
      scheduled = false;
      sending = true;
      void drain().finally(() => {
        sending = false;
        if (unsent.length > 0) schedule();
      });
    });
  };

  const flush = (): Promise<void> => {
    if (sentCount >= pushedCount) return Promise.resolve();
    return new Promise((resolve) => waiters.push({ target: pushedCount, resolve }));
  };

  return {
    push(event) {
      if (closing) throw new RunEventProducerClosedError();
      let json: string | undefined;
      try {
        json = JSON.stringify(event);
      } catch (error) {
        throw new UnserializableRunEventError(event?.run_id, event?.seq, error);
      }
      if (typeof json !== 'string' || !json.startsWith('{')) {
        throw new UnserializableRunEventError(event?.run_id, event?.seq, 'not an object');
      }
      const size = Buffer.byteLength(json);
      unsent.push(json);
      sizes.push(size);
      unsentBytes += size;
      pushedCount += 1;
      // The cap does not drop or refuse: a dropped event is a gap in the run's log forever, and refusing would make
      // the executor fail a playbook that is still running fine. The runs in flight buffer on, the operator is told
      // once per crossing, and the worker leases no new run (onBackpressure) until the buffer has drained.
      checkPressure();
      schedule();
    },
    flush,
    buffered: () => ({ events: unsent.length, bytes: unsentBytes }),
    close() {
      closing ??= flush().then(() => closeRedis(redis));
      return closing;
    },
  };
}
