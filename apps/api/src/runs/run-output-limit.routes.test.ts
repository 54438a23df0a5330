// The run output limit end to end in embedded mode: a real playbook printing past a small limit, read back
// through the API (the run, its log by line and byte, its events), on both databases.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { outputTruncatedLine, type Run, type RunEvent } from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness, runFinished } from '../testing/harness.js';

const LIMIT = 64 * 1024;
const INVENTORY = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
/** About 120 KB of log: 8,000 lines of a list, then two more tasks whose output is past the limit. */
const LOUD =
  '- hosts: all\n  gather_facts: false\n  tasks:\n' +
  '    - command: seq 1 8000\n      register: out\n' +
  '    - debug: var=out.stdout_lines\n' +
  '    - command: echo after-the-limit\n' +
  '    - debug: msg=last-task\n';
const QUIET = '- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg=quiet\n';

describe.each(DIALECTS)('the run output limit on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 }, outputLimitBytes: LIMIT });
  });
  afterAll(() => h.close());

  const submit = async (playbook: string): Promise<Run> => {
    const res = await h.http.post('/v1/runs').set(bearer(h.admin.token)).send({ playbook, inventory: INVENTORY });
    expect(res.status).toBe(201);
    return runFinished(h, res.body.id as string, h.admin.token);
  };
  const eventsOf = async (id: string): Promise<RunEvent[]> =>
    (await h.http.get(`/v1/runs/${id}/events?limit=500`).set(bearer(h.admin.token))).body as RunEvent[];

  it('stores the log up to the limit and one marker; later events keep their metadata; the run succeeds', async () => {
    const run = await submit(LOUD);
    expect(run).toMatchObject({ status: 'finished', conclusion: 'succeeded', output_truncated: true });

    const log = await h.http.get(`/v1/runs/${run.id}/logs`).set(bearer(h.admin.token));
    const marker = outputTruncatedLine(LIMIT);
    expect(marker).toContain('more than 64 KB');
    const [before, after, ...more] = log.text.split(marker);
    expect(more).toEqual([]);
    expect(after).toBe('');
    expect(Buffer.byteLength(before!)).toBeLessThanOrEqual(LIMIT);
    expect(Buffer.byteLength(before!)).toBeGreaterThan(LIMIT - 200);
    expect(log.text).toContain('"out.stdout_lines": [');
    expect(log.text).not.toContain('"8000"');
    expect(log.text).not.toContain('PLAY RECAP');
    // Line reads end at the marker: the stored log's numbering holds.
    const total = run.log_lines;
    expect(log.text.split('\n').length - 1).toBe(total);
    const lastLine = await h.http.get(`/v1/runs/${run.id}/logs?offset=${total - 1}&limit=1`).set(bearer(h.admin.token));
    expect(lastLine.text).toBe(marker);

    const events = await eventsOf(run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.length).toBe(run.last_seq);
    const markerEvent = events.find((e) => e.kind === 'log' && e.data.output_truncated === true)!;
    expect(events.filter((e) => e.data.output_truncated === true && e.kind === 'log')).toHaveLength(1);
    const results = events.filter((e) => e.seq > markerEvent.seq && e.kind === 'runner_on_ok');
    expect(results.map((e) => e.data.task)).toEqual(['debug', 'command', 'debug']);
    for (const e of results) {
      expect(e.data).toMatchObject({
        host: 'localhost',
        action: expect.any(String),
        truncated: { reason: 'output_limit' },
      });
      expect(e.data).not.toHaveProperty('res');
    }
    // The stats still decide the outcome: every host counted, every task.
    expect((await h.http.get(`/v1/runs/${run.id}`).set(bearer(h.admin.token))).body.host_stats).toEqual({
      localhost: expect.objectContaining({ ok: 4, changed: 2, failed: 0 }),
    });
  }, 180_000);

  it('leaves a run under the limit whole, output_truncated false', async () => {
    const run = await submit(QUIET);
    expect(run).toMatchObject({ conclusion: 'succeeded', output_truncated: false });
    const log = await h.http.get(`/v1/runs/${run.id}/logs`).set(bearer(h.admin.token));
    expect(log.text).toContain('PLAY RECAP');
    expect(log.text).not.toContain('output truncated');
    const results = (await eventsOf(run.id)).filter((e) => e.kind === 'runner_on_ok');
    expect(results.map((e) => e.data.res)).toEqual([expect.objectContaining({ msg: 'quiet' })]);
  }, 120_000);
});
