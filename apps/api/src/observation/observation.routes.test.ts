// Observation end to end (issue 14), on SQLite and PostgreSQL: real runs of real ansible against local hosts whose
// behaviour the playbook steers per host (one fails every other run, one is unreachable, one drifts, one task
// sleeps longer each run), then every field of the fleet, host history, task trends and drift, reconcile held and
// approved, visibility and bad input.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type {
  DriftItem,
  FixedDriftItem,
  FleetHost,
  HostRun,
  Run,
  TaskDetail,
  TaskTrend,
  UnassessedHost,
} from '@baton/contracts';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import fs from 'node:fs';
import path from 'node:path';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const SITE = `- hosts: all
  gather_facts: false
  tasks:
    - name: count this run
      ansible.builtin.shell: 'n=$(cat "{{ state_dir }}/{{ inventory_hostname }}.count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "{{ state_dir }}/{{ inventory_hostname }}.count"; echo $n'
      register: count
      check_mode: false
      changed_when: false
    - name: wait a while
      ansible.builtin.command: "sleep {{ ((count.stdout | int) - 1) * 1.5 }}"
      when: inventory_hostname == 'slow.example'
      changed_when: false
      check_mode: false
    - name: fail every other run
      ansible.builtin.fail:
        msg: "odd run {{ count.stdout }}"
      when: inventory_hostname == 'flip.example' and (count.stdout | int) is odd
    - name: desired config
      ansible.builtin.copy:
        content: "desired\\n"
        dest: "{{ state_dir }}/{{ inventory_hostname }}.conf"
      when: inventory_hostname == 'drift.example'
    - name: desired items
      ansible.builtin.copy:
        content: "{{ item }}\\n"
        dest: "{{ state_dir }}/{{ inventory_hostname }}.{{ item }}"
      loop: [alpha, beta]
      when: inventory_hostname == 'drift.example'
    - name: secret config
      ansible.builtin.copy:
        content: "s3cret-canary-14\\n"
        dest: "{{ state_dir }}/{{ inventory_hostname }}.secret"
      no_log: true
      when: inventory_hostname == 'drift.example'
`;
const LOCAL = 'ansible_connection=local ansible_python_interpreter=/usr/bin/python3';
const HOSTS = ['flip.example', 'slow.example', 'drift.example', '2001:db8::1', 'ünï-01.example'];
const inventoryYaml = () =>
  [
    'all:',
    '  hosts:',
    ...HOSTS.map((h) => `    "${h}": {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}`),
    // A closed port on loopback: unreachable at once.
    '    down.example: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh, ansible_ssh_common_args: "-o ConnectTimeout=3"}',
    '',
  ].join('\n');

const enc = encodeURIComponent;

describe.each(DIALECTS)('observation on %s', (dialect) => {
  let h: Harness;
  const root = tempDir(`baton-observation-${dialect}`);
  const stateDir = path.join(root, 'state');
  fs.mkdirSync(stateDir);
  const repo = createRepo(root);
  fs.writeFileSync(path.join(repo.dir, 'site.yml'), SITE);
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'site');

  let operator: { id: string; token: string };
  let other: { id: string; token: string };
  let viewer: { token: string };
  let project: string;
  let inventory: string;
  const realRuns: string[] = [];
  let dryRun: Run;

  const get = (url: string, token = h.admin.token) => h.http.get(url).set(bearer(token));
  const runOf = async (id: string): Promise<Run> => (await get(`/v1/runs/${id}`)).body as Run;
  /** Polls the run until it has finished (a safety net of 180 s, not a speed threshold). */
  const finished = async (id: string): Promise<Run> => {
    const deadline = Date.now() + 180_000;
    for (;;) {
      const run = await runOf(id);
      if (run.status === 'finished') return run;
      if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const run = async (token: string, body: Record<string, unknown>): Promise<Run> => {
    const res = await h.http.post('/v1/runs').set(bearer(token)).send(body);
    expect(res.status).toBe(201);
    return finished(res.body.id as string);
  };
  const spec = (extra: Record<string, unknown> = {}) => ({
    playbook: 'site.yml',
    project_id: project,
    inventory_id: inventory,
    extra_vars: { state_dir: stateDir },
    ...extra,
  });

  beforeAll(async () => {
    h = await createHarness(dialect, { executors: { count: 1 } });
    operator = await h.user('operator');
    other = await h.user('operator');
    viewer = await h.user('viewer');
    const prj = await h.http.post('/v1/projects').set(bearer(h.admin.token)).send({ name: 'site', git_url: repo.url });
    expect(prj.status).toBe(201);
    project = prj.body.id as string;
    const inv = await h.http
      .post('/v1/inventories')
      .set(bearer(h.admin.token))
      .send({ name: 'fleet', content: inventoryYaml() });
    expect(inv.status).toBe(201);
    inventory = inv.body.id as string;
    for (const object of [project, inventory]) {
      const g = await h.http
        .post('/v1/grants')
        .set(bearer(h.admin.token))
        .send({ subject: operator.id, object, level: 'use' });
      expect(g.status).toBe(201);
    }
    // Four real runs: flip.example fails on the odd ones, down.example is never reachable.
    for (let i = 0; i < 4; i++) realRuns.push((await run(operator.token, spec())).id);
    // What the dry run will find out of place on drift.example: a wrong file, one wrong item, one missing.
    fs.writeFileSync(path.join(stateDir, 'drift.example.conf'), 'actual\n');
    fs.writeFileSync(path.join(stateDir, 'drift.example.alpha'), 'wrong\n');
    fs.rmSync(path.join(stateDir, 'drift.example.beta'));
    fs.writeFileSync(path.join(stateDir, 'drift.example.secret'), 'leaked\n');
    dryRun = await run(operator.token, spec({ check: true }));
  }, 600_000);

  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('fleet', () => {
    it('ranks hosts by failures and flags the one that flips as flaky, with the runs that flipped', async () => {
      const res = await get('/v1/fleet');
      expect(res.status).toBe(200);
      const hosts = res.body as FleetHost[];
      expect(hosts.map((x) => x.host).slice(0, 2)).toEqual(['down.example', 'flip.example']);
      expect(hosts).toHaveLength(HOSTS.length + 1);
      const down = hosts[0]!;
      expect(down).toMatchObject({ runs: 5, unreachable: 5, failed: 0, ok: 0, changed: 0, failure_rate: 1 });
      expect(down).toMatchObject({
        last_outcome: 'unreachable',
        last_run_id: dryRun.id,
        flaky: false,
        flaky_reason: null,
      });
      const flip = hosts[1]!;
      // counts 1..5: odd runs fail (runs 1, 3 and the dry run), even ones succeed.
      expect(flip).toMatchObject({ runs: 5, failed: 3, ok: 2, unreachable: 0, failure_rate: 0.6, flaky: true });
      expect(flip.last_outcome).toBe('failed');
      expect(flip.flaky_reason).toContain('playbook site.yml');
      expect(flip.flaky_reason).toContain(inventory);
      expect(flip.flaky_reason).toContain(`${realRuns[1]} (failed → succeeded)`);
      expect(flip.flaky_reason).toContain(`${realRuns[2]} (succeeded → failed)`);
      expect(flip.last_seen_at).toBe(dryRun.finished_at);
      for (const x of hosts.slice(2))
        expect(x).toMatchObject({ failed: 0, unreachable: 0, failure_rate: 0, flaky: false });
      // The first run created its files; the dry run found them changed.
      expect(hosts.find((x) => x.host === 'drift.example')).toMatchObject({ changed: 2, ok: 3 });
    });

    it('filters: flaky, window, inventory, project, playbook, and pages with Link', async () => {
      const flaky = await get('/v1/fleet?flaky=true');
      expect((flaky.body as FleetHost[]).map((x) => x.host)).toEqual(['flip.example']);
      const notFlaky = await get('/v1/fleet?flaky=false');
      expect((notFlaky.body as FleetHost[]).map((x) => x.host)).not.toContain('flip.example');
      // The last two runs: run 4 (ok) and the dry run (failed) flip once: not flaky.
      const two = await get('/v1/fleet?window=2');
      const flip2 = (two.body as FleetHost[]).find((x) => x.host === 'flip.example')!;
      expect(flip2).toMatchObject({ runs: 2, failed: 1, ok: 1, flaky: false });
      expect((await get(`/v1/fleet?inventory=${inventory}`)).body).toHaveLength(HOSTS.length + 1);
      expect((await get('/v1/fleet?inventory=inv_01ARZ3NDEKTSV4RRFFQ69G5FAV')).body).toEqual([]);
      expect((await get(`/v1/fleet?project=${project}&playbook=site.yml`)).body).toHaveLength(HOSTS.length + 1);
      expect((await get('/v1/fleet?playbook=other.yml')).body).toEqual([]);
      const one = (await get(`/v1/fleet?host=${enc('flip.example')}`)).body as FleetHost[];
      expect(one.map((x) => [x.host, x.flaky])).toEqual([['flip.example', true]]);
      expect((await get(`/v1/fleet?host=${enc('[2001:db8::1]')}`)).body).toEqual([]);
      const page1 = await get('/v1/fleet?limit=2');
      expect(page1.body).toHaveLength(2);
      const next = /<([^>]+)>; rel="next"/.exec(String(page1.headers.link))?.[1];
      expect(next).toBeDefined();
      const page2 = await get(next!);
      expect((page2.body as FleetHost[])[0]!.host).not.toBe((page1.body as FleetHost[])[1]!.host);
      expect([...(page1.body as FleetHost[]), ...(page2.body as FleetHost[])].map((x) => x.host)).toEqual(
        (await get('/v1/fleet')).body.slice(0, 4).map((x: FleetHost) => x.host),
      );
    });

    it('counts only runs the caller may see', async () => {
      expect((await get('/v1/fleet', viewer.token)).body).toEqual([]);
      expect((await get('/v1/fleet', other.token)).body).toEqual([]);
      // other runs flip.example once on an inline inventory: that is all they see of it.
      await run(other.token, {
        playbook: SITE,
        inventory: `flip.example ${LOCAL}\n`,
        extra_vars: { state_dir: stateDir },
      });
      const theirs = (await get('/v1/fleet', other.token)).body as FleetHost[];
      expect(theirs.map((x) => x.host)).toEqual(['flip.example']);
      expect(theirs[0]).toMatchObject({ runs: 1, flaky: false });
      // The operator with use on the project and inventory sees their five runs, not other's.
      const mine = ((await get('/v1/fleet', operator.token)).body as FleetHost[]).find(
        (x) => x.host === 'flip.example',
      )!;
      expect(mine.runs).toBe(5);
      // Admins see all six.
      const all = ((await get('/v1/fleet')).body as FleetHost[]).find((x) => x.host === 'flip.example')!;
      expect(all.runs).toBe(6);
      expect((await get(`/v1/hosts/flip.example/runs`, other.token)).body).toHaveLength(1);
    });

    it('answers on the earlier edition without /v1 too (fleet, hosts, tasks and GET /drift; not reconcile)', async () => {
      for (const path of ['/fleet', '/hosts/flip.example/runs', '/tasks', '/drift']) {
        const [legacy, current] = [await get(path), await get(`/v1${path}`)];
        expect(legacy.status).toBe(200);
        expect(legacy.headers.deprecation).toBeDefined();
        expect(legacy.body).toEqual(current.body);
      }
      expect((await h.http.post('/drift/reconcile').set(bearer(operator.token)).send({ host: 'x' })).status).toBe(404);
    });

    it('refuses bad filters with 400 problem+json', async () => {
      for (const q of [
        'window=0',
        'window=201',
        'window=abc',
        'flaky=maybe',
        'inventory=prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        'cursor=!!',
        'cursor=' + Buffer.from('-5').toString('base64url'),
        'unknown=1',
        'playbook=%ED%A0%80',
      ]) {
        const res = await get(`/v1/fleet?${q}`);
        expectProblem(res, 400);
      }
      expect((await h.http.get('/v1/fleet')).status).toBe(401);
    });
  });

  describe('host history', () => {
    it("gives a host's runs newest first with counts, failed tasks, playbook, commit and check", async () => {
      const res = await get('/v1/hosts/flip.example/runs?limit=3');
      expect(res.status).toBe(200);
      const runs = res.body as HostRun[];
      expect(runs.map((r) => r.run_id).slice(1)).toEqual([dryRun.id, realRuns[3]]);
      const dry = runs[1]!;
      expect(dry).toMatchObject({
        outcome: 'failed',
        playbook: 'site.yml',
        project_id: project,
        inventory_id: inventory,
        commit: repo.head('main'),
        check: true,
        origin: 'api',
        finished_at: dryRun.finished_at,
      });
      expect(dry.counts).toMatchObject({ failed: 1, unreachable: 0 });
      expect(dry.failed_tasks).toEqual([{ task: 'fail every other run', message: 'odd run 5' }]);
      expect(dry.duration_s).toBeGreaterThan(0);
      expect(runs[2]).toMatchObject({ outcome: 'ok', check: false, failed_tasks: [] });
      const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link))?.[1];
      const rest = (await get(next!)).body as HostRun[];
      expect(rest.map((r) => r.run_id)).toEqual([realRuns[2], realRuns[1], realRuns[0]]);
      const down = (await get('/v1/hosts/down.example/runs?limit=1')).body as HostRun[];
      expect(down[0]!.outcome).toBe('unreachable');
      expect(down[0]!.failed_tasks[0]!.task).toBe('count this run');
    });

    it('takes host names with dots, colons (IPv6), unicode and brackets in the path', async () => {
      for (const host of ['2001:db8::1', 'ünï-01.example']) {
        const res = await get(`/v1/hosts/${enc(host)}/runs`);
        expect(res.status).toBe(200);
        expect((res.body as HostRun[]).length).toBe(5);
      }
      // Brackets are a name like any other; none ran here: 404, as for a host only invisible runs reported on.
      expectProblem(await get(`/v1/hosts/${enc('[2001:db8::1]')}/runs`), 404);
      expectProblem(await get(`/v1/hosts/drift.example/runs`, viewer.token), 404);
      expect((await get(`/v1/hosts/drift.example/runs?playbook=none.yml`)).body).toEqual([]);
      expectProblem(await get('/v1/hosts/%ED%A0%80/runs'), 400);
      expectProblem(await get(`/v1/hosts/${'a'.repeat(256)}/runs`), 400);
      expectProblem(await get('/v1/hosts/flip.example/runs?cursor=zz!'), 400);
    });
  });

  describe('task trends', () => {
    it('sorts tasks by p95 and shows the task that slows down, its slowest host and its trend', async () => {
      const res = await get('/v1/tasks');
      expect(res.status).toBe(200);
      const tasks = res.body as TaskTrend[];
      // Which task is slowest overall depends on the machine's load; the ordering is checked below.
      const wait = tasks.find((t) => t.task === 'wait a while')!;
      expect(wait).toMatchObject({
        task: 'wait a while',
        action: 'ansible.builtin.command',
        playbook: 'site.yml',
        project_id: project,
        runs: 5,
      });
      expect(wait.task_path).toMatch(/^site\.yml:\d+$/);
      expect(wait.slowest_hosts[0]!.host).toBe('slow.example');
      // 1.5 s more each run from none in the first (more than a loaded machine adds to a task): the newer half's median
      // is above the older half's.
      expect(wait.trend_pct).toBeGreaterThan(0);
      expect(wait.last_s).toBeGreaterThanOrEqual(wait.p50_s);
      expect(wait.p95_s).toBeGreaterThanOrEqual(wait.p50_s);
      for (let i = 1; i < tasks.length; i++) expect(tasks[i - 1]!.p95_s).toBeGreaterThanOrEqual(tasks[i]!.p95_s);
      expect(tasks.map((t) => t.task)).toEqual(expect.arrayContaining(['count this run', 'desired config']));

      const detail = await get(`/v1/tasks/${wait.key}`);
      expect(detail.status).toBe(200);
      const points = (detail.body as TaskDetail).points;
      expect(points).toHaveLength(5);
      // Oldest first, each at least the sleep its run was given (1.5 s × (its count - 1)): a lower bound only, as a
      // loaded machine adds seconds of its own to any run, so one run is not always measured slower than the one before.
      points.forEach((point, i) => expect(point.duration_s).toBeGreaterThanOrEqual(1.5 * i - 0.05));
      expect(Object.keys(points[0]!.hosts)).toEqual(['slow.example']);

      // Only the tasks slow.example ran, each with its figures there (on a loaded machine another task's p95 there can
      // pass the wait's, so the wait is looked up rather than expected first).
      const onHost = (await get(`/v1/tasks?host=slow.example`)).body as TaskTrend[];
      expect(onHost.find((t) => t.key === wait.key)).toMatchObject({ slowest_hosts: [{ host: 'slow.example' }] });
      expect(onHost.map((t) => t.task)).not.toContain('desired config');
      for (let i = 1; i < onHost.length; i++) expect(onHost[i - 1]!.p95_s).toBeGreaterThanOrEqual(onHost[i]!.p95_s);
      expect((await get(`/v1/tasks?host=flip.example`)).body.map((t: TaskTrend) => t.task)).not.toContain(
        'wait a while',
      );
      expect((await get('/v1/tasks?playbook=none.yml')).body).toEqual([]);
      expect((await get('/v1/tasks', viewer.token)).body).toEqual([]);
      expectProblem(await get(`/v1/tasks/${wait.key}`, viewer.token), 404);
      expectProblem(await get('/v1/tasks/0123456789abcdef01234567'), 404);
      expectProblem(await get('/v1/tasks/not-a-key'), 400);
      expectProblem(await get('/v1/tasks?window=1'), 400);
      expectProblem(await get('/v1/tasks?window=501'), 400);
    });
  });

  describe('drift', () => {
    let drifting: DriftItem[];

    it('lists what the dry run found changed, with diffs, never a no_log diff', async () => {
      const res = await get('/v1/drift?host=drift.example');
      expect(res.status).toBe(200);
      drifting = res.body as DriftItem[];
      const byTask = (task: string, item?: string) => drifting.find((d) => d.task === task && d.item === item);
      expect(drifting).toHaveLength(4);
      const conf = byTask('desired config')!;
      expect(conf).toMatchObject({
        host: 'drift.example',
        playbook: 'site.yml',
        project_id: project,
        commit: repo.head('main'),
        inventory_id: inventory,
        action: 'ansible.builtin.copy',
        no_log: false,
        found_in_run_id: dryRun.id,
        found_at: dryRun.finished_at,
        reconcile_run_id: null,
      });
      expect(conf.task_path).toMatch(/^site\.yml:\d+$/);
      expect(JSON.stringify(conf.diff)).toContain('desired');
      expect(JSON.stringify(conf.diff)).toContain('actual');
      expect(byTask('desired items', 'alpha')).toBeDefined();
      expect(byTask('desired items', 'beta')).toBeDefined();
      const secret = byTask('secret config')!;
      expect(secret).toMatchObject({ no_log: true, diff: null });
      expect(JSON.stringify(drifting)).not.toContain('s3cret-canary');
      expect((await get('/v1/drift?host=slow.example')).body).toEqual([]);
      expect((await get(`/v1/drift?inventory=${inventory}&playbook=site.yml`)).body).toHaveLength(4);
      expect((await get('/v1/drift', viewer.token)).body).toEqual([]);
    });

    it('lists the hosts the dry run could not assess, with the reason', async () => {
      const res = await get('/v1/drift/unassessed');
      expect(res.status).toBe(200);
      const hosts = res.body as UnassessedHost[];
      expect(hosts.map((x) => x.host)).toEqual(['down.example', 'flip.example']);
      expect(hosts[0]!.reason).toMatch(/^unreachable: /);
      expect(hosts[1]).toMatchObject({ reason: 'failed: task "fail every other run": odd run 5', run_id: dryRun.id });
      expect((await get('/v1/drift/unassessed', viewer.token)).body).toEqual([]);
    });

    it('reconcile: 409 without drift, 403 for viewers, 400 for bad bodies', async () => {
      const post = (body: unknown, token = operator.token) =>
        h.http
          .post('/v1/drift/reconcile')
          .set(bearer(token))
          .send(body as object);
      expectProblem(await post({ host: 'slow.example' }), 409);
      expectProblem(await post({ host: 'drift.example' }, viewer.token), 403);
      expectProblem(await post({ host: 'drift.example' }, other.token), 409);
      expectProblem(await post({}), 400);
      expectProblem(await post({ host: 7 }), 400);
      expectProblem(await post({ host: 'drift.example', inventory_id: 'nope' }), 400);
      expectProblem(await post({ host: 'drift.example', extra: 1 }), 400);
      expectProblem(await post({ host: '\ud800' }), 400);
      expect(
        (await get('/v1/drift?host=drift.example')).body.every((d: DriftItem) => d.reconcile_run_id === null),
      ).toBe(true);
    });

    it('reconcile: a held run of the same playbook, commit and inventory on that host; approved, it fixes the drift', async () => {
      const res = await h.http
        .post('/v1/drift/reconcile')
        .set(bearer(operator.token))
        .send({ host: 'drift.example', playbook: 'site.yml', inventory_id: inventory });
      expect(res.status).toBe(201);
      const held = res.body.run as Run;
      expect(held).toMatchObject({
        status: 'held',
        origin: 'reconcile',
        check: false,
        limit: 'drift.example',
        project_id: project,
        inventory_id: inventory,
        commit: repo.head('main'),
      });
      expect(res.headers.location).toBe(`/v1/runs/${held.id}`);
      expect((res.body.resources as DriftItem[]).map((d) => d.id).sort()).toEqual(drifting.map((d) => d.id).sort());
      const linked = (await get('/v1/drift?host=drift.example')).body as DriftItem[];
      expect(linked.every((d) => d.reconcile_run_id === held.id)).toBe(true);

      const approve = await h.http.post(`/v1/runs/${held.id}/approve`).set(bearer(h.admin.token)).send({});
      expect(approve.status).toBe(200);
      const done = await finished(held.id);
      expect(done.conclusion).toBe('succeeded');
      expect((await get('/v1/drift?host=drift.example')).body).toEqual([]);
      const fixed = (await get(`/v1/runs/${held.id}/drift`)).body as FixedDriftItem[];
      expect(fixed).toHaveLength(4);
      for (const d of fixed)
        expect(d).toMatchObject({ resolved_by_run_id: held.id, fixed: true, reconcile_run_id: held.id });
      expect(fs.readFileSync(path.join(stateDir, 'drift.example.conf'), 'utf8')).toBe('desired\n');
      // The reconcile run counts in drift.example's history as a real run that changed it.
      expect(((await get('/v1/hosts/drift.example/runs?limit=1')).body as HostRun[])[0]).toMatchObject({
        run_id: held.id,
        outcome: 'changed',
        check: false,
        origin: 'reconcile',
      });
      expect((await get(`/v1/runs/${realRuns[0]}/drift`)).body).toEqual([]);
      expectProblem(await get(`/v1/runs/${held.id}/drift`, viewer.token), 404);
    });

    it('a later dry run that finds a resource unchanged clears it; one that finds it changed again reopens it', async () => {
      fs.writeFileSync(path.join(stateDir, 'drift.example.beta'), 'tampered\n');
      // The run that changed beta back is a real run: beta's earlier finding was fixed, this one is new.
      await run(operator.token, spec({ check: true, limit: 'drift.example' }));
      const now = (await get('/v1/drift?host=drift.example')).body as DriftItem[];
      expect(now.map((d) => [d.task, d.item ?? null])).toEqual([['desired items', 'beta']]);
    });
  });
});
