// "The newest N rows per host (or task) that match": every path of the walks (the primary-key range, one arm per
// filter or visibility key, the union of arms, the single walk past MAX_ARMS, one key's page) and the rings of
// visibility keys and of every run (fleet_windows, ranking the unfiltered fleet) answer exactly
// what a plain filter-and-sort over all rows answers, on both databases.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunVisibility } from '../runs/run.repo.js';
import { backfillWindows } from '../migrations/0007_fleet_windows.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../testing/index.js';
import type { HostRunDraft, HostRunFilter, HostRunRow } from './fleet.repo.js';
import { FLEET_WINDOW_RUNS } from './fleet-windows.js';
import { MAX_ARMS } from './last-per-key.js';
import type { TaskRunDraft, TaskRunRow } from './task-trend.repo.js';

const HOSTS = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example'];
const TASKS = ['task-1', 'task-2', 'task-3'];
const PROJECTS = ['prj_1', 'prj_2', 'prj_3', null];
const INVENTORIES = ['inv_1', 'inv_2'];
const TEMPLATES = ['tpl_1', 'tpl_2', null];
const USERS = ['usr_1', 'usr_2', 'usr_3'];
const PLAYBOOKS = ['site.yml', 'web.yml'];
const OUTCOMES = ['ok', 'changed', 'failed', 'unreachable'];
/** A host with more runs through one inventory than a ring keeps (inv_2: the inventory grant below sees them all). */
const BUSY = 'busy.example';
/** A host only usr_2 ran things on, outside every grant below: no operator sees it. */
const HIDDEN = 'hidden.example';

/** A fixed pseudo-random sequence, so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a * 1103515245 + 12345) % 2147483648;
    return a / 2147483648;
  };
}
const rnd = prng(14);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;

function visibleTo(row: { submitted_by: string } & Record<string, unknown>, v: RunVisibility): boolean {
  if (v === 'all') return true;
  return (
    row.submitted_by === v.submittedBy ||
    v.projectIds.includes(row.project_id as string) ||
    v.inventoryIds.includes(row.inventory_id as string) ||
    v.templateIds.includes(row.template_id as string)
  );
}

const matches = (row: HostRunRow, f: HostRunFilter) =>
  (f.inventoryId === undefined || row.inventory_id === f.inventoryId) &&
  (f.projectId === undefined || row.project_id === f.projectId) &&
  (f.playbook === undefined || row.playbook === f.playbook);

/** Newest first per key, keys in order: what the walks answer. */
function newest<R>(rows: R[], keyOf: (r: R) => string, seqOf: (r: R) => number, window: number): R[] {
  const byKey = new Map<string, R[]>();
  for (const r of rows) byKey.set(keyOf(r), [...(byKey.get(keyOf(r)) ?? []), r]);
  return [...byKey.keys()].sort().flatMap((k) =>
    byKey
      .get(k)!
      .sort((a, b) => seqOf(b) - seqOf(a))
      .slice(0, window),
  );
}

function hostRun(runId: string, host: string, finishedAt: string): HostRunDraft {
  return {
    run_id: runId,
    host,
    outcome: pick(OUTCOMES),
    ok: 1,
    changed: 0,
    failed: 0,
    unreachable: 0,
    skipped: 0,
    rescued: 0,
    ignored: 0,
    failed_tasks: '[]',
    playbook: pick(PLAYBOOKS),
    project_id: null,
    inventory_id: null,
    template_id: null,
    submitted_by: 'usr_1',
    git_commit: null,
    check_mode: 0,
    origin: 'api',
    duration_ms: 1000,
    finished_at: finishedAt,
  };
}

const operator = (over: Partial<Exclude<RunVisibility, 'all'>> = {}): RunVisibility => ({
  submittedBy: 'usr_1',
  projectIds: [],
  inventoryIds: [],
  templateIds: [],
  ...over,
});

/** What recentSummary answers for these rows (newest first per host), by host. */
function summaryOf(rows: HostRunRow[]) {
  return [...new Set(rows.map((r) => r.host))].sort().map((host) => {
    const mine = rows.filter((r) => r.host === host);
    const count = (o: string) => mine.filter((r) => r.outcome === o).length;
    return {
      host,
      runs: mine.length,
      ok: count('ok'),
      changed: count('changed'),
      failed: count('failed'),
      unreachable: count('unreachable'),
      last_seen_at: mine[0]!.finished_at,
    };
  });
}
const byHost = <T extends { host: string }>(list: T[]) => [...list].sort((a, b) => (a.host < b.host ? -1 : 1));

const VISIBILITIES: Array<[string, RunVisibility]> = [
  ['an admin', 'all'],
  ['an operator seeing their own runs', operator()],
  ['an operator with grants on a project and a template', operator({ projectIds: ['prj_2'], templateIds: ['tpl_1'] })],
  ['an operator with grants on an inventory', operator({ submittedBy: 'usr_9', inventoryIds: ['inv_2'] })],
  [
    `an operator with more than ${MAX_ARMS} grants (one walk)`,
    operator({ projectIds: ['prj_3', ...Array.from({ length: MAX_ARMS }, (_, i) => `prj_x${i}`)] }),
  ],
];
const FILTERS: HostRunFilter[] = [
  {},
  { inventoryId: 'inv_1' },
  { projectId: 'prj_2' },
  { playbook: 'web.yml', inventoryId: 'inv_2' },
];

describe.each(DIALECTS)('observation walks on %s', (dialect) => {
  let t: TestDatabase;
  const all: HostRunRow[] = [];
  const allTasks: TaskRunRow[] = [];
  const repo = () => t.db.repos.observation;

  beforeAll(async () => {
    t = await createTestDatabase(dialect);
    for (let batch = 0; batch < 12; batch++) {
      const drafts: HostRunDraft[] = [];
      const taskDrafts: TaskRunDraft[] = [];
      for (let i = 0; i < 25; i++) {
        const run = {
          run_id: `run_${batch}_${i}`,
          project_id: pick(PROJECTS),
          inventory_id: pick(INVENTORIES),
          template_id: pick(TEMPLATES),
          submitted_by: pick(USERS),
          finished_at: new Date(Date.UTC(2026, 0, 1, 0, batch * 25 + i)).toISOString(),
        };
        for (const host of HOSTS.filter(() => rnd() < 0.6))
          drafts.push({ ...hostRun(run.run_id, host, run.finished_at), ...run });
        for (const task of TASKS.filter(() => rnd() < 0.7))
          taskDrafts.push({
            run: { ...run, task_key: task, duration_ms: Math.floor(rnd() * 5000), host_ms: '{}' },
            task: { task_key: task, playbook: 'site.yml', project_id: null, task_path: task, task, action: null },
          });
      }
      await t.db.transaction(async (r) => {
        all.push(...(await r.observation.recordHostRuns(drafts)));
        await r.observation.recordTaskRuns(taskDrafts);
      });
    }
    // Past a ring's length in one batch, then more in front of a full ring (it is cut from the stored end).
    for (const [batch, n] of [
      [12, FLEET_WINDOW_RUNS + 50],
      [13, 70],
    ] as const) {
      const drafts = Array.from({ length: n }, (_, i) => ({
        ...hostRun(`run_${batch}_${i}`, BUSY, new Date(Date.UTC(2026, 1, batch, 0, i)).toISOString()),
        project_id: pick(PROJECTS),
        inventory_id: 'inv_2',
        template_id: pick(TEMPLATES),
        submitted_by: pick(USERS),
      }));
      drafts.push({
        ...hostRun(`run_${batch}_hidden`, HIDDEN, new Date(Date.UTC(2026, 1, batch, 12)).toISOString()),
        project_id: 'prj_1',
        inventory_id: 'inv_1',
        template_id: null,
        submitted_by: 'usr_2',
      });
      all.push(...(await t.db.transaction((r) => r.observation.recordHostRuns(drafts))));
    }
    allTasks.push(
      ...(await t.db.kysely.selectFrom('task_runs').selectAll().execute()).map((r) => ({
        ...r,
        task_seq: Number(r.task_seq),
        duration_ms: Number(r.duration_ms),
      })),
    );
  });
  afterAll(() => t.drop());

  const keyOf = (r: { host: string; host_seq: number }) => `${r.host}#${r.host_seq}`;

  describe.each(VISIBILITIES)('for %s', (_, visible) => {
    it.each(FILTERS)('answers the last runs of each host matching %j', async (filter) => {
      // FLEET_WINDOW_RUNS: more than most keys' rows on a host, and all a ring keeps of BUSY's inv_2.
      for (const window of [1, 3, 20, FLEET_WINDOW_RUNS]) {
        const want = newest(
          all.filter((r) => matches(r, filter) && visibleTo(r, visible)),
          (r) => r.host,
          (r) => r.host_seq,
          window,
        );
        const got = await repo().recentRuns(filter, window, visible);
        expect(got.map(keyOf)).toEqual(want.map(keyOf));
        expect(got[0]).toEqual(want[0]);
        const some = await repo().recentRuns(filter, window, visible, ['b.example', 'unknown']);
        expect(some.map(keyOf)).toEqual(want.filter((r) => r.host === 'b.example').map(keyOf));

        const summary = await repo().recentSummary(filter, window, visible);
        expect(byHost(summary)).toEqual(summaryOf(want));
        const one = await repo().recentSummary(filter, window, visible, ['b.example', BUSY, 'unknown']);
        expect(byHost(one)).toEqual(summaryOf(want.filter((r) => r.host === 'b.example' || r.host === BUSY)));
        expect(await repo().recentSummary(filter, window, visible, [])).toEqual([]);
      }
    });

    it('pages through one host’s runs, and knows whether the caller saw the host at all', async () => {
      for (const filter of FILTERS) {
        const want = all
          .filter((r) => r.host === 'c.example' && matches(r, filter) && visibleTo(r, visible))
          .sort((a, b) => b.host_seq - a.host_seq);
        const first = await repo().hostRuns('c.example', filter, { limit: 4 }, visible);
        expect(first.map(keyOf)).toEqual(want.slice(0, 4).map(keyOf));
        if (first.length === 4) {
          const next = await repo().hostRuns('c.example', filter, { limit: 4, beforeSeq: first[3]!.host_seq }, visible);
          expect(next.map(keyOf)).toEqual(want.slice(4, 8).map(keyOf));
        }
      }
      expect(await repo().hostSeen('c.example', visible)).toBe(
        all.some((r) => r.host === 'c.example' && visibleTo(r, visible)),
      );
      expect(await repo().hostSeen('unknown.example', visible)).toBe(false);
    });

    it('answers the last runs of each task and one task’s history', async () => {
      const task = (r: { task_key: string; task_seq: number }) => `${r.task_key}#${r.task_seq}`;
      for (const window of [2, 50]) {
        const want = newest(
          allTasks.filter((r) => visibleTo(r, visible)),
          (r) => r.task_key,
          (r) => r.task_seq,
          window,
        );
        expect((await repo().recentTaskRuns({}, window, visible)).map(task)).toEqual(want.map(task));
        expect((await repo().recentTaskDurations({}, window, visible)).map(task)).toEqual(want.map(task));
        expect((await repo().recentTaskRuns({ keys: ['task-2'] }, window, visible)).map(task)).toEqual(
          want.filter((r) => r.task_key === 'task-2').map(task),
        );
      }
      const history = allTasks
        .filter((r) => r.task_key === 'task-3' && visibleTo(r, visible))
        .sort((a, b) => b.task_seq - a.task_seq);
      expect((await repo().taskHistory('task-3', { limit: 5 }, visible)).map(task)).toEqual(
        history.slice(0, 5).map(task),
      );
    });
  });
  it('ranks from rings that hold what the runs do: a run seen through two keys, a host no key sees', async () => {
    const both = operator({ projectIds: ['prj_2'], templateIds: ['tpl_1'] });
    const keysSeeing = (r: HostRunRow) =>
      [r.submitted_by === 'usr_1', r.project_id === 'prj_2', r.template_id === 'tpl_1'].filter(Boolean).length;
    // The data has runs this caller sees through two and three keys (counted once: the summaries above match).
    expect(all.some((r) => keysSeeing(r) === 2)).toBe(true);
    expect(all.some((r) => keysSeeing(r) === 3)).toBe(true);
    const seen = (await repo().recentSummary({}, 20, both)).map((s) => s.host);
    expect(seen).not.toContain(HIDDEN);
    expect(seen).toContain(BUSY);
    expect((await repo().recentSummary({}, 20, 'all')).map((s) => s.host)).toContain(HIDDEN);
    expect(await repo().recentSummary({}, 20, operator({ submittedBy: 'usr_2' }), [HIDDEN])).toEqual([
      expect.objectContaining({ host: HIDDEN, runs: 2 }),
    ]);
  });

  it('backfills the rings of a history recorded before them (0007) as the ingester keeps them', async () => {
    const rings = () =>
      t.db.kysely.selectFrom('fleet_windows').selectAll().orderBy(['kind', 'value', 'host']).execute();
    const kept = await rings();
    expect(kept.find((w) => w.kind === 'inventory_id' && w.value === 'inv_2' && w.host === BUSY)?.ring).toHaveLength(
      FLEET_WINDOW_RUNS * 7,
    );
    await t.db.kysely.deleteFrom('fleet_windows').execute();
    await backfillWindows(t.db.kysely as never);
    expect(await rings()).toEqual(kept);
  });
});
