// Turns ansible's two output streams (stdout with the human log, the callback plugin's JSON lines) into one
// ordered sequence of run events with a gap-free `seq` from 1. An ansible event waits until the stdout lines
// it points at (its end_line) have been emitted as `log` events, so a reader sees the log before the event
// that printed it, even though the two arrive on separate pipes.
import type { LogEventData, RunEvent } from '@baton/contracts';

/** One host's counts from ansible's final playbook_on_stats. */
export interface HostStats {
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  skipped: number;
  rescued: number;
  ignored: number;
}

interface PendingAnsibleEvent {
  kind: string;
  data: Record<string, unknown>;
  endLine: number;
}

const REDACTED = '********';

export class RunEventStream {
  private seq = 0;
  /** lines emitted in `log` events so far */
  logLines = 0;
  /** per-host stats from playbook_on_stats, once it came */
  stats: Record<string, HostStats> | undefined;
  private partialLine = '';
  private partialEventLine = '';
  private pending: PendingAnsibleEvent[] = [];

  private readonly secrets: string[];

  constructor(
    private readonly runId: string,
    private readonly onEvent: (event: RunEvent) => void,
    secrets: string[],
    private readonly now: () => Date,
  ) {
    // Longest first: a secret that contains a shorter one must be masked whole, not around the shorter one.
    this.secrets = [...secrets].sort((a, b) => b.length - a.length);
  }

  private emit(kind: string, data: Record<string, unknown>): void {
    this.onEvent({ run_id: this.runId, seq: ++this.seq, ts: this.now().toISOString(), kind, data });
  }

  private redact(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
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
    const lines = text.split('\n').length - 1;
    const data: LogEventData = { text: this.redact(text), start_line: this.logLines + 1, end_line: this.logLines + 1 + lines };
    this.logLines += lines;
    this.emit('log', { ...data });
    this.releaseEventsUpTo(this.logLines);
  }

  /** A chunk of ansible's stdout: complete lines go out at once, the rest waits for its newline. */
  stdout(chunk: Buffer): void {
    const text = this.partialLine + chunk.toString('utf8');
    const cut = text.lastIndexOf('\n') + 1;
    this.partialLine = text.slice(cut);
    if (cut > 0) this.emitLog(text.slice(0, cut));
  }

  /** A line of Baton's own (a refusal, a cancel notice) appended to the run's log. */
  ownLogLine(line: string): void {
    this.emitLog(`${line}\n`);
  }

  /** A chunk of the callback plugin's JSON lines. */
  ansibleEvents(chunk: Buffer): void {
    const text = this.partialEventLine + chunk.toString('utf8');
    const lines = text.split('\n');
    this.partialEventLine = lines.pop()!;
    for (const line of lines) if (line.trim()) this.acceptAnsibleEvent(line);
  }

  private acceptAnsibleEvent(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = this.redactValue(JSON.parse(line)) as Record<string, unknown>;
    } catch {
      return; // only our plugin writes here; a torn line (ansible killed mid-write) carries nothing usable
    }
    const { event, ...data } = record;
    if (typeof event !== 'string' || !event) return;
    if (event === 'playbook_on_stats') this.stats = data.stats as Record<string, HostStats>;
    const endLine = typeof data.end_line === 'number' ? data.end_line : 0;
    this.pending.push({ kind: event, data, endLine });
    this.releaseEventsUpTo(this.logLines);
  }

  /** Emits, in arrival order, the waiting events whose stdout lines (before end_line) are all out. */
  private releaseEventsUpTo(linesOut: number): void {
    while (this.pending.length > 0 && this.pending[0]!.endLine - 1 <= linesOut) {
      const next = this.pending.shift()!;
      this.emit(next.kind, next.data);
    }
  }

  /** Ansible is gone: the last unterminated line and every waiting event go out. */
  flush(): void {
    if (this.partialLine) {
      const rest = this.partialLine;
      this.partialLine = '';
      this.emitLog(`${rest}\n`);
    }
    if (this.partialEventLine.trim()) this.acceptAnsibleEvent(this.partialEventLine);
    this.partialEventLine = '';
    this.releaseEventsUpTo(Number.POSITIVE_INFINITY);
  }
}
