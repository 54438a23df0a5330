// The observation rollups against real SQLite and PostgreSQL: numbering under concurrent finishes, the two query
// paths of "last N per host" agreeing, drift found, refreshed and resolved per loop item, and the flaky flag.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { HostCounts } from '@baton/contracts';
import type { RunRow, RunTaskResultRow } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from '@baton/db/testing';
import { newId } from '../common/ids.js';
import { type FinishedRun, recordRollups } from './observation-rollup.js';

// testRunRow's submitter.
const OPERATOR = 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1';
const counts = (over: Partial<HostCounts> = {}): HostCounts => ({
  ok: 3,
  changed: 0,
  failed: 0,
  unreachable: 0,
  skipped: 0,
  rescued: 0,
  ignored: 0,
  ...over,
});
let clockMs = Date.parse('2026-01-01T00:00:00.000Z');

function finishedRun(
  hosts: Record<string, HostCounts>,
  results: Array<Partial<RunTaskResultRow> & { host: string; task_path: string }> = [],
  over: Partial<RunRow> = {},
): FinishedRun {
  clockMs += 60_000;
  const id = newId('run', clockMs);
  const run = testRunRow(id, {
    status: 'finished',
    conclusion: 'succeeded',
    playbook_source: 'project',
    playbook: 'site.yml',
    project_id: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FA3',
    inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FA4',
    git_commit: 'a'.repeat(40),
    started_at: new Date(clockMs - 30_000).toISOString(),
    finished_at: new Date(clockMs).toISOString(),
    ...over,
  });
  return {
    run,
    stats: hosts,
    results: results.map((r, i) => ({
      run_id: id,
      seq: i + 1,
      task_uuid: `uuid-${r.task_path}`,
      task: r.task ?? `task ${r.task_path}`,
      status: 'ok',
      changed: 0,
      started_at: null,
      ended_at: null,
      duration_ms: 100,
      action: 'ansible.builtin.copy',
      message: null,
      no_log: 0,
      changes: null,
      ...r,
    })),
  };
}

describe.each(DIALECTS)('observation rollups on %s', (dialect) => {
  let tdb: TestDatabase;
  const repo = () => tdb.db.repos.observation;
  const record = (runs: FinishedRun[]) => tdb.db.transaction((r) => recordRollups(r, runs));

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await tdb.drop();
  });

  it('numbers each host’s runs without gaps or duplicates when runs finish concurrently', async () => {
    const hosts = { 'c-1': counts(), 'c-2': counts(), 'c-3': counts() };
    await Promise.all(Array.from({ length: 12 }, () => record([finishedRun(hosts)])));
    await record([finishedRun(hosts), finishedRun(hosts)]);
    for (const host of Object.keys(hosts)) {
      const rows = await repo().hostRuns(host, {}, { limit: 100 }, 'all');
      expect(rows.map((r) => r.host_seq)).toEqual(Array.from({ length: 14 }, (_, i) => 14 - i));
      expect(new Set(rows.map((r) => r.run_id)).size).toBe(14);
    }
  });

  it('answers "the last N runs of each host" the same on its fast path and its filtered path', async () => {
    for (let i = 0; i < 7; i++) {
      await record([finishedRun({ 'w-a': counts(), 'w-b': counts({ failed: i % 2 }) })]);
      if (i % 3 === 0)
        await record([finishedRun({ 'w-a': counts() }, [], { submitted_by: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA9' })]);
    }
    const hosts = ['w-a', 'w-b'];
    const fast = await repo().recentRuns({}, 4, 'all', hosts);
    // Everyone's runs through the visibility condition: the same rows, by the per-host walk.
    const everyone = {
      submittedBy: OPERATOR,
      projectIds: ['prj_01ARZ3NDEKTSV4RRFFQ69G5FA3'],
      inventoryIds: [],
      templateIds: [],
    };
    const walked = await repo().recentRuns({}, 4, everyone, hosts);
    const key = (r: { host: string; host_seq: number }) => `${r.host}#${r.host_seq}`;
    expect(walked.map(key)).toEqual(fast.map(key));
    expect(fast.filter((r) => r.host === 'w-a')).toHaveLength(4);
    // Only OPERATOR's own runs: the extra runs of another submitter drop out, and each host still gets 4.
    const own = await repo().recentRuns(
      {},
      4,
      { submittedBy: OPERATOR, projectIds: [], inventoryIds: [], templateIds: [] },
      hosts,
    );
    expect(own.every((r) => r.submitted_by === OPERATOR)).toBe(true);
    expect(own.filter((r) => r.host === 'w-a')).toHaveLength(4);
    // A filter matching fewer rows than the window: all of them.
    expect(await repo().recentRuns({ playbook: 'other.yml' }, 4, 'all', hosts)).toEqual([]);
  });

  it('flags a host flaky when its outcome flips, and clears the flag when it settles', async () => {
    const flaky = async () => (await repo().flakyHostCount()) > 0;
    const before = await repo().flakyHostCount();
    for (const failed of [1, 0, 1, 0]) await record([finishedRun({ 'f-1': counts({ failed }) })]);
    expect(await repo().flakyHostCount()).toBe(before + 1);
    for (let i = 0; i < 20; i++) await record([finishedRun({ 'f-1': counts() })]);
    expect(await repo().flakyHostCount()).toBe(before);
    expect(await flaky()).toBe(before > 0);
  });

  it('finds drift per loop item, refreshes what is found again, resolves what a later run shows unchanged or fixes', async () => {
    const host = '[2001:db8::7]';
    const changes = (items: string[]) =>
      JSON.stringify(items.map((item) => ({ item, diff: { before: 'x', after: item } })));
    const dry1 = finishedRun(
      { [host]: counts({ changed: 2 }) },
      [
        { host, task_path: 'site.yml:5', changed: 1, changes: changes(['a', 'b']) },
        { host, task_path: 'site.yml:9', changed: 1, no_log: 1, changes: null },
      ],
      { check_mode: 1 },
    );
    await record([dry1]);
    let open = await repo().openOfHost(host, {}, 'all');
    expect(open.map((d) => [d.task_path, d.item, d.no_log]).sort()).toEqual([
      ['site.yml:5', 'a', 0],
      ['site.yml:5', 'b', 0],
      ['site.yml:9', null, 1],
    ]);
    expect(open.find((d) => d.no_log === 1)!.diff).toBeNull();
    const idOf = (item: string) => open.find((d) => d.item === item)!.id;
    const [a, b] = [idOf('a'), idOf('b')];

    // A later dry run: item a still drifts (same row, refreshed), b is back in shape, the no_log task unchanged.
    const dry2 = finishedRun(
      { [host]: counts({ changed: 1 }) },
      [
        { host, task_path: 'site.yml:5', changed: 1, changes: changes(['a']) },
        { host, task_path: 'site.yml:9', changed: 0 },
      ],
      { check_mode: 1 },
    );
    await record([dry2]);
    open = await repo().openOfHost(host, {}, 'all');
    expect(open.map((d) => d.id)).toEqual([a]);
    expect(open[0]!.found_in_run_id).toBe(dry2.run.id);

    // A real run that changes it: fixed, linked to that run.
    const real = finishedRun({ [host]: counts({ changed: 1 }) }, [{ host, task_path: 'site.yml:5', changed: 1 }]);
    await record([real]);
    expect(await repo().openOfHost(host, {}, 'all')).toEqual([]);
    const resolved = await tdb.db.kysely
      .selectFrom('drift_items')
      .select(['id', 'resolved_by_run_id', 'fixed'])
      .where('host', '=', host)
      .orderBy('id')
      .execute();
    expect(resolved.find((d) => d.id === a)).toMatchObject({ resolved_by_run_id: real.run.id, fixed: 1 });
    expect(resolved.find((d) => d.id === b)).toMatchObject({ resolved_by_run_id: dry2.run.id, fixed: 0 });
    // The dry runs assessed the host fully: it is not listed as unassessed.
    expect(await repo().unassessed({ host }, { limit: 10 }, 'all')).toEqual([]);
  });

  it('lists hosts a dry run could not assess, and why', async () => {
    const dry = finishedRun(
      {
        'u-1': counts({ unreachable: 1 }),
        'u-2': counts({ failed: 1 }),
        'u-3': counts({ skipped: 1 }),
        'u-4': counts(),
      },
      [
        { host: 'u-1', task_path: 'site.yml:1', status: 'unreachable', message: 'ssh: connect refused' },
        { host: 'u-2', task_path: 'site.yml:1', status: 'failed', task: 'boom', message: 'it broke' },
        {
          host: 'u-3',
          task_path: 'site.yml:1',
          status: 'skipped',
          task: 'cmd',
          message: 'Command would have run if not in check mode',
        },
        {
          host: 'u-4',
          task_path: 'site.yml:1',
          status: 'skipped',
          task: 'when',
          message: 'Conditional result was False',
        },
      ],
      { check_mode: 1 },
    );
    await record([dry]);
    const rows = await repo().unassessed({}, { limit: 10 }, 'all');
    expect(rows.filter((r) => r.host.startsWith('u-')).map((r) => [r.host, r.reason])).toEqual([
      ['u-1', 'unreachable: ssh: connect refused'],
      ['u-2', 'failed: task "boom": it broke'],
      ['u-3', 'tasks skipped in check mode: cmd'],
    ]);
  });

  it('leaves hosts with absurdly long names out of the rollups instead of failing the finish', async () => {
    const long = 'h'.repeat(5000);
    await record([finishedRun({ [long]: counts(), 'short-1': counts() }, [{ host: long, task_path: 'site.yml:1' }])]);
    expect(await repo().hostRuns('short-1', {}, { limit: 5 }, 'all')).toHaveLength(1);
    expect(await repo().hostSeen(long, 'all')).toBe(false);
  });

  it('keeps task durations per task with each host’s time, the longest host as the run’s', async () => {
    const f = finishedRun({ 't-1': counts(), 't-2': counts() }, [
      { host: 't-1', task_path: 'site.yml:40', duration_ms: 300 },
      { host: 't-2', task_path: 'site.yml:40', duration_ms: 900 },
      { host: 't-1', task_path: 'site.yml:44', status: 'skipped', duration_ms: 1 },
    ]);
    await record([f]);
    const stats = await repo().taskStats({ playbook: 'site.yml' });
    const task = stats.find((s) => s.task_path === 'site.yml:40')!;
    expect(stats.find((s) => s.task_path === 'site.yml:44')).toBeUndefined();
    const rows = await repo().taskHistory(task.task_key, { limit: 5 }, 'all');
    expect(rows[0]).toMatchObject({ run_id: f.run.id, duration_ms: 900 });
    expect(JSON.parse(rows[0]!.host_ms)).toEqual({ 't-1': 300, 't-2': 900 });
  });
});
