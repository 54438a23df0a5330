import { describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import { RunEventStream, type RunEventStreamLimits } from './run-event-stream.js';

const NOW = () => new Date('2030-01-01T00:00:00Z');

function stream(limits: Partial<RunEventStreamLimits> = {}, secrets: string[] = []) {
  const events: RunEvent[] = [];
  const s = new RunEventStream('run_x', (e) => events.push(e), secrets, NOW, { maxLogBytes: 1_000_000, maxEventResBytes: 1_000_000, ...limits });
  const log = () => events.filter((e) => e.kind === 'log').map((e) => e.data.text as string).join('');
  const ansibleEvent = (record: Record<string, unknown>) => s.ansibleEvents(Buffer.from(`${JSON.stringify(record)}\n`));
  return { s, events, log, ansibleEvent };
}

describe('RunEventStream', () => {
  it('replaces a res larger than maxEventResBytes by its serialized size, and keeps a smaller one', () => {
    const { events, ansibleEvent } = stream({ maxEventResBytes: 100 });
    const big = { stdout: 'é'.repeat(60) };
    ansibleEvent({ event: 'runner_on_ok', end_line: 1, res: big });
    ansibleEvent({ event: 'runner_on_ok', end_line: 1, res: { stdout: 'small' } });
    expect(events.map((e) => e.data.res)).toEqual([{ truncated: true, bytes: Buffer.byteLength(JSON.stringify(big)) }, { stdout: 'small' }]);
  });

  it('keeps whole lines up to maxLogBytes, adds one notice, and still releases events waiting for later lines', () => {
    const { s, events, log, ansibleEvent } = stream({ maxLogBytes: 10 });
    ansibleEvent({ event: 'late', end_line: 5 }); // printed after line 4: waits for it
    s.stdout(Buffer.from('aaaa\nbbbb\ncccc\n'));
    expect(events.map((e) => e.kind)).toEqual(['log', 'log']);
    expect(log()).toBe('aaaa\nbbbb\nbaton: the log exceeded 10 bytes; further output is dropped (the run goes on)\n');
    s.stdout(Buffer.from('dddd\n'));
    expect(events.map((e) => e.kind)).toEqual(['log', 'log', 'late']);
    s.stdout(Buffer.from('eeee\n'.repeat(100)));
    s.ownLogLine('baton: the run was canceled');
    s.flush();
    expect(log()).toBe('aaaa\nbbbb\nbaton: the log exceeded 10 bytes; further output is dropped (the run goes on)\nbaton: the run was canceled\n');
  });

  it('does not buffer an endless line past the cap', () => {
    const { s, log } = stream({ maxLogBytes: 50 });
    s.stdout(Buffer.from('ok\n'));
    for (let i = 0; i < 10; i++) s.stdout(Buffer.from('x'.repeat(20)));
    expect(log()).toBe('ok\nbaton: the log exceeded 50 bytes; further output is dropped (the run goes on)\n');
    s.stdout(Buffer.from('\nmore\n'));
    s.flush();
    expect(log()).toBe('ok\nbaton: the log exceeded 50 bytes; further output is dropped (the run goes on)\n');
  });

  it('keeps a character split across two chunks whole', () => {
    const { s, log } = stream();
    const bytes = Buffer.from('grüße\n');
    s.stdout(bytes.subarray(0, 3)); // cuts ü in two
    s.stdout(bytes.subarray(3));
    expect(log()).toBe('grüße\n');
  });

  it('keeps a character split across two reads of the callback pipe whole', () => {
    const { s, events } = stream();
    const bytes = Buffer.from(`${JSON.stringify({ event: 'runner_on_ok', end_line: 1, task: 'grüße' })}\n`);
    const cut = bytes.indexOf(Buffer.from('ü')) + 1; // inside ü's two bytes
    s.ansibleEvents(bytes.subarray(0, cut));
    s.ansibleEvents(bytes.subarray(cut));
    expect(events.map((e) => e.data.task)).toEqual(['grüße']);
  });

  it('shows private paths as given in every string of every event, after masking secrets', () => {
    const { s, events, log, ansibleEvent } = stream({}, ['hunter22']);
    s.replacePaths([['/tmp/baton-run-1/project/', ''], ['/tmp/baton-run-1/', ''], ['/tmp/baton-run-1', '.']]);
    s.stdout(Buffer.from("ERROR! in '/tmp/baton-run-1/project/site.yml': hunter22 at /tmp/baton-run-1/inventory.ini cwd /tmp/baton-run-1\n"));
    ansibleEvent({ event: 'runner_on_ok', end_line: 2, res: { '/tmp/baton-run-1/project/x': ['/tmp/baton-run-1'] } });
    expect(log()).toBe("ERROR! in 'site.yml': ******** at inventory.ini cwd .\n");
    expect(events.at(-1)!.data.res).toEqual({ x: ['.'] });
  });
});
