// The event stream's bounds: the callback pipe read with a bounded buffer, lines that are no JSON, events past the
// output limit, and the sync line that fixes line numbers whatever ansible printed before loading the callback.
import { describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import { RunEventStream, type RunEventStreamLimits, SYNC_LINE } from './run-event-stream.js';
import { BoundedLineReader, OVERSIZE_HEAD_BYTES } from './run-event-stream.lines.js';

const NOW = () => new Date('2030-01-01T00:00:00Z');

function stream(limits: Partial<RunEventStreamLimits> = {}, awaitSyncLine = false) {
  const events: RunEvent[] = [];
  const s = new RunEventStream(
    'run_x',
    (e) => events.push(e),
    [],
    NOW,
    { maxLogBytes: 1_000_000, maxEventResBytes: 1_000_000, ...limits },
    { awaitSyncLine },
  );
  const log = () =>
    events
      .filter((e) => e.kind === 'log')
      .map((e) => e.data.text as string)
      .join('');
  return { s, events, log };
}

/** A callback line as our plugin writes it: Python's default separators, `res` last. */
const pluginLine = (fields: Record<string, unknown>, res: string) =>
  `${JSON.stringify(fields, null, 0).replace(/,"/g, ', "').replace(/":/g, '": ').slice(0, -1)}, "res": ${res}}\n`;

describe('BoundedLineReader', () => {
  it('never holds more than the bound of an endless line, and resyncs at the next newline', () => {
    const lines: string[] = [];
    const oversize: Array<{ head: string; bytes: number }> = [];
    const reader = new BoundedLineReader(1_000, {
      line: (l) => lines.push(l),
      oversize: (head, bytes) => oversize.push({ head, bytes }),
    });
    reader.push(Buffer.from('first\n{"a":'));
    const chunk = Buffer.alloc(64 * 1024, 'x');
    for (let i = 0; i < 200; i++) {
      reader.push(chunk); // 12.5 MiB of one line
      // what it holds: the head of the line only, not the line
      const held = reader as unknown as { parts: Buffer[]; oversizeHead?: Buffer };
      const bytesHeld = held.parts.reduce((n, b) => n + b.length, 0) + (held.oversizeHead?.length ?? 0);
      expect(bytesHeld).toBeLessThanOrEqual(1_000);
    }
    reader.push(Buffer.from('tail\nnext\n'));
    reader.push(Buffer.from('unterminated'));
    reader.end();
    expect(lines).toEqual(['first', 'next', 'unterminated']);
    expect(oversize).toHaveLength(1);
    expect(oversize[0]!.bytes).toBe(5 + 200 * chunk.length + 4);
    expect(oversize[0]!.head).toBe(`{"a":${'x'.repeat(995)}`);
  });

  it('keeps a head of at most OVERSIZE_HEAD_BYTES of a line past a large bound', () => {
    const oversize: string[] = [];
    const reader = new BoundedLineReader(1 << 20, { line: () => {}, oversize: (head) => oversize.push(head) });
    reader.push(Buffer.alloc(2 << 20, 'y'));
    reader.push(Buffer.from('\n'));
    expect(oversize.map((h) => h.length)).toEqual([OVERSIZE_HEAD_BYTES]);
  });
});

describe('RunEventStream callback lines', () => {
  it('turns a line past maxEventLineBytes into its event with every field but res, and a truncated note', () => {
    const { s, events } = stream({ maxEventLineBytes: 4_096 });
    const fields = { event: 'runner_on_ok', counter: 4, start_line: 1, end_line: 1, host: 'web1', task: 'big' };
    const line = pluginLine(fields, `{"stdout": "${'z'.repeat(100_000)}"}`);
    // in pieces, as a pipe delivers it
    for (let i = 0; i < line.length; i += 5_000) s.ansibleEvents(Buffer.from(line.slice(i, i + 5_000)));
    s.ansibleEvents(Buffer.from(pluginLine({ ...fields, counter: 5, task: 'small' }, '{"stdout": "ok"}')));
    expect(events.map((e) => e.data)).toEqual([
      {
        counter: 4,
        start_line: 1,
        end_line: 1,
        host: 'web1',
        task: 'big',
        truncated: { reason: 'event_line_too_long', bytes: Buffer.byteLength(line) - 1 },
      },
      { counter: 5, start_line: 1, end_line: 1, host: 'web1', task: 'small', res: { stdout: 'ok' } },
    ]);
  });

  it('keeps the event of a line that is no JSON (a bare NaN from an older plugin), without its res', () => {
    const { events, s } = stream();
    const line = pluginLine({ event: 'runner_on_ok', end_line: 1, task: 'nan' }, '{"x": NaN}');
    s.ansibleEvents(Buffer.from(line));
    s.ansibleEvents(Buffer.from('garbage from a project plugin\n{"event": "runner_on_ok", "task": "torn'));
    s.flush();
    expect(events.map((e) => e.data)).toEqual([
      { end_line: 1, task: 'nan', truncated: { reason: 'invalid_json', bytes: Buffer.byteLength(line) - 1 } },
    ]);
  });
});

describe('RunEventStream past the output limit', () => {
  it('marks the cap once with output_truncated, then releases events without res and without ranges into the void', () => {
    const { s, events, log } = stream({ maxLogBytes: 12 });
    s.stdout(Buffer.from('line one\n'));
    s.ansibleEvents(
      Buffer.from(`${JSON.stringify({ event: 'runner_on_ok', start_line: 1, end_line: 2, res: { a: 1 } })}\n`),
    );
    s.stdout(Buffer.from('line two is long\nline three\n'));
    s.ansibleEvents(
      Buffer.from(`${JSON.stringify({ event: 'runner_on_ok', start_line: 2, end_line: 4, res: { a: 2 } })}\n`),
    );
    s.ansibleEvents(
      Buffer.from(
        `${JSON.stringify({ event: 'playbook_on_stats', start_line: 4, end_line: 4, stats: { h: { ok: 2 } } })}\n`,
      ),
    );
    s.ownLogLine('baton: the run was canceled');
    s.flush();
    expect(s.outputTruncated).toBe(true);
    expect(log()).toBe(
      'line one\nbaton: output truncated: this run printed more than 12 bytes; later output was not stored (the run goes on)\nbaton: the run was canceled\n',
    );
    expect(events.filter((e) => e.data.output_truncated === true).map((e) => e.seq)).toEqual([3]);
    expect(events.map((e) => [e.kind, e.data])).toEqual([
      ['log', { text: 'line one\n', start_line: 1, end_line: 2 }],
      ['runner_on_ok', { start_line: 1, end_line: 2, res: { a: 1 } }],
      ['log', expect.objectContaining({ start_line: 2, end_line: 3, output_truncated: true })],
      ['runner_on_ok', { truncated: { reason: 'output_limit' } }],
      ['playbook_on_stats', { stats: { h: expect.objectContaining({ ok: 2 }) } }],
      ['log', { text: 'baton: the run was canceled\n', start_line: 3, end_line: 4 }],
    ]);
    expect(s.stats).toEqual({ h: expect.objectContaining({ ok: 2 }) });
  });
});

describe('RunEventStream sync line', () => {
  it('drops the sync line from the log and counts event lines from it', () => {
    const { s, events, log } = stream({}, true);
    s.stdout(Buffer.from('Using ansible.cfg as config file\nansible [core 2.14]\n'));
    // The event comes before stdout has shown where the callback started: it waits.
    s.ansibleEvents(
      Buffer.from(`${JSON.stringify({ event: 'playbook_on_play_start', start_line: 1, end_line: 3 })}\n`),
    );
    expect(events.filter((e) => e.kind !== 'log')).toEqual([]);
    s.stdout(Buffer.from(`${SYNC_LINE}\n\nPLAY [all]\n`));
    expect(log()).toBe('Using ansible.cfg as config file\nansible [core 2.14]\n\nPLAY [all]\n');
    expect(events.find((e) => e.kind === 'playbook_on_play_start')!.data).toEqual({ start_line: 3, end_line: 5 });
  });

  it('finds the sync line split across chunks, and after the cap too', () => {
    const { s, events } = stream({ maxLogBytes: 5 }, true);
    s.stdout(Buffer.from('0123456789\nabc\n'));
    s.stdout(Buffer.from(SYNC_LINE.slice(0, 7)));
    s.stdout(Buffer.from(`${SYNC_LINE.slice(7)}\nx\n`));
    s.ansibleEvents(Buffer.from(`${JSON.stringify({ event: 'runner_on_ok', start_line: 1, end_line: 2 })}\n`));
    expect(events.map((e) => e.kind)).toEqual(['log', 'runner_on_ok']);
    // a line as long as the sync line that is not it counts as a line
    const other = stream({ maxLogBytes: 5 }, true);
    other.s.stdout(Buffer.from(`0123456789\nX${SYNC_LINE}\n${SYNC_LINE}\ny\n`));
    other.s.ansibleEvents(Buffer.from(`${JSON.stringify({ event: 'runner_on_ok', start_line: 1, end_line: 2 })}\n`));
    expect(other.events.map((e) => e.kind)).toEqual(['log', 'runner_on_ok']);
  });

  it('releases waiting events at the end when no sync line ever came', () => {
    const { s, events } = stream({}, true);
    s.stdout(Buffer.from('ERROR! the playbook could not be read\n'));
    s.ansibleEvents(Buffer.from(`${JSON.stringify({ event: 'playbook_on_start', start_line: 1, end_line: 1 })}\n`));
    expect(events.map((e) => e.kind)).toEqual(['log']);
    s.flush();
    expect(events.map((e) => e.kind)).toEqual(['log', 'playbook_on_start']);
  });
});
