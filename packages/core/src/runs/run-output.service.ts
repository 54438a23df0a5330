import type { LogEventData, RunEvent } from '@baton/contracts';
import type { RunEventRepo, RunEventRow, RunRepo } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import type { RunAccess } from './run-access.js';

export interface RunEventFilter {
  after_seq?: number | undefined;
  kind?: string | undefined;
  host?: string | undefined;
  limit: number;
}

/** Bytes of the log, 0-based and inclusive like HTTP ranges: `{start, end?}` (no end: to the end), or the last `suffix` bytes. */
export type LogByteRange = { start: number; end?: number | undefined } | { suffix: number };

export interface LogBytes {
  body: Buffer;
  /** bytes of the log persisted so far */
  totalBytes: number;
  /** the bytes `body` holds (inclusive), or null when the range lies outside the log (HTTP 416) */
  range: { start: number; end: number } | null;
}

export function toRunEvent(row: RunEventRow): RunEvent {
  return { run_id: row.run_id, seq: row.seq, ts: row.ts, kind: row.kind, data: row.data };
}

/** The event that ends a run's event sequence: nothing follows it, so a live stream ends after it. */
export function isFinalEvent(event: Pick<RunEvent, 'kind' | 'data'>): boolean {
  return event.kind === 'status' && event.data.status === 'finished';
}

/** A log chunk's lines, each with its newline (the executor emits whole lines only; a last bare line is kept too). */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** A log chunk's data; text that is not a string (a forged or broken event) reads as empty, as the ingester counted it. */
function chunkData(row: RunEventRow): LogEventData {
  const data = row.data as Partial<LogEventData>;
  return { ...data, text: typeof data.text === 'string' ? data.text : '' } as LogEventData;
}

/** `seq` is a 32-bit integer column: PostgreSQL refuses a larger bound, and no event lies beyond it anyway. */
const MAX_SEQ = 2_147_483_647;
const seqBound = (afterSeq: number | undefined) => (afterSeq === undefined ? undefined : Math.min(afterSeq, MAX_SEQ));

/**
 * Reading what a run printed and emitted: events by filter, log lines by number and log bytes by offset.
 * Reads touch only the log chunks that cover what was asked, so a huge log is served in pieces. Totals come
 * from the run row read first, so a log still growing is cut at a consistent point. A run whose output retention
 * removed (output_pruned_at) reads as an empty log: its row keeps log_lines as history, not as what can be read.
 */
export function createRunOutputService(deps: {
  runEvents: Pick<RunEventRepo, 'list' | 'logChunksByLine' | 'logChunksByByte'>;
  runs: Pick<RunRepo, 'findById'>;
  access: Pick<RunAccess, 'visibleRun'>;
}) {
  async function readBytes(runId: string, start: number, end: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (const row of await deps.runEvents.logChunksByByte(runId, start, end)) {
      const bytes = Buffer.from(chunkData(row).text, 'utf8');
      const at = row.log_byte ?? 0;
      const from = Math.max(0, start - at);
      const to = Math.min(bytes.length, end + 1 - at);
      if (to > from) parts.push(bytes.subarray(from, to));
    }
    return Buffer.concat(parts);
  }

  return {
    /** Events in seq order; 404 when the run is unknown or invisible to the caller. */
    async events(p: Principal, id: string, q: RunEventFilter): Promise<RunEvent[]> {
      await deps.access.visibleRun(p, id);
      const rows = await deps.runEvents.list(id, {
        afterSeq: seqBound(q.after_seq),
        kind: q.kind,
        host: q.host,
        limit: q.limit,
      });
      return rows.map(toRunEvent);
    },

    /** Lines offset+1 … offset+limit of the log (all the rest without limit); past the end gives ''. */
    async logLines(
      p: Principal,
      id: string,
      q: { offset?: number | undefined; limit?: number | undefined },
    ): Promise<{ text: string; totalLines: number }> {
      const run = await deps.access.visibleRun(p, id);
      const totalLines = run.output_pruned_at ? 0 : run.log_lines;
      const from = (q.offset ?? 0) + 1;
      const to = Math.min(q.limit === undefined ? totalLines : from - 1 + q.limit, totalLines);
      if (from > to) return { text: '', totalLines };
      const out: string[] = [];
      for (const row of await deps.runEvents.logChunksByLine(id, from, to)) {
        const data = chunkData(row);
        const first = row.log_line ?? data.start_line;
        linesOf(data.text).forEach((line, i) => {
          if (first + i >= from && first + i <= to) out.push(line);
        });
      }
      return { text: out.join(''), totalLines };
    },

    /** Exactly the UTF-8 bytes asked for (a range may cut a character); the end is clamped to the log's size. */
    async logBytes(p: Principal, id: string, range: LogByteRange): Promise<LogBytes> {
      const run = await deps.access.visibleRun(p, id);
      const totalBytes = run.output_pruned_at ? 0 : run.log_bytes;
      const [start, end] =
        'suffix' in range
          ? [Math.max(0, totalBytes - range.suffix), totalBytes - 1]
          : [range.start, Math.min(range.end ?? totalBytes - 1, totalBytes - 1)];
      // RFC 9110 §14.1.2: a range starting past the end, and any range of an empty log (or a zero suffix), is unsatisfiable.
      if (start >= totalBytes || end < start) return { body: Buffer.alloc(0), totalBytes, range: null };
      const body = await readBytes(id, start, end);
      if (body.length === 0) return { body, totalBytes, range: null };
      return { body, totalBytes, range: { start, end: start + body.length - 1 } };
    },

    /** Stored events after `afterSeq` in seq order, for a stream that checked visibility when it connected. */
    async eventsAfter(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
      return (await deps.runEvents.list(runId, { afterSeq: seqBound(afterSeq), limit })).map(toRunEvent);
    },

    /** Whether the run is over (or gone): a stream that caught up with the database then ends even without a final event. */
    async isOver(runId: string): Promise<boolean> {
      const run = await deps.runs.findById(runId);
      return !run || run.status === 'finished';
    },
  };
}
export type RunOutputService = ReturnType<typeof createRunOutputService>;
