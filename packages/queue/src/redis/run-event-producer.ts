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
}

export interface RunEventProducerOptions {
  redisUrl: string;
  prefix: string;
  /** Failed sends (they are retried), connection errors, and RunEventBufferFullError. */
  onError?: (err: unknown) => void;
  /** Unsent events beyond which the producer reports RunEventBufferFullError (once per crossing). Default 200 000. */
  maxBuffered?: number;
}

export const DEFAULT_MAX_BUFFERED = 200_000;

/**
 * Reported through onError when the unsent buffer crosses maxBuffered (Redis has been unreachable for long): the
 * worker's memory grows until Redis is back. Nothing is dropped.
 */
export class RunEventBufferFullError extends Error {
  constructor(
    readonly buffered: number,
    readonly maxBuffered: number,
  ) {
    super(
      `run event producer holds ${buffered} unsent events (more than ${maxBuffered}): Redis has been unreachable for long, memory grows until it is back`,
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
}: RunEventProducerOptions): RunEventProducer {
  if (!Number.isInteger(maxBuffered) || maxBuffered < 1)
    throw new InvalidRunEventProducerOptionsError('maxBuffered must be a positive integer');
  const redis = openRedis(redisUrl, `${prefix}:events-producer`, { onError });
  const key = runEventStreamKey(prefix);
  /** Serialized events not yet confirmed by Redis, oldest first. */
  const unsent: string[] = [];
  let pushedCount = 0;
  let sentCount = 0;
  let waiters: FlushWaiter[] = [];
  let scheduled = false;
  let sending = false;
  let closing: Promise<void> | undefined;
  /** Set while the buffer is above maxBuffered and that was reported; cleared once it is back under. */
  let overflowReported = false;

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
        sentCount += sent;
        if (unsent.length <= maxBuffered) overflowReported = false;
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
      unsent.push(json);
      pushedCount += 1;
      // The cap does not drop or refuse: a dropped event is a gap in the run's log forever, and refusing would make
      // the executor fail a playbook that is still running fine. Buffering on while an operator is told once (per
      // crossing) keeps every event; the cost is memory for as long as Redis stays away.
      if (unsent.length > maxBuffered && !overflowReported) {
        overflowReported = true;
        onError(new RunEventBufferFullError(unsent.length, maxBuffered));
      }
      schedule();
    },
    flush,
    close() {
      closing ??= flush().then(() => closeRedis(redis));
      return closing;
    },
  };
}
