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
    action: text(d.action)?.slice(0, 200) ?? null,
    message: status === 'ok' ? null : messageOf(d),
    no_log: d.no_log === true ? 1 : 0,
    changes: d.changed === true && d.no_log !== true ? changesOf(d.res) : null,
  };
}

const MAX_MESSAGE_CHARS = 1000;
/** Past this, what changed is kept without its diffs (a diff of a large file must not bloat the rollups). */
const MAX_CHANGES_CHARS = 64 * 1024;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a result failed, was unreachable or skipped: its `msg` (or a failed loop item's), never a no_log result's. */
function messageOf(d: Record<string, unknown>): string | null {
  if (d.no_log === true) return 'the output has been hidden (no_log)';
  const res = isObject(d.res) ? d.res : {};
  const items = Array.isArray(res.results) ? res.results.filter(isObject) : [];
  const msg =
    text(res.msg) ??
    text(res.skip_reason) ??
    text(items.find((i) => i.failed === true)?.msg) ??
    text(res.stderr) ??
    null;
  return msg === null ? null : msg.slice(0, MAX_MESSAGE_CHARS);
}

/** A loop item as a short label: ansible's own `item` when it is text, else its JSON. */
const itemLabel = (item: unknown): string =>
  stripNul(typeof item === 'string' ? item : (JSON.stringify(item) ?? String(item))).slice(0, 500);

/** What a changed result changed, as JSON [{item?, diff?}]: one entry per changed loop item, or one for the task. */
function changesOf(res: unknown): string {
  if (!isObject(res)) return '[]';
  const items = Array.isArray(res.results) ? res.results.filter(isObject) : null;
  const list = items
    ? items.filter((i) => i.changed === true).map((i) => ({ item: itemLabel(i.item), diff: i.diff ?? null }))
    : [{ diff: res.diff ?? null }];
  const json = stripNul(JSON.stringify(list));
  if (json.length <= MAX_CHANGES_CHARS) return json;
  return stripNul(JSON.stringify(list.map((c) => ({ ...c, diff: { truncated: true } }))));
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
