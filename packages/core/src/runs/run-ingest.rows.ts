// Row shapes the ingester writes, and the one way the API appends an event of its own to a run.
import type { RunEvent } from '@baton/contracts';
import type { RunEventRepo, RunEventRow, RunRepo, RunTaskResultRow } from '@baton/db';

export type EventTx = {
  runs: Pick<RunRepo, 'findById' | 'advanceProgress'>;
  runEvents: Pick<RunEventRepo, 'insertBatch'>;
};

/** PostgreSQL refuses U+0000 in text (and the whole batch with it): every raw string column is written without it. */
export const stripNul = (s: string): string => (s.includes('\0') ? s.replaceAll('\0', '') : s);
/** A string of the event, NUL-free, for a text column. */
export const text = (v: unknown): string | undefined => (typeof v === 'string' ? stripNul(v) : undefined);
/** The integer columns are 32-bit in PostgreSQL: a larger value would fail the batch, so it is not a value. */
const MAX_INT = 2_147_483_647;
export const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= MAX_INT ? v : null;

/** RFC 3339 UTC, like every other timestamp Baton stores; the callback plugin writes Python's `+00:00` form. */
export function isoOrNull(v: unknown): string | null {
  const s = text(v);
  if (!s) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export function toEventRow(e: RunEvent, logByte: number | null): RunEventRow {
  return {
    run_id: e.run_id,
    seq: e.seq,
    ts: stripNul(e.ts),
    kind: stripNul(e.kind),
    host: text(e.data.host) ?? null,
    log_line: e.kind === 'log' ? int(e.data.start_line) : null,
    log_byte: logByte,
    data: e.data,
  };
}

/** A runner_on_* result as a task × host row (item events are not task results). */
export function toTaskResultRow(e: RunEvent, status: string): RunTaskResultRow {
  const d = e.data;
  return {
    run_id: e.run_id,
    seq: e.seq,
    task_uuid: text(d.task_uuid) ?? '',
    task: text(d.task) ?? '',
    task_path: text(d.task_path) ?? null,
    host: text(d.host) ?? '',
    status,
    changed: d.changed === true ? 1 : 0,
    started_at: isoOrNull(d.start),
    ended_at: isoOrNull(d.end),
    duration_ms: typeof d.duration === 'number' ? int(Math.round(d.duration * 1000)) : null,
  };
}

/**
 * Appends a `status` event written by the API (never by an executor) with seq = last_seq + 1. Call it only
 * after winning a CAS on the run's status in the same transaction: that row lock keeps two writers apart.
 */
export async function appendStatusEvent(
  r: EventTx,
  runId: string,
  at: string,
  data: Record<string, unknown>,
): Promise<RunEvent> {
  const run = await r.runs.findById(runId);
  if (!run) throw new Error(`run ${runId} vanished while its status changed`);
  const event: RunEvent = { run_id: runId, seq: run.last_seq + 1, ts: at, kind: 'status', data };
  await r.runEvents.insertBatch([toEventRow(event, null)]);
  await r.runs.advanceProgress(runId, { lastSeq: event.seq, logLines: run.log_lines, logBytes: run.log_bytes });
  return event;
}
