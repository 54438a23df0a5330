// Turns ansible's two output streams (stdout with the human log, the callback plugin's JSON lines) into one
// ordered sequence of run events with a gap-free `seq` from 1. An ansible event waits until the stdout lines
// it points at (its end_line) have come out of ansible, so a reader sees the log before the event that printed
// it, even though the two arrive on separate pipes. Secrets and the private run directory's path are masked in
// every string, and the log and each event's `res` are capped so a runaway playbook cannot fill the database:
// past the run's output limit the log ends with one notice and later events keep only their metadata.
import { StringDecoder } from 'node:string_decoder';
import {
  type HostCounts,
  type LogEventData,
  outputTruncatedLine,
  type RunEvent,
  type TruncatedNote,
} from '@baton/contracts';
import { hostKeyRefusal } from '../known-hosts/host-trust.js';
import { BoundedLineReader, fieldsBeforeRes } from './run-event-stream.lines.js';

/** One host's counts from ansible's final playbook_on_stats: the API's HostCounts, the same shape end to end. */
export type HostStats = HostCounts;

export interface RunEventStreamLimits {
  /** bytes of ansible output kept in the log (the run's output limit); the rest is dropped with one notice */
  maxLogBytes: number;
  /** largest serialized `res` of an ansible event; a larger one becomes `{truncated: true, bytes}` */
  maxEventResBytes: number;
  /** longest line read from the callback pipe; a longer one becomes its event's fields before `res` (16 MiB) */
  maxEventLineBytes?: number | undefined;
}

export interface RunEventStreamOptions {
  /**
   * The callback plugin prints SYNC_LINE once loaded and counts its line numbers from there (ansible prints lines
   * before it loads callbacks, more with -v): events then wait for that line to be read from stdout.
   */
  awaitSyncLine?: boolean | undefined;
}

/** The line the callback plugin prints on stdout when it is loaded (baton_events.py's SYNC_LINE); never in the log. */
export const SYNC_LINE = '[baton-events-sync-7f3a9c]';
export const DEFAULT_MAX_EVENT_LINE_BYTES = 16 * 1024 * 1024;

interface PendingAnsibleEvent {
  kind: string;
  data: Record<string, unknown>;
  /** in the callback's numbering: lines after the sync line */
  endLine: number;
}

const REDACTED = '********';

/**
 * What the callback pipe may carry. Any code of a project runs in ansible's processes (filter, lookup and action
 * plugins) and can write to fd 3 too, so nothing there is trusted: only Ansible event names (never `status` or
 * `log`, which are Baton's own), only the fields our plugin writes, each of its type; the rest is dropped.
 */
const ANSIBLE_EVENT_NAME = /^(playbook_on_|runner_)[a-z_]+$/;
const STRING_FIELDS = [
  'uuid',
  'created',
  'playbook',
  'play',
  'play_uuid',
  'pattern',
  'task',
  'task_uuid',
  'task_path',
  'parent_uuid',
  'action',
  'host',
  'start',
  'end',
];
const COUNT_FIELDS = ['counter', 'start_line', 'end_line'];
const BOOLEAN_FIELDS = ['changed', 'no_log'];
const STAT_COUNTS = ['ok', 'changed', 'failed', 'unreachable', 'skipped', 'rescued', 'ignored'] as const;
const MAX_COUNT = 2 ** 31 - 1;
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_COUNT;
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** playbook_on_stats' `stats`: host → the seven counts, each a count (else 0); a host that is not an object is dropped. */
function statsFrom(value: unknown): Record<string, HostStats> | undefined {
  if (!isPlainObject(value)) return undefined;
  const stats: Record<string, HostStats> = {};
  for (const [host, counts] of Object.entries(value)) {
    if (!isPlainObject(counts)) continue;
    stats[host] = Object.fromEntries(
      STAT_COUNTS.map((k) => [k, isCount(counts[k]) ? counts[k] : 0]),
    ) as unknown as HostStats;
  }
  return stats;
}

/** The event name and the well-typed known fields of one parsed callback line; undefined when it is no Ansible event. */
function ansibleEventFrom(
  parsed: Record<string, unknown>,
): { kind: string; data: Record<string, unknown> } | undefined {
  const kind = parsed.event;
  if (typeof kind !== 'string' || !ANSIBLE_EVENT_NAME.test(kind)) return undefined;
  const data: Record<string, unknown> = {};
  for (const k of STRING_FIELDS) if (typeof parsed[k] === 'string') data[k] = parsed[k];
  for (const k of COUNT_FIELDS) if (isCount(parsed[k])) data[k] = parsed[k];
  for (const k of BOOLEAN_FIELDS) if (typeof parsed[k] === 'boolean') data[k] = parsed[k];
  if (typeof parsed.duration === 'number' && Number.isFinite(parsed.duration)) data.duration = parsed.duration;
  if (parsed.res !== undefined) data.res = parsed.res;
  const stats = statsFrom(parsed.stats);
  if (stats) data.stats = stats;
  return { kind, data };
}

const countLines = (text: string) => text.split('\n').length - 1;

/** Where the sync line starts in `text` (whole lines), or -1. */
function syncLineAt(text: string): number {
  const line = `${SYNC_LINE}\n`;
  if (text.startsWith(line)) return 0;
  const at = text.indexOf(`\n${line}`);
  return at === -1 ? -1 : at + 1;
}

export class RunEventStream {
  private seq = 0;
  /** lines emitted in `log` events so far */
  logLines = 0;
  /** per-host stats from playbook_on_stats, once it came */
  stats: Record<string, HostStats> | undefined;
  /** why a host was unreachable, when it was its host key (from runner_on_unreachable's message) */
  private readonly hostReasons = new Map<string, string>();
  /** lines ansible printed, kept or dropped: the numbering its events' start_line/end_line use */
  private ansibleLines = 0;
  /** Baton's own lines before ansible's first (a credential variable left out): ansible's line n is log line n + this. */
  private leadingOwnLines = 0;
  /** ansible's lines before the sync line: the callback's line n is ansible's line n + this */
  private syncOffset = 0;
  private synced: boolean;
  /** after the cap, the start of a line not yet ended (only while the sync line is awaited); null: not the sync line */
  private droppedTail: string | null = '';
  private logBytes = 0;
  private logCapped = false;
  private partialLine = '';
  private readonly decoder = new StringDecoder('utf8');
  private readonly eventLines: BoundedLineReader;
  private pending: PendingAnsibleEvent[] = [];
  /** [from, to] replacements (private paths) applied after the secrets, longest first */
  private replacements: Array<[string, string]> = [];

  private readonly secrets: string[];

  constructor(
    private readonly runId: string,
    private readonly onEvent: (event: RunEvent) => void,
    secrets: string[],
    private readonly now: () => Date,
    private readonly limits: RunEventStreamLimits,
    options: RunEventStreamOptions = {},
  ) {
    // Longest first: a secret that contains a shorter one must be masked whole, not around the shorter one.
    this.secrets = [...secrets].sort((a, b) => b.length - a.length);
    this.synced = !options.awaitSyncLine;
    this.eventLines = new BoundedLineReader(limits.maxEventLineBytes ?? DEFAULT_MAX_EVENT_LINE_BYTES, {
      line: (text) => {
        if (text.trim()) this.acceptAnsibleEvent(text);
      },
      oversize: (head, bytes) => this.acceptUnreadable(head, { reason: 'event_line_too_long', bytes }),
    });
  }

  /** Whether the log was cut at the output limit (the run records `output_truncated`). */
  get outputTruncated(): boolean {
    return this.logCapped;
  }

  /** From now on every string of every event shows `to` where it had `from` (the run directory's paths). */
  replacePaths(pairs: Array<[string, string]>): void {
    this.replacements = [...this.replacements, ...pairs.filter(([from]) => from.length > 1)].sort(
      (a, b) => b[0].length - a[0].length,
    );
  }

  private emit(kind: string, data: Record<string, unknown>): void {
    this.onEvent({ run_id: this.runId, seq: ++this.seq, ts: this.now().toISOString(), kind, data });
  }

  private redact(text: string): string {
    // PostgreSQL cannot store U+0000 in text or jsonb; nothing legitimate prints it.
    let out = text.includes('\0') ? text.replaceAll('\0', '') : text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    for (const [from, to] of this.replacements) if (out.includes(from)) out = out.split(from).join(to);
    return out;
  }

  /** Masks secrets in every string (keys included) of a parsed event, so JSON escaping cannot hide one. */
  private redactValue(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((v) => this.redactValue(v));
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.redact(k), this.redactValue(v)]));
    }
    return value;
  }

  status(data: Record<string, unknown>): void {
    this.emit('status', data);
  }

  private emitLog(text: string, extra: { output_truncated?: true } = {}): void {
    const lines = countLines(text);
    const data: LogEventData = {
      text: this.redact(text),
      start_line: this.logLines + 1,
      end_line: this.logLines + 1 + lines,
    };
    this.logLines += lines;
    this.emit('log', { ...data, ...extra });
  }

  /** Complete lines of ansible's output; the callback's sync line is noted and left out. */
  private ansibleOutput(text: string): void {
    const at = this.synced ? -1 : syncLineAt(text);
    if (at === -1) return this.keptOrCounted(text);
    if (at > 0) this.keptOrCounted(text.slice(0, at));
    this.markSynced();
    const rest = text.slice(at + SYNC_LINE.length + 1);
    if (rest) this.keptOrCounted(rest);
  }

  private markSynced(): void {
    this.synced = true;
    this.syncOffset = this.ansibleLines;
    this.releaseEventsUpTo(this.ansibleLines);
  }

  /** Complete lines of ansible's output: into the log while it is under its cap, then only counted. */
  private keptOrCounted(text: string): void {
    if (!this.logCapped) {
      const bytes = Buffer.byteLength(text);
      if (this.logBytes + bytes <= this.limits.maxLogBytes) {
        this.logBytes += bytes;
        this.emitLog(text);
      } else {
        // The whole lines that still fit, then the notice; nothing of ansible's output after that.
        let kept = '';
        for (const line of text.split(/(?<=\n)/)) {
          const size = Buffer.byteLength(line);
          if (this.logBytes + size > this.limits.maxLogBytes) break;
          this.logBytes += size;
          kept += line;
        }
        if (kept) this.emitLog(kept);
        this.capLog();
      }
    }
    this.ansibleLines += countLines(text);
    this.releaseEventsUpTo(this.ansibleLines);
  }

  /** The one notice where the log stops; it carries `output_truncated`, which the ingester records on the run. */
  private capLog(): void {
    this.logCapped = true;
    if (this.ansibleLines === 0 && this.partialLine === '') this.leadingOwnLines += 1;
    this.emitLog(outputTruncatedLine(this.limits.maxLogBytes), { output_truncated: true });
  }

  /**
   * Ansible's output after the cap: only counted, however long a line grows. Until the sync line came, a line's
   * start is held, but never more than the sync line's length of it.
   */
  private dropOutput(text: string): void {
    if (this.synced) {
      this.ansibleLines += countLines(text);
      this.releaseEventsUpTo(this.ansibleLines);
      return;
    }
    const lines = text.split('\n');
    lines[0] = this.droppedTail === null ? `\0${lines[0]}` : this.droppedTail + lines[0];
    const tail = lines.pop()!;
    for (const line of lines) {
      if (!this.synced && line === SYNC_LINE) this.markSynced();
      else {
        this.ansibleLines += 1;
        this.releaseEventsUpTo(this.ansibleLines);
      }
    }
    this.droppedTail = tail.length <= SYNC_LINE.length ? tail : null;
  }

  /** A chunk of ansible's stdout: complete lines go out at once, the rest waits for its newline. */
  stdout(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    if (this.logCapped) return this.dropOutput(text);
    const all = this.partialLine + text;
    const cut = all.lastIndexOf('\n') + 1;
    this.partialLine = all.slice(cut);
    if (cut > 0) this.ansibleOutput(all.slice(0, cut));
    // A line that can no longer fit is not buffered until its newline: it could be endless.
    if (!this.logCapped && this.logBytes + this.partialLine.length > this.limits.maxLogBytes) this.capLog();
    if (this.logCapped) {
      // From here on dropOutput reads stdout; it holds no more of this line than could be the sync line.
      this.droppedTail = this.partialLine.length <= SYNC_LINE.length ? this.partialLine : null;
      this.partialLine = '';
    }
  }

  /** A line of Baton's own (a refusal, a cancel notice) appended to the run's log; never dropped. */
  ownLogLine(line: string): void {
    if (this.ansibleLines === 0 && this.partialLine === '') this.leadingOwnLines += 1;
    this.emitLog(`${line}\n`);
  }

  /** A chunk of the callback plugin's JSON lines. */
  ansibleEvents(chunk: Buffer): void {
    this.eventLines.push(chunk);
  }

  private acceptAnsibleEvent(line: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // A torn line (ansible killed mid-write), a bare NaN, or a project plugin's garbage: its fields, if any.
      return this.acceptUnreadable(line, { reason: 'invalid_json', bytes: Buffer.byteLength(line) });
    }
    if (isPlainObject(parsed)) this.acceptParsed(parsed);
  }

  /** A line read only in part: its event with the fields before `res` and a note why nothing else is there. */
  private acceptUnreadable(head: string, note: TruncatedNote): void {
    const fields = fieldsBeforeRes(head);
    if (fields) this.acceptParsed(fields, note);
  }

  private acceptParsed(parsed: Record<string, unknown>, note?: TruncatedNote): void {
    const event = ansibleEventFrom(parsed);
    if (!event) return;
    if (note) event.data.truncated = note;
    // The plugin caps `res` already; this holds whatever reaches us, before the (costly) masking.
    if (event.data.res !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(event.data.res));
      if (bytes > this.limits.maxEventResBytes) event.data.res = { truncated: true, bytes };
    }
    const data = this.redactValue(event.data) as Record<string, unknown>;
    if (event.kind === 'playbook_on_stats' && data.stats) this.stats = data.stats as Record<string, HostStats>;
    if (event.kind === 'runner_on_unreachable' && typeof data.host === 'string') {
      const res = data.res as { msg?: unknown } | undefined;
      const refusal = typeof res?.msg === 'string' ? hostKeyRefusal(res.msg) : undefined;
      if (refusal) this.hostReasons.set(data.host, refusal);
    }
    const endLine = typeof data.end_line === 'number' ? data.end_line : 0;
    this.pending.push({ kind: event.kind, data, endLine });
    this.releaseEventsUpTo(this.ansibleLines);
  }

  /**
   * Emits, in arrival order, the waiting events whose stdout lines (before end_line) are all out: in log line
   * numbers, and past the cap without their payload. Before the sync line nothing is known to be out but at the end.
   */
  private releaseEventsUpTo(linesOut: number): void {
    if (!this.synced && linesOut !== Number.POSITIVE_INFINITY) return;
    while (this.pending.length > 0 && this.syncOffset + this.pending[0]!.endLine - 1 <= linesOut) {
      const { kind, data } = this.pending.shift()!;
      const shift = this.leadingOwnLines + this.syncOffset;
      for (const k of ['start_line', 'end_line'] as const) if (typeof data[k] === 'number') data[k] += shift;
      if (this.logCapped) this.withoutPayload(data);
      this.emit(kind, data);
    }
  }

  /**
   * An event released after the cap keeps its metadata: no `res`, and no line range (its lines were not kept; the
   * ingester drops ranges past a cut too, as its own cut shifts the numbering).
   */
  private withoutPayload(data: Record<string, unknown>): void {
    if (data.res !== undefined) {
      delete data.res;
      data.truncated ??= { reason: 'output_limit' } satisfies TruncatedNote;
    }
    delete data.start_line;
    delete data.end_line;
  }

  /** The stats with each host's known unreachable reason (`host key changed`…) beside its counts. */
  statsWithReasons(): Record<string, HostStats> | undefined {
    if (!this.stats) return undefined;
    const out: Record<string, HostStats> = {};
    for (const [host, counts] of Object.entries(this.stats)) {
      const reason = counts.unreachable > 0 ? this.hostReasons.get(host) : undefined;
      out[host] = reason ? { ...counts, reason } : counts;
    }
    return out;
  }

  /** Ansible is gone: the last unterminated line and every waiting event go out. */
  flush(): void {
    const rest = this.partialLine + this.decoder.end();
    this.partialLine = '';
    if (rest && !this.logCapped) this.ansibleOutput(`${rest}\n`);
    this.eventLines.end();
    this.releaseEventsUpTo(Number.POSITIVE_INFINITY);
  }
}
