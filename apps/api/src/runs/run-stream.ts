// One SSE client watching one run (ARCHITECTURE.md, "Events"): stored events after the resume point, then live
// ones, each exactly once and in seq order, then `event: end` once the run is over.
import type { RunEvent } from '@baton/contracts';
import { isFinalEvent, type RunOutputService } from '@baton/core';
import type { EventBus, Unsubscribe } from '@baton/queue';
import type { Response } from 'express';

export interface RunStreamDeps {
  output: Pick<RunOutputService, 'eventsAfter' | 'isOver'>;
  eventBus: Pick<EventBus, 'subscribe'>;
  /** Interval of the `: keepalive` comment that keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** Live events waiting for a slow client before it is dropped (default SSE_MAX_BEHIND). */
  maxBehind?: number | undefined;
  /** Failures after the stream started (the response is then just ended; the client resumes with Last-Event-ID). */
  onError?: ((err: unknown) => void) | undefined;
  /** Told once when the stream starts (its headers are sent) and once when it stops (/metrics' open streams). */
  streams?: { opened(): void; closed(): void } | undefined;
}

/** Stored events read per query while catching up. */
const PAGE = 500;
/**
 * Live events a client may fall behind by: one that cannot keep up is disconnected rather than buffered
 * without bound, and resumes from the database with Last-Event-ID.
 */
export const SSE_MAX_BEHIND = 10_000;

/** Resolves once the client has taken what is buffered for it (at once if nothing waits), or is gone. */
export function drained(res: Response): Promise<void> {
  if (res.destroyed || !res.writableNeedDrain) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * The frames of live events, by event object: the bus hands every subscriber of a run the same object, so with a
 * thousand followers an event is serialised and encoded once, not a thousand times, and every socket is handed
 * the same bytes (bench/sse).
 */
const frames = new WeakMap<RunEvent, Buffer>();
/** A kind is one line of the frame whatever it contains. */
const frame = (e: RunEvent): Buffer => {
  let bytes = frames.get(e);
  if (bytes === undefined) {
    bytes = Buffer.from(`id: ${e.seq}\nevent: ${e.kind.replace(/[\r\n]/g, ' ')}\ndata: ${JSON.stringify(e)}\n\n`);
    frames.set(e, bytes);
  }
  return bytes;
};

/**
 * Starts streaming the events of `runId` after `afterSeq` to `res` and resolves once the stream is set up; the
 * rest happens as events come. Without a race: it subscribes to the bus first (live events wait in a queue),
 * then sends the stored events after the resume point, then the live ones, skipping any already sent and
 * filling a jump in seq from the database first. Rejects (before anything is written) if subscribing fails.
 */
export async function streamRunEvents(
  deps: RunStreamDeps,
  runId: string,
  afterSeq: number,
  res: Response,
): Promise<void> {
  let lastSent = afterSeq;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined = undefined;
  let unsubscribe: Unsubscribe | undefined;
  let counted = false;

  const stop = (): void => {
    closed = true;
    if (counted) deps.streams?.closed();
    counted = false;
    if (heartbeat) clearInterval(heartbeat);
    unsubscribe?.();
    unsubscribe = undefined;
  };
  const end = (): void => {
    if (closed) return;
    stop();
    res.end();
  };

  /**
   * Writes made in one tick leave as one: the ingester publishes a stored batch of events at once, and a thousand
   * followers then cost a thousand writes per batch, not per event (bench/sse).
   */
  const write = (text: string | Buffer): void => {
    if (!res.writableCorked) {
      res.cork();
      process.nextTick(() => {
        if (res.writableCorked) res.uncork();
      });
    }
    res.write(text);
  };

  const send = (e: RunEvent): void => {
    write(frame(e));
    lastSent = e.seq;
    if (isFinalEvent(e)) {
      write('event: end\ndata: {}\n\n');
      end();
    }
  };

  /** Sends stored events after the last one sent, up to `upTo`, page by page, minding backpressure. */
  const sendStored = async (upTo: number): Promise<void> => {
    while (!closed && lastSent < upTo) {
      const page = await deps.output.eventsAfter(runId, lastSent, PAGE);
      for (const e of page) {
        if (closed || e.seq > upTo) return;
        send(e);
        if (!closed) await drained(res);
      }
      if (page.length < PAGE) return;
    }
  };

  const catchUp = async (): Promise<void> => {
    await sendStored(Number.POSITIVE_INFINITY);
    // A run can be over without a final event reaching us (one finished before any event, say): read once
    // more after seeing it finished (a final event is stored in the same transaction as the status), then end.
    if (!closed && (await deps.output.isOver(runId))) {
      await sendStored(Number.POSITIVE_INFINITY);
      if (!closed) res.write('event: end\ndata: {}\n\n');
      end();
    }
  };

  const deliver = async (e: RunEvent): Promise<void> => {
    if (e.seq <= lastSent) return;
    // Events are stored before they are published: a jump in seq is filled from the database.
    if (e.seq > lastSent + 1) await sendStored(e.seq - 1);
    if (!closed && e.seq > lastSent) send(e);
    if (!closed) await drained(res);
  };

  // One task at a time, in order: the catch-up first, then each live event as it arrived.
  let gateOpen!: () => void;
  let tail: Promise<void> = new Promise<void>((resolve) => {
    gateOpen = resolve;
  }).then(catchUp);
  const fail = (err: unknown): void => {
    deps.onError?.(err);
    end();
  };
  tail = tail.catch(fail);
  // Tasks queued or running, the catch-up among them until it is done.
  let behind = 1;
  tail = tail.finally(() => {
    behind -= 1;
  });
  const enqueue = (task: () => Promise<void>): void => {
    if (++behind > (deps.maxBehind ?? SSE_MAX_BEHIND)) return end();
    tail = tail
      .then(() => (closed ? undefined : task()))
      .catch(fail)
      .finally(() => {
        behind -= 1;
      });
  };

  res.on('close', stop);
  unsubscribe = await deps.eventBus.subscribe(runId, (e) => {
    // The common case, at once and without a promise per event and client: nothing is queued before this event,
    // it is the next one, and the client takes what it is sent. Anything else waits its turn in the queue.
    if (behind === 0 && !closed && e.seq === lastSent + 1 && !res.writableNeedDrain) send(e);
    else enqueue(() => deliver(e));
  });
  if (closed) {
    // The client left while we subscribed.
    stop();
    return;
  }
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  // The stream is delimited by the connection's end, not by chunks: the framing costs a chunk header and two more
  // socket writes per event and client (writing 4 events per tick to 1,000 local streams took 2.5× the CPU with it
  // and strings, against no framing and shared bytes). SSE has its own end (`event: end`), which clients wait for.
  res.setHeader('Connection', 'close');
  res.removeHeader('Transfer-Encoding');
  res.flushHeaders();
  counted = true;
  deps.streams?.opened();
  heartbeat = setInterval(() => {
    res.write(': keepalive\n\n');
    // Live delivery is best effort (a bus that reconnects loses what was published meanwhile): each keepalive
    // also reads what the database holds after the last event sent, and ends the stream of a run that is over.
    enqueue(catchUp);
  }, deps.heartbeatMs);
  gateOpen();
}
