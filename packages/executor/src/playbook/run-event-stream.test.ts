import { describe, expect, it } from '@jest/globals';
import type { RunEvent } from '@baton/contracts';
import { RunEventStream, type RunEventStreamLimits, type RunEventStreamOptions } from './run-event-stream.js';

const NOW = () => new Date('2030-01-01T00:00:00Z');

function stream(
  limits: Partial<RunEventStreamLimits> = {},
  secrets: string[] = [],
  options: RunEventStreamOptions = {},
) {
  const events: RunEvent[] = [];
  const s = new RunEventStream(
    'run_x',
    (e) => events.push(e),
    secrets,
    NOW,
    { maxLogBytes: 1_000_000, maxEventResBytes: 1_000_000, ...limits },
    options,
  );
  const log = () =>
    events
      .filter((e) => e.kind === 'log')
      .map((e) => e.data.text as string)
      .join('');
  const ansibleEvent = (record: Record<string, unknown>) => s.ansibleEvents(Buffer.from(`${JSON.stringify(record)}\n`));
  return { s, events, log, ansibleEvent };
}

describe('RunEventStream', () => {
  it('replaces a res larger than maxEventResBytes by its serialized size, and keeps a smaller one', () => {
    const { events, ansibleEvent } = stream({ maxEventResBytes: 100 });
    const big = { stdout: 'é'.repeat(60) };
    ansibleEvent({ event: 'runner_on_ok', end_line: 1, res: big });
    ansibleEvent({ event: 'runner_on_ok', end_line: 1, res: { stdout: 'small' } });
    expect(events.map((e) => e.data.res)).toEqual([
      { truncated: true, bytes: Buffer.byteLength(JSON.stringify(big)) },
      { stdout: 'small' },
    ]);
  });

  it('keeps whole lines up to maxLogBytes, adds one notice, and still releases events waiting for later lines', () => {
    const { s, events, log, ansibleEvent } = stream({ maxLogBytes: 10 });
    ansibleEvent({ event: 'runner_on_ok', end_line: 5 }); // printed after line 4: waits for it
    s.stdout(Buffer.from('aaaa\nbbbb\ncccc\n'));
    expect(events.map((e) => e.kind)).toEqual(['log', 'log']);
    expect(log()).toBe(
      'aaaa\nbbbb\nbaton: output truncated: this run printed more than 10 bytes; later output was not stored (the run goes on)\n',
    );
    s.stdout(Buffer.from('dddd\n'));
    expect(events.map((e) => e.kind)).toEqual(['log', 'log', 'runner_on_ok']);
    s.stdout(Buffer.from('eeee\n'.repeat(100)));
    s.ownLogLine('baton: the run was canceled');
    s.flush();
    expect(log()).toBe(
      'aaaa\nbbbb\nbaton: output truncated: this run printed more than 10 bytes; later output was not stored (the run goes on)\nbaton: the run was canceled\n',
    );
  });

  it('does not buffer an endless line past the cap', () => {
    const { s, log } = stream({ maxLogBytes: 50 });
    s.stdout(Buffer.from('ok\n'));
    for (let i = 0; i < 10; i++) s.stdout(Buffer.from('x'.repeat(20)));
    expect(log()).toBe(
      'ok\nbaton: output truncated: this run printed more than 50 bytes; later output was not stored (the run goes on)\n',
    );
    s.stdout(Buffer.from('\nmore\n'));
    s.flush();
    expect(log()).toBe(
      'ok\nbaton: output truncated: this run printed more than 50 bytes; later output was not stored (the run goes on)\n',
    );
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
    s.replacePaths([
      ['/tmp/baton-run-1/project/', ''],
      ['/tmp/baton-run-1/', ''],
      ['/tmp/baton-run-1', '.'],
    ]);
    s.stdout(
      Buffer.from(
        "ERROR! in '/tmp/baton-run-1/project/site.yml': hunter22 at /tmp/baton-run-1/inventory.ini cwd /tmp/baton-run-1\n",
      ),
    );
    ansibleEvent({ event: 'runner_on_ok', end_line: 2, res: { '/tmp/baton-run-1/project/x': ['/tmp/baton-run-1'] } });
    expect(log()).toBe("ERROR! in 'site.yml': ******** at inventory.ini cwd .\n");
    expect(events.at(-1)!.data.res).toEqual({ x: ['.'] });
  });

  it('accepts from the callback pipe only Ansible event names: a forged status or log never comes out', () => {
    const { events, ansibleEvent } = stream();
    for (const event of [
      'status',
      'log',
      'end',
      'Runner_on_ok',
      'runner_on_ok ',
      'playbook_on_',
      'runner_on-ok',
      'x_runner_on_ok',
      'playbook_on_stats2',
      '',
      7,
      null,
    ]) {
      ansibleEvent({ event, end_line: 1, data: { status: 'finished', conclusion: 'succeeded' }, text: 'forged\n' });
    }
    ansibleEvent({ end_line: 1, task: 'no name' });
    expect(events).toEqual([]);
    ansibleEvent({ event: 'runner_item_on_ok', end_line: 1 });
    ansibleEvent({ event: 'playbook_on_no_hosts_matched', end_line: 1 });
    expect(events.map((e) => e.kind)).toEqual(['runner_item_on_ok', 'playbook_on_no_hosts_matched']);
  });

  it('keeps only the known fields, each of its type, and drops the rest', () => {
    const { s, events, ansibleEvent } = stream();
    ansibleEvent({
      event: 'runner_on_ok',
      uuid: 'u-1',
      counter: 3,
      start_line: 1,
      end_line: 1,
      host: 'web1',
      task: 'ping',
      changed: true,
      duration: 0.25,
      res: { ping: 'pong' },
      status: 'finished',
      conclusion: 'succeeded',
      kind: 'status',
      extra: 'x',
    });
    expect(events.at(-1)!.data).toEqual({
      uuid: 'u-1',
      counter: 3,
      start_line: 1,
      end_line: 1,
      host: 'web1',
      task: 'ping',
      changed: true,
      duration: 0.25,
      res: { ping: 'pong' },
    });
    ansibleEvent({
      event: 'runner_on_ok',
      uuid: 5,
      host: { name: 'web1' },
      task: ['ping'],
      counter: -1,
      start_line: 1.5,
      end_line: 2 ** 31,
      changed: 'yes',
      no_log: 1,
      duration: 'long',
    });
    expect(events.at(-1)!.data).toEqual({});
    // A huge or fractional end_line cannot hold an event back forever: dropped, the event goes out at once.
    ansibleEvent({ event: 'runner_on_failed', end_line: 1e300 });
    expect(events.at(-1)!.kind).toBe('runner_on_failed');
    s.flush();
  });

  it('takes stats only as host → counts, and strips U+0000 from every string, keys and log included', () => {
    const { s, events, log, ansibleEvent } = stream();
    ansibleEvent({
      event: 'playbook_on_stats',
      end_line: 1,
      stats: { web1: { ok: 2, failed: 'many', changed: -1, unreachable: 1.5 }, 'db\u00001': { ok: 1 }, bad: 'x' },
    });
    const zeros = { ok: 0, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 };
    expect(events.at(-1)!.data.stats).toEqual({ web1: { ...zeros, ok: 2 }, db1: { ...zeros, ok: 1 } });
    expect(s.stats).toEqual({ web1: { ...zeros, ok: 2 }, db1: { ...zeros, ok: 1 } });
    ansibleEvent({ event: 'playbook_on_stats', end_line: 1, stats: ['web1'] });
    expect(events.at(-1)!.data.stats).toBeUndefined();
    expect(s.stats).toEqual({ web1: { ...zeros, ok: 2 }, db1: { ...zeros, ok: 1 } });
    ansibleEvent({ event: 'runner_on_ok', end_line: 1, task: 'a\u0000b', res: { 'k\u0000ey': ['v\u0000al'] } });
    expect(events.at(-1)!.data).toEqual({ end_line: 1, task: 'ab', res: { key: ['val'] } });
    s.stdout(Buffer.from('nul\u0000 here\n'));
    expect(log()).toBe('nul here\n');
    expect(JSON.stringify(events)).not.toContain('\\u0000');
  });

  it("counts Baton's own lines before ansible's first into the line ranges of ansible's events", () => {
    const { s, events, ansibleEvent } = stream();
    s.ownLogLine('baton: a notice');
    s.ownLogLine('baton: another');
    s.stdout(Buffer.from('\nPLAY [all]\n'));
    ansibleEvent({ event: 'playbook_on_play_start', start_line: 1, end_line: 3 });
    s.ownLogLine('baton: the run was canceled'); // after ansible's lines: moves nothing
    ansibleEvent({ event: 'playbook_on_stats', start_line: 3, end_line: 3 });
    const play = events.find((e) => e.kind === 'playbook_on_play_start')!;
    expect(play.data).toMatchObject({ start_line: 3, end_line: 5 });
    const logLines = events
      .filter((e) => e.kind === 'log')
      .map((e) => e.data.text as string)
      .join('')
      .split('\n');
    expect(logLines.slice(2, 4)).toEqual(['', 'PLAY [all]']);
    expect(events.find((e) => e.kind === 'playbook_on_stats')!.data).toMatchObject({ start_line: 5, end_line: 5 });
  });
});
