// The run's output with the real ansible-playbook: the output limit, JSON for NaN and infinities, and line ranges
// that point at the right log lines whatever the verbosity.
import { afterAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { inlineBundle, play, runCollecting, tempDir } from '../testing/index.js';
import type { RunPlaybookOptions } from './run-playbook.js';
import { SYNC_LINE } from './run-event-stream.js';

const workRoot = tempDir('baton-output-test');
afterAll(() => fs.rmSync(workRoot, { recursive: true, force: true }));

const runIn = (bundle: RunBundle, opts: Partial<RunPlaybookOptions> = {}) =>
  runCollecting(bundle, { workRoot, ...opts });

const isResult = (e: RunEvent) => e.kind.startsWith('runner_on_');

/** The log lines [start_line, end_line) of an event, from the log as a reader of the stored log sees it. */
function linesOf(log: string, e: RunEvent): string[] {
  const lines = log.split('\n');
  return lines.slice((e.data.start_line as number) - 1, (e.data.end_line as number) - 1);
}

describe('runPlaybook output limit', () => {
  it('keeps the log up to maxLogBytes, then one marker; later events keep only their metadata; the run goes on', async () => {
    const tasks =
      '    - debug: msg="{{ range(0, 400) | list }}"\n' +
      '    - command: echo after-the-cap\n' +
      '    - debug: msg=last\n';
    const { outcome, events, log } = await runIn(inlineBundle(play(tasks)), { maxLogBytes: 3_000 });
    expect(outcome).toMatchObject({ conclusion: 'succeeded', outputTruncated: true });
    const marker =
      'baton: output truncated: this run printed more than 3000 bytes; later output was not stored (the run goes on)\n';
    const parts = log.split(marker);
    expect(parts).toHaveLength(2);
    expect(Buffer.byteLength(parts[0]!)).toBeLessThanOrEqual(3_000);
    expect(Buffer.byteLength(parts[0]!)).toBeGreaterThan(2_000);
    expect(parts[1]).toBe('');
    expect(log).not.toContain('PLAY RECAP');
    expect(log).not.toContain(SYNC_LINE);
    const markerEvent = events.find((e) => e.kind === 'log' && e.data.output_truncated === true)!;
    expect(markerEvent.data.text).toBe(marker);
    // Every event goes on, gap-free; those after the cap without their result, which the log no longer holds.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const after = events.filter((e) => e.seq > markerEvent.seq);
    const results = after.filter(isResult);
    // the first debug printed past the cap itself; the two tasks after it too
    expect(results.map((e) => e.data.task)).toEqual(['debug', 'command', 'debug']);
    for (const e of results) {
      expect(e.data).toMatchObject({ host: 'localhost', truncated: { reason: 'output_limit' } });
      expect(e.data).not.toHaveProperty('res');
      expect(e.data).not.toHaveProperty('start_line');
    }
    expect(results[1]!.data.changed).toBe(true);
    expect(after.find((e) => e.kind === 'playbook_on_stats')!.data.stats).toMatchObject({ localhost: { ok: 3 } });
    expect(events.at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'succeeded', output_truncated: true });
    const logEvents = events.filter((e) => e.kind === 'log');
    logEvents.forEach((e, i) => expect(e.data.start_line).toBe(i === 0 ? 1 : logEvents[i - 1]!.data.end_line));
  }, 180_000);

  it('writes NaN and infinities in a module result as strings, so the event is valid JSON and arrives', async () => {
    const bundle = inlineBundle(
      play(
        '    - debug: var=x\n    - debug: var=up\n    - debug: var=down\n    - set_fact: z="{{ x }}"\n',
        '  vars:\n    x: !!float .nan\n    up: !!float .inf\n    down: !!float -.inf\n',
      ),
    );
    const { outcome, events } = await runIn(bundle);
    expect(outcome).toMatchObject({ conclusion: 'succeeded', outputTruncated: false });
    const results = events.filter(isResult);
    expect(results.map((e) => e.data.res)).toEqual([
      expect.objectContaining({ x: 'NaN' }),
      expect.objectContaining({ up: 'Infinity' }),
      expect.objectContaining({ down: '-Infinity' }),
      expect.objectContaining({ ansible_facts: { z: 'NaN' } }),
    ]);
    expect(results.every((e) => e.data.truncated === undefined)).toBe(true);
  }, 180_000);
});

describe('runPlaybook line ranges', () => {
  // -v prints the config file line, -vvv versions and inventory parsing, all before ansible loads the callback.
  it.each([0, 1, 3])(
    'point at the lines each event printed with verbosity %i',
    async (verbosity) => {
      const tasks = '    - debug: msg=first-task\n    - command: echo second-task\n';
      const { outcome, events, log } = await runIn(inlineBundle(play(tasks), verbosity ? { verbosity } : {}));
      expect(outcome.conclusion).toBe('succeeded');
      expect(log).not.toContain(SYNC_LINE);
      const starts = events.filter((e) => e.kind === 'playbook_on_task_start');
      expect(starts.map((e) => linesOf(log, e).filter((l) => l.startsWith('TASK ['))).map((l) => l[0])).toEqual([
        expect.stringMatching(/^TASK \[debug\]/),
        expect.stringMatching(/^TASK \[command\]/),
      ]);
      const [first, second] = events.filter(isResult);
      expect(linesOf(log, first!).join('\n')).toContain('"msg": "first-task"');
      expect(linesOf(log, second!).join('\n')).toMatch(/changed: \[localhost\]/);
      expect(linesOf(log, second!).join('\n')).not.toContain('TASK [');
      const stats = events.find((e) => e.kind === 'playbook_on_stats')!;
      expect(linesOf(log, stats).join('\n')).toContain('PLAY RECAP');
    },
    180_000,
  );
});
