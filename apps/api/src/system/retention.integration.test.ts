// Retention (issue 19) on SQLite and PostgreSQL: real runs of real ansible, then the old finished ones lose their
// events and log in slices while recent and unfinished runs keep theirs, fleet, task trends and drift answer the same
// before and after, one audit entry records the pass and the chain verifies; a dry run changes nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Run } from '@baton/contracts';
import { createRetentionService, type RetentionService } from '@baton/core';
import type { RetentionRepo } from '@baton/db';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import { bearer, createHarness, type Harness, runFinished } from '../testing/harness.js';

const PLAYBOOK = (file: string) => `- hosts: all
  gather_facts: false
  tasks:
    - name: say something worth keeping for a while
      ansible.builtin.debug:
        msg: "line {{ item }} of the log"
      loop: [1, 2, 3, 4, 5, 6]
    - name: desired file
      ansible.builtin.copy:
        content: "desired\\n"
        dest: "${file}"
`;
const INVENTORY = 'web1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';
const LONG_AGO = '2020-01-01T00:00:00.000Z';

describe.each(DIALECTS)('retention on %s', (dialect) => {
  let h: Harness;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `baton-retention-${dialect}-`));
  const target = path.join(dir, 'managed.conf');
  const old: Run[] = [];
  let recent: Run;
  const unfinished = `run_unfinished${dialect}`;
  const get = (url: string) => h.http.get(url).set(bearer(h.admin.token));
  const observed = async () => ({
    fleet: (await get('/v1/fleet')).body,
    tasks: (await get('/v1/tasks')).body,
    drift: (await get('/v1/drift')).body,
    hosts: (await get('/v1/hosts/web1/runs')).body,
  });
  const submit = async (check: boolean): Promise<Run> => {
    const res = await h.http
      .post('/v1/runs')
      .set(bearer(h.admin.token))
      .send({ playbook: PLAYBOOK(target), inventory: INVENTORY, check });
    expect(res.status).toBe(201);
    return runFinished(h, res.body.id as string, h.admin.token);
  };
  const eventCount = async (runId: string) =>
    Number(
      (
        await h.tdb.db.kysely
          .selectFrom('run_events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('run_id', '=', runId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  /** The service as serve wires it, with tiny batches and slices, and a count of the delete statements. */
  const slicing = (statements: number[]): RetentionService => {
    const repo = h.tdb.db.repos.retention;
    const counted: RetentionRepo = {
      ...repo,
      deleteEvents: async (ids, max) => {
        const n = await repo.deleteEvents(ids, max);
        statements.push(n);
        return n;
      },
    };
    return createRetentionService({
      retention: counted,
      transaction: h.tdb.db.transaction,
      clock: () => new Date(),
      runsPerBatch: 1,
      eventsPerSlice: 5,
    });
  };

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
    // Two runs that will be old (the second a dry run finding drift), and a recent dry run (finding it still).
    old.push(await submit(false));
    fs.writeFileSync(target, 'changed by hand\n');
    old.push(await submit(true));
    recent = await submit(true);
    for (const r of old)
      await h.tdb.db.kysely.updateTable('runs').set({ finished_at: LONG_AGO }).where('id', '=', r.id).execute();
    // A run that never finished (its executor died, say), created long ago: never pruned, whatever its age.
    await h.tdb.db.repos.runs.insert(testRunRow(unfinished, { status: 'running', created_at: LONG_AGO, last_seq: 2 }));
    await h.tdb.db.repos.runEvents.insertBatch(
      [1, 2].map((seq) => ({
        run_id: unfinished,
        seq,
        ts: LONG_AGO,
        kind: 'log',
        host: null,
        log_line: seq,
        log_byte: (seq - 1) * 6,
        data: { text: `line${seq}\n`, start_line: seq, end_line: seq },
      })),
    );
  }, 600_000);

  afterAll(async () => {
    await h.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prunes only old finished runs, in slices, keeping what observation reads, and audits the pass', async () => {
    for (const r of old) expect(r.conclusion).toBe('succeeded');
    const before = await observed();
    expect(before.drift.length).toBeGreaterThan(0);
    expect(before.tasks.length).toBeGreaterThan(0);
    const eventsBefore = Object.fromEntries(
      await Promise.all([...old, recent].map(async (r) => [r.id, await eventCount(r.id)] as const)),
    );
    const recentLog = (await get(`/v1/runs/${recent.id}/logs`)).text;
    const auditHead = await h.tdb.db.repos.audit.head();

    // The dry run counts and changes nothing.
    const dry = await h.services.retention.prune({ days: 30, dryRun: true, actor: 'cli' });
    const oldEvents = old.reduce((n, r) => n + eventsBefore[r.id]!, 0);
    expect(dry).toMatchObject({ dryRun: true, runs: 2, events: oldEvents });
    expect(dry.bytes).toBeGreaterThan(0);
    for (const r of old) expect(await eventCount(r.id)).toBe(eventsBefore[r.id]);
    expect(await h.tdb.db.repos.audit.head()).toEqual(auditHead);
    expect((await get(`/v1/runs/${old[0]!.id}`)).body.output_pruned_at).toBeNull();

    const statements: number[] = [];
    const report = await slicing(statements).prune({ days: 30, actor: 'system' });
    expect(report).toMatchObject({ dryRun: false, runs: 2, events: oldEvents, bytes: dry.bytes, batches: 2 });
    // Slices of at most 5 events each: many statements, never one that took a run's events at once.
    expect(Math.max(...statements)).toBeLessThanOrEqual(5);
    expect(statements.reduce((a, b) => a + b, 0)).toBe(oldEvents);
    expect(statements.length).toBeGreaterThan(oldEvents / 5);

    for (const r of old) {
      expect(await eventCount(r.id)).toBe(0);
      const run = (await get(`/v1/runs/${r.id}`)).body as Run;
      expect(run.output_pruned_at).toEqual(expect.any(String));
      expect(run).toMatchObject({ status: 'finished', conclusion: 'succeeded', host_summary: r.host_summary });
      expect(run.log_lines).toBe(r.log_lines);
      const log = await get(`/v1/runs/${r.id}/logs`);
      expect(log.status).toBe(200);
      expect(log.text).toBe('');
      expect((await get(`/v1/runs/${r.id}/events`)).body).toEqual([]);
      expect((await get(`/v1/runs/${r.id}/logs?offset=0&limit=10`)).headers['x-total-lines']).toBe('0');
    }
    // Recent and unfinished runs keep everything.
    expect(await eventCount(recent.id)).toBe(eventsBefore[recent.id]);
    expect((await get(`/v1/runs/${recent.id}/logs`)).text).toBe(recentLog);
    expect((await get(`/v1/runs/${recent.id}`)).body.output_pruned_at).toBeNull();
    // Its two log events (when this test outlasts the recovery sweep's 30 s, the sweep has finished it as worker_lost
    // since, with a status event after them).
    const unfinishedEvents = await h.tdb.db.kysely
      .selectFrom('run_events')
      .select(['seq', 'kind'])
      .where('run_id', '=', unfinished)
      .where('seq', '<=', 2)
      .orderBy('seq')
      .execute();
    expect(unfinishedEvents).toEqual([
      { seq: 1, kind: 'log' },
      { seq: 2, kind: 'log' },
    ]);
    // Fleet, task trends, host history and drift read rollups only: the same answers.
    expect(await observed()).toEqual(before);

    const audit = await get('/v1/audit?action=retention.prune');
    expect(audit.status).toBe(200);
    expect(audit.body).toHaveLength(1);
    expect(audit.body[0]).toMatchObject({ actor: 'system', object: null });
    expect(audit.body[0].summary).toContain(`2 run(s) finished before ${report.cutoff}`);
    expect(audit.body[0].summary).toContain(`${oldEvents} event(s), ${dry.bytes} byte(s)`);
    const verify = await get('/v1/audit/verify');
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ ok: true });

    // A second pass finds nothing and records nothing.
    const again = await h.services.retention.prune({ days: 30 });
    expect(again).toMatchObject({ runs: 0, events: 0, batches: 0 });
    expect((await get('/v1/audit?action=retention.prune')).body).toHaveLength(1);
  }, 120_000);
});
