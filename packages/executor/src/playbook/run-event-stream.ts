// Turns ansible's two output streams (stdout with the human log, the callback plugin's JSON lines) into one
// ordered sequence of run events with a gap-free `seq` from 1. An ansible event waits until the stdout lines
// it points at (its end_line) have come out of ansible, so a reader sees the log before the event that printed
// it, even though the two arrive on separate pipes. Secrets and the private run directory's path are masked in
// every string, and the log and each event's `res` are capped so a runaway playbook cannot fill the database.
import { StringDecoder } from 'node:string_decoder';
import type { HostCounts, LogEventData, RunEvent } from '@baton/contracts';
import { hostKeyRefusal } from '../known-hosts/host-trust.js';

/** One host's counts from ansible's final playbook_on_stats: the API's HostCounts, the same shape end to end. */
export type HostStats = HostCounts;

export interface RunEventStreamLimits {
  /** bytes of ansible output kept in the log; the rest is dropped with one notice */
  maxLogBytes: number;
  /** largest serialized `res` of an ansible event; a larger one becomes `{truncated: true, bytes}` */
  maxEventResBytes: number;
}

interface PendingAnsibleEvent {
  kind: string;
  data: Record<string, unknown>;
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
  private logBytes = 0;
  private logCapped = false;
  private partialLine = '';
  private readonly decoder = new StringDecoder('utf8');
  /** The callback's pipe has its own decoder: a character split across two reads must stay whole there too. */
  private readonly eventDecoder = new StringDecoder('utf8');
  private partialEventLine = '';
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
  ) {
    // Longest first: a secret that contains a shorter one must be masked whole, not around the shorter one.
    this.secrets = [...secrets].sort((a, b) => b.length - a.length);
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

  private emitLog(text: string): void {
    const lines = countLines(text);
    const data: LogEventData = {
      text: this.redact(text),
      start_line: this.logLines + 1,
      end_line: this.logLines + 1 + lines,
    };
    this.logLines += lines;
    this.emit('log', { ...data });
  }

  /** Complete lines of ansible's output: into the log while it is under its cap, then only counted. */
  private ansibleOutput(text: string): void {
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

  private capLog(): void {
    this.logCapped = true;
    this.ownLogLine(
      `baton: the log exceeded ${this.limits.maxLogBytes} bytes; further output is dropped (the run goes on)`,
    );
  }

  /** A chunk of ansible's stdout: complete lines go out at once, the rest waits for its newline. */
  stdout(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    if (this.logCapped) {
      // Only the count matters now; no line is kept, however long it grows.
      this.ansibleLines += countLines(text);
      this.releaseEventsUpTo(this.ansibleLines);
      return;
    }
    const all = this.partialLine + text;
    const cut = all.lastIndexOf('\n') + 1;
    this.partialLine = all.slice(cut);
    if (cut > 0) this.ansibleOutput(all.slice(0, cut));
    // A line that can no longer fit is not buffered until its newline: it could be endless.
    if (!this.logCapped && this.logBytes + this.partialLine.length > this.limits.maxLogBytes) {
      this.partialLine = '';
      this.capLog();
    }
  }

  /** A line of Baton's own (a refusal, a cancel notice) appended to the run's log; never dropped. */
  ownLogLine(line: string): void {
    if (this.ansibleLines === 0 && this.partialLine === '') this.leadingOwnLines += 1;
    this.emitLog(`${line}\n`);
  }

  /** A chunk of the callback plugin's JSON lines. */
  ansibleEvents(chunk: Buffer): void {
    const text = this.partialEventLine + this.eventDecoder.write(chunk);
    const lines = text.split('\n');
    this.partialEventLine = lines.pop()!;
    for (const line of lines) if (line.trim()) this.acceptAnsibleEvent(line);
  }

  private acceptAnsibleEvent(line: string): void {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // a torn line (ansible killed mid-write), or a project plugin's garbage: nothing usable
    }
    if (!isPlainObject(parsed)) return;
    const event = ansibleEventFrom(parsed);
    if (!event) return;
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
    for (const k of ['start_line', 'end_line'] as const)
      if (typeof data[k] === 'number') data[k] += this.leadingOwnLines;
    this.pending.push({ kind: event.kind, data, endLine });
    this.releaseEventsUpTo(this.ansibleLines);
  }

  /** Emits, in arrival order, the waiting events whose stdout lines (before end_line) are all out. */
  private releaseEventsUpTo(linesOut: number): void {
    while (this.pending.length > 0 && this.pending[0]!.endLine - 1 <= linesOut) {
      const next = this.pending.shift()!;
      this.emit(next.kind, next.data);
    }
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
    if (this.partialEventLine.trim()) this.acceptAnsibleEvent(this.partialEventLine);
    this.partialEventLine = '';
    this.releaseEventsUpTo(Number.POSITIVE_INFINITY);
  }
}
