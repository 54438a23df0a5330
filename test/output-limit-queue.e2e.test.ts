// The run output limit in queue mode, with real processes: `baton worker` runs the playbook and cuts the log,
// `baton serve` ingests the events from Redis (holding the same limit), on PostgreSQL and on SQLite.
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Run, RunEvent } from '@baton/contracts';
import { cleanupProcesses } from './support/baton-process.js';
import { type QueueCluster, startQueueCluster } from './support/queue-cluster.js';

const MARKER =
  'baton: output truncated: this run printed more than 1 MB; later output was not stored (the run goes on)\n';
/** About 1.4 MB of log: a list of 100,000 numbers, one a line, then a task past the limit. */
const LOUD =
  '- hosts: all\n  gather_facts: false\n  tasks:\n' +
  '    - command: seq 1 100000\n      register: out\n' +
  '    - debug: var=out.stdout_lines\n' +
  '    - command: echo after-the-limit\n';
const INVENTORY = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';

const clusters: QueueCluster[] = [];
afterAll(async () => {
  for (const c of clusters) await c.close().catch(() => {});
  await cleanupProcesses();
}, 60_000);

describe.each(['postgres', 'sqlite'] as const)('the run output limit in queue mode on %s', (database) => {
  it('is cut by the worker with one marker, stored bounded, later events without res, output_truncated', async () => {
    const c = await startQueueCluster({
      database,
      replicas: 1,
      workers: [{ name: `limit-${database}-${process.pid}`, concurrency: 1 }],
      env: { BATON_RUN_OUTPUT_LIMIT_MB: '1' },
    });
    clusters.push(c);
    const r = c.replicas[0]!;
    try {
      const inventory = await c.inventory(r, INVENTORY);
      const submitted = await c.submit(r, { playbook: LOUD, inventory_id: inventory });
      const run: Run = await c.finished(r, submitted.id, 240_000);
      expect(run).toMatchObject({ conclusion: 'succeeded', output_truncated: true, worker: expect.any(String) });

      const res = await fetch(`${r.base}/v1/runs/${run.id}/logs`, {
        headers: { Authorization: `Bearer ${await c.token()}` },
      });
      const log = await res.text();
      const [before, after, ...more] = log.split(MARKER);
      expect(more).toEqual([]);
      expect(after).toBe('');
      expect(Buffer.byteLength(before!)).toBeLessThanOrEqual(1024 * 1024);
      expect(Buffer.byteLength(before!)).toBeGreaterThan(1024 * 1024 - 200);

      const events: RunEvent[] = await c.events(r, run.id);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const markerSeq = events.find((e) => e.kind === 'log' && e.data.output_truncated === true)!.seq;
      const later = events.filter((e) => e.seq > markerSeq && e.kind === 'runner_on_ok');
      expect(later.map((e) => e.data.task)).toEqual(['debug', 'command']);
      for (const e of later) expect(e.data).not.toHaveProperty('res');
      expect(events.at(-1)!.data).toMatchObject({ status: 'finished', output_truncated: true });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${c.logTail(40)}`, { cause: err });
    }
  }, 400_000);
});
