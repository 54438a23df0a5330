// The run output limit as the ingester holds it (BATON_RUN_OUTPUT_LIMIT_MB). The executor cuts the log first and
// says so; the ingester holds the same limit against whatever reaches it (a worker set differently, a foreign
// writer on the stream), so the stored log stays bounded whichever side writes. Every event is still stored, with
// its seq: past the limit a log chunk keeps no text and any other event no `res`.
import { outputTruncatedLine, type RunEvent, type TruncatedNote } from '@baton/contracts';
import { int, text } from './run-ingest.rows.js';

export const DEFAULT_OUTPUT_LIMIT_BYTES = 100 * 1024 * 1024;
/**
 * Room above the limit for the lines an executor writes after its own cut (its notice, a cancel or cleanup line):
 * they are never dropped by the executor, so the ingester's bound is the limit plus this.
 */
export const OWN_LINES_ALLOWANCE_BYTES = 64 * 1024;

/** What the ingester knows of a run's stored log, advanced event by event. */
export interface OutputState {
  logBytes: number;
  logLines: number;
  outputTruncated: boolean;
}

const dropped: TruncatedNote = { reason: 'output_limit' };

/** A log chunk stored without its text: its seq stays, it points at no line. */
function emptyChunk(e: RunEvent, bytes: number): RunEvent {
  return { ...e, data: { text: '', truncated: { reason: 'output_limit' }, bytes } };
}

/** The chunk's whole lines that fit in `budget` bytes. */
function linesWithin(chunk: string, budget: number): string {
  let kept = '';
  let size = 0;
  for (const line of chunk.split(/(?<=\n)/)) {
    const bytes = Buffer.byteLength(line);
    if (size + bytes > budget) break;
    size += bytes;
    kept += line;
  }
  return kept;
}

/** A log chunk numbered after what is stored (a cut makes the writer's numbers run ahead of the stored log). */
function numbered(e: RunEvent, chunk: string, state: OutputState, extra: Record<string, unknown> = {}): RunEvent {
  const lines = chunk.split('\n').length - 1;
  return {
    ...e,
    data: { ...e.data, ...extra, text: chunk, start_line: state.logLines + 1, end_line: state.logLines + 1 + lines },
  };
}

/** The log chunk as stored; undefined when its text is not (past the bound, after a cut). */
function limitLog(e: RunEvent, state: OutputState, limitBytes: number): RunEvent | undefined {
  const chunk = text(e.data.text) ?? '';
  const bytes = Buffer.byteLength(chunk);
  const bound = limitBytes + OWN_LINES_ALLOWANCE_BYTES;
  const notice = outputTruncatedLine(limitBytes);
  // Until the log is cut, room for our notice stays free below the bound.
  const room = bound - state.logBytes - (state.outputTruncated ? 0 : Buffer.byteLength(notice));
  if (bytes <= room) {
    if (e.data.output_truncated === true) state.outputTruncated = true;
    return state.outputTruncated ? numbered(e, chunk, state) : e;
  }
  if (state.outputTruncated) return undefined;
  // The cut is ours: the whole lines that fit, then the notice, in this event's place.
  const kept = linesWithin(chunk, Math.max(0, room));
  state.outputTruncated = true;
  return numbered(e, kept + notice, state, { output_truncated: true });
}

/**
 * Past the cut an event keeps its metadata: no `res`, and no line range (after a cut of ours the writer's line
 * numbers no longer match the stored log's; the executor drops the ranges into what it did not keep itself).
 */
function withoutPayload(e: RunEvent): RunEvent {
  if (e.data.res === undefined && e.data.start_line === undefined && e.data.end_line === undefined) return e;
  const { res, start_line: _start, end_line: _end, ...data } = e.data;
  return { ...e, data: res === undefined ? data : { ...data, truncated: data.truncated ?? dropped } };
}

/**
 * The event as it is stored under the limit, and for a log chunk holding text its byte offset in the log; `state`
 * is advanced past it (log bytes and lines, the truncated flag). A final status event saying `output_truncated`
 * sets the flag too (its executor cut the log).
 */
export function limitOutput(
  e: RunEvent,
  state: OutputState,
  limitBytes: number,
): { event: RunEvent; logByte: number | null } {
  if (e.kind !== 'log') {
    if (e.kind === 'status' && e.data.output_truncated === true) state.outputTruncated = true;
    return { event: state.outputTruncated ? withoutPayload(e) : e, logByte: null };
  }
  const event = limitLog(e, state, limitBytes);
  if (!event) return { event: emptyChunk(e, Buffer.byteLength(text(e.data.text) ?? '')), logByte: null };
  const logByte = state.logBytes;
  state.logBytes += Buffer.byteLength(text(event.data.text) ?? '');
  const endLine = int(event.data.end_line);
  if (endLine !== null) state.logLines = Math.max(state.logLines, endLine - 1);
  return { event, logByte };
}
