// Observation pages in a real browser against a real `baton serve` running real ansible: local hosts whose
// behaviour the playbook steers (one fails every other run, one is unreachable, one drifts, one task sleeps longer
// each run). Fleet ranking, flaky badge and filters kept in the address; a host's history with its failed tasks;
// task trends and a task's duration chart; drift with rendered diffs, a hidden no_log diff, reconcile proposed by
// an operator, approved by an admin, and the drift gone once it has run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Run, TaskDetail, TaskTrend } from '@baton/contracts';
import type { Page } from 'playwright-core';
import { tempDir, waitFor } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  setupUi,
  signIn,
  tokenFor,
  visited,
  WAIT_MS,
  withPage,
} from './support/browser.js';

// Unsandboxed: the playbook keeps its per-host state in a directory this test also writes (the sandbox has a
// private /tmp).
const { ui, browser } = setupUi({ env: { BATON_SANDBOX: 'off' } });

const SITE = `- hosts: all
  gather_facts: false
  tasks:
    - name: count this run
      ansible.builtin.shell: 'n=$(cat "{{ state_dir }}/{{ inventory_hostname }}.count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "{{ state_dir }}/{{ inventory_hostname }}.count"; echo $n'
      register: count
      check_mode: false
      changed_when: false
    - name: wait a while
      # None the first run, then 5 s more each run: a loaded machine adds seconds to every task, which made 1.5 s,
      # 3 s, 4.5 s read as steady once, and 0, 2, 4 s as faster once on a slow, loaded machine (the first run's task
      # took longer than the third's 4 s sleep); from none to 10 s the trend is far above the 5 % the page calls steady.
      ansible.builtin.command: "sleep {{ ((count.stdout | int) - 1) * 5 }}"
      when: inventory_hostname == 'slow.example'
      changed_when: false
      check_mode: false
    - name: fail every other run
      ansible.builtin.fail:
        msg: "odd run {{ count.stdout }}"
      when: inventory_hostname == 'flip.example' and (count.stdout | int) is odd
    - name: desired config
      ansible.builtin.copy:
        content: "line one\\ndesired\\nline three\\n"
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
const PYTHON = process.env.BATON_TEST_PYTHON ?? '/usr/bin/python3';
const LOCAL_HOSTS = ['flip.example', 'slow.example', 'drift.example', '2001:db8::1', 'ünï-01.example'];
const INVENTORY = [
  'all:',
  '  hosts:',
  ...LOCAL_HOSTS.map((h) => `    "${h}": {ansible_connection: local, ansible_python_interpreter: ${PYTHON}}`),
  // A closed port on loopback: unreachable at once.
  '    down.example: {ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh, ansible_ssh_common_args: "-o ConnectTimeout=3"}',
  '',
].join('\n');

let stateDir: string;
let project: string;
let inventory: string;
let operator: { password: string; token: string };
let viewer: { password: string };
const runs: Run[] = [];

/** A bare git repository reached by file:// holding site.yml. */
function siteRepo(root: string): string {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=UI test', '-c', 'user.email=ui@test.invalid', ...args], { cwd });
  const bare = path.join(root, 'site.git');
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  git(root, 'init', '--bare', '--quiet', '--initial-branch=main', bare);
  git(work, 'init', '--quiet', '--initial-branch=main');
  git(work, 'remote', 'add', 'origin', bare);
  fs.writeFileSync(path.join(work, 'site.yml'), SITE);
  git(work, 'add', 'site.yml');
  git(work, 'commit', '--quiet', '-m', 'site');
  git(work, 'push', '--quiet', 'origin', 'main');
  return `file://${bare}`;
}

async function finished(id: string): Promise<Run> {
  return waitFor(
    `run ${id} to finish`,
    async () => {
      const r = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${id}`);
      return r.body.status === 'finished' ? r.body : undefined;
    },
    180_000,
  );
}

/** A run of site.yml on the fleet inventory as the operator, to its end. */
async function siteRun(extra: Record<string, unknown> = {}): Promise<Run> {
  const r = await call<Run>(ui(), operator.token, 'POST', '/v1/runs', {
    playbook: 'site.yml',
    project_id: project,
    inventory_id: inventory,
    extra_vars: { state_dir: stateDir },
    ...extra,
  });
  if (r.status !== 201) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
  return finished(r.body.id);
}

async function grant(subject: string, object: string): Promise<void> {
  const g = await call(ui(), ui().adminToken, 'POST', '/v1/grants', { subject, object, level: 'use' });
  if (g.status !== 201) throw new Error(`grant: ${g.status} ${JSON.stringify(g.body)}`);
}

beforeAll(async () => {
  const root = tempDir('baton-ui-observation-');
  stateDir = path.join(root, 'state');
  fs.mkdirSync(stateDir);
  const prj = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/projects', {
    name: 'site',
    git_url: siteRepo(root),
  });
  expect(prj.status).toBe(201);
  project = prj.body.id;
  const inv = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/inventories', {
    name: 'fleet',
    content: INVENTORY,
  });
  expect(inv.status).toBe(201);
  inventory = inv.body.id;
  const op = await createUser(ui(), 'obs-operator', 'operator');
  operator = { password: op.password, token: await tokenFor(ui(), 'obs-operator', op.password) };
  const vw = await createUser(ui(), 'obs-viewer', 'viewer');
  viewer = { password: vw.password };
  for (const object of [project, inventory]) {
    await grant(op.id, object);
    await grant(vw.id, object);
  }
  // Two real runs (flip.example fails the first), then the drift the dry run will find on drift.example: a wrong
  // line, a wrong item, a missing one and a secret. The dry run is run 3: flip.example fails again (flipped twice).
  runs.push(await siteRun(), await siteRun());
  fs.writeFileSync(path.join(stateDir, 'drift.example.conf'), 'line one\nactual\nline three\n');
  fs.writeFileSync(path.join(stateDir, 'drift.example.alpha'), 'wrong\n');
  fs.rmSync(path.join(stateDir, 'drift.example.beta'));
  fs.writeFileSync(path.join(stateDir, 'drift.example.secret'), 'leaked-on-host\n');
  runs.push(await siteRun({ check: true }));
}, 600_000);

const search = (page: Page) => new URL(page.url()).searchParams;

/** Reads `probe` until `done` holds of it (pages refetch and re-render), then returns what it read last. */
async function settled<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Waits until `probe` reads `want` (fails with what it read last). */
async function expectSettled<T>(probe: () => Promise<T>, want: T): Promise<void> {
  const same = (v: T) => JSON.stringify(v) === JSON.stringify(want);
  expect(await settled(probe, same)).toEqual(want);
}

/** The data-host of the rows of a table, in order, once they equal `want`. */
async function expectHosts(page: Page, testId: string, want: string[]): Promise<void> {
  const rows = page.getByTestId(testId).locator('tbody tr[data-host]');
  await expectSettled(() => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-host'))), want);
}

describe('fleet', () => {
  it('ranks the unreachable host first, flags the flipping host as flaky with why, and keeps filters in the address', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      const rows = page.getByTestId('fleet').locator('tbody tr[data-host]');
      await rows.first().waitFor();
      const hosts = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-host')));
      expect(hosts.slice(0, 2)).toEqual(['down.example', 'flip.example']);
      expect([...hosts].sort()).toEqual([...LOCAL_HOSTS, 'down.example'].sort());

      const down = page.locator('tr[data-host="down.example"]');
      expect(await down.locator('[data-outcome="unreachable"]').textContent()).toBe('unreachable');
      expect(await down.locator('[data-rate]').textContent()).toBe('100%');
      expect(await down.getByRole('link', { name: runs[2]!.id }).count()).toBe(1);
      expect(await down.locator('[data-flaky]').count()).toBe(0);

      const flip = page.locator('tr[data-host="flip.example"]');
      expect(await flip.locator('[data-rate]').textContent()).toBe('67%');
      const flaky = flip.locator('details[data-flaky="true"]');
      expect(await flaky.locator('summary').getAttribute('title')).toContain(`${runs[1]!.id} (failed → succeeded)`);
      await flaky.locator('summary').click();
      const reason = flaky.locator('.flaky-reason');
      await reason.waitFor();
      expect(await reason.textContent()).toContain(`${runs[2]!.id} (succeeded → failed)`);
      // Off the row: a hovered row's tint is not what the contrast check should judge.
      await page.mouse.move(0, 0);
      await visited(page, 'observation-fleet');

      // Flaky only: the address says so, the table has only flip.example.
      await page.getByLabel('Flaky hosts only').check();
      await expectHosts(page, 'fleet', ['flip.example']);
      expect(search(page).get('flaky')).toBe('true');
      // A window of one run: nothing flips, nothing is flaky.
      await page.getByLabel('Window (runs per host)').fill('1');
      await page.getByLabel('Window (runs per host)').press('Enter');
      await page.getByText('No hosts match these filters').waitFor();
      expect(search(page).get('window')).toBe('1');
      await visited(page, 'observation-fleet-empty');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expectHosts(page, 'fleet', hosts as string[]);
      expect(page.url()).not.toContain('?');

      // Inventory and playbook filters.
      await page.getByLabel('Inventory', { exact: true }).selectOption({ label: 'fleet' });
      await expectSettled(async () => search(page).get('inventory'), inventory);
      await expectHosts(page, 'fleet', hosts as string[]);
      await page.getByLabel('Playbook', { exact: true }).fill('other.yml');
      await page.getByLabel('Playbook', { exact: true }).press('Enter');
      await page.getByText('No hosts match these filters').waitFor();
      expect(search(page).get('playbook')).toBe('other.yml');
      // The empty list's own way out clears every filter, as the bar's button does.
      await page.getByRole('button', { name: 'clear them all' }).click();
      await expectHosts(page, 'fleet', hosts as string[]);
      expect(page.url()).not.toContain('?');
      expect(await page.getByLabel('Playbook', { exact: true }).inputValue()).toBe('');

      // A shared link opens the same filtered view; a bad value shows the API's message next to its control.
      await page.goto(`${ui().base}/ui/fleet?flaky=true&window=5`);
      await expectHosts(page, 'fleet', ['flip.example']);
      expect(await page.getByLabel('Flaky hosts only').isChecked()).toBe(true);
      await page.goto(`${ui().base}/ui/fleet?window=500`);
      await page.locator('[data-field="window"]').getByRole('alert').waitFor();
    });
  });
});

describe('host history', () => {
  it("shows a host's runs newest first with the failed tasks' messages, and links to its tasks", async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/fleet`);
      await page.getByRole('link', { name: 'flip.example', exact: true }).click();
      await page.getByRole('heading', { name: 'Host flip.example' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/ui/hosts/flip.example');
      const table = page.getByTestId('host-runs');
      await table.locator('tr[data-run]').first().waitFor();
      expect(
        await table.locator('tr[data-run]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-run'))),
      ).toEqual([...runs].reverse().map((r) => r.id));
      // The dry run is marked, and failed runs list their failed task and message under them.
      const dry = table.locator(`tr[data-run="${runs[2]!.id}"]`);
      expect(await dry.locator('[data-check="true"]').count()).toBe(1);
      expect(await dry.locator('[data-outcome="failed"]').count()).toBe(1);
      const failures = table.locator(`tr[data-failures="${runs[2]!.id}"]`);
      expect(await failures.textContent()).toContain('fail every other run');
      expect(await failures.textContent()).toContain('odd run 3');
      expect(await table.locator(`tr[data-failures="${runs[0]!.id}"]`).textContent()).toContain('odd run 1');
      expect(await table.locator(`tr[data-failures="${runs[1]!.id}"]`).count()).toBe(0);
      // Its row of the fleet: the failure rate over its last runs, flaky and why.
      const summary = page.getByTestId('host-summary');
      expect(await summary.textContent()).toContain('2 failed or unreachable (67%)');
      expect(await summary.locator('details[data-flaky="true"]').count()).toBe(1);
      await visited(page, 'observation-host');

      await page.getByRole('link', { name: 'Tasks on this host' }).click();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      expect(search(page).get('host')).toBe('flip.example');
      await page.getByTestId('tasks').locator('tr[data-task]').first().waitFor();
      const names = await page.getByTestId('tasks').locator('tr[data-task] th a').allTextContents();
      expect(names).toContain('fail every other run');
      expect(names).not.toContain('wait a while');
    });
  });

  it('opens hosts whose names hold colons and unicode', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      for (const host of ['2001:db8::1', 'ünï-01.example']) {
        await page.goto(`${ui().base}/ui/fleet`);
        await page.getByRole('link', { name: host, exact: true }).click();
        await page.getByRole('heading', { name: `Host ${host}` }).waitFor();
        await expectSettled(() => page.getByTestId('host-runs').locator('tr[data-run]').count(), runs.length);
        // Reloading the address works too (the server hands the page to any /ui path).
        await page.reload();
        await page.getByRole('heading', { name: `Host ${host}` }).waitFor();
        await page.getByTestId('host-runs').locator('tr[data-run]').first().waitFor();
      }
      await visited(page, 'observation-host-unicode');
      // A host no run reported on: the empty state, not an error.
      await page.goto(`${ui().base}/ui/hosts/${encodeURIComponent('[2001:db8::9]')}`);
      await page.getByText('No runs on this host').waitFor();
      expect(await page.locator('[role="alert"]').count()).toBe(0);
    });
  });
});

describe('task trends', () => {
  it('shows the task that slows down with its trend, and charts its durations', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).click();
      const rows = page.getByTestId('tasks').locator('tr[data-task]');
      await rows.first().waitFor();
      // The row of the task that slows down (which task has the highest p95 depends on the machine's load: the API
      // test checks the order by p95).
      const slowing = rows.filter({ has: page.locator('th a', { hasText: /^wait a while$/ }) });
      expect(await slowing.count()).toBe(1);
      expect(await slowing.textContent()).toContain('ansible.builtin.command');
      expect(await slowing.textContent()).toMatch(/site\.yml:\d+/);
      // The trend shown is the API's. Its direction is the API test's to check (1.5 s more each run there): here ansible
      // runs at the lowest CPU priority beside two other test files, browsers and servers, so a 0 s sleep has been
      // measured longer than a 10 s one.
      const slowingKey = (await slowing.locator('th a').getAttribute('href'))!.split('/').pop()!;
      const listed = await call<TaskTrend[]>(ui(), ui().adminToken, 'GET', '/v1/tasks');
      const pct = listed.body.find((t) => t.key === slowingKey)!.trend_pct!;
      const kind = Math.abs(pct) < 5 ? 'steady' : pct > 0 ? 'slower' : 'faster';
      const trend = slowing.locator('[data-trend]');
      expect(await trend.getAttribute('data-trend')).toBe(kind);
      const shown = Math.abs(pct) >= 10 ? Math.round(Math.abs(pct)) : Math.round(Math.abs(pct) * 10) / 10;
      const prefix = { slower: '▲ \\+', faster: '▼ −', steady: '≈ [+−±]' }[kind];
      const figure = String(shown).replace('.', '\\.');
      expect(await trend.textContent()).toMatch(new RegExp(`^${prefix}${figure}% \\(${kind}\\)$`));
      expect(await slowing.locator('.slowest-hosts li').first().textContent()).toContain('slow.example');
      await visited(page, 'observation-tasks');

      // The host filter goes to the address and narrows the rows.
      await page.getByLabel('Host', { exact: true }).fill('flip.example');
      await page.getByLabel('Host', { exact: true }).press('Enter');
      await expectSettled(async () => search(page).get('host'), 'flip.example');
      const onFlip = await settled(
        () => rows.locator('th a').allTextContents(),
        (names) => names.length > 0 && !names.includes('wait a while'),
      );
      expect(onFlip).toContain('fail every other run');
      expect(onFlip).not.toContain('wait a while');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expectSettled(() => slowing.count(), 1);

      await slowing.locator('th a').click();
      await page.getByRole('heading', { name: 'Task wait a while' }).waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/ui\/tasks\/[0-9a-f]{24}$/);
      const chart = page.getByRole('img', { name: /wait a while: duration over 3 runs/ });
      await chart.waitFor();
      expect(await chart.locator('circle[data-point]').count()).toBe(3);
      expect(
        await chart.locator('circle[data-point]').evaluateAll((cs) => cs.map((c) => c.getAttribute('data-point'))),
      ).toEqual(runs.map((r) => r.id));
      // A longer duration sits higher (smaller y). The durations come from the API: on a loaded machine a later run
      // is not always slower, so the chart is checked against what was measured, not against the sleeps.
      const ys = await chart
        .locator('circle[data-point]')
        .evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('cy'))));
      const key = new URL(page.url()).pathname.split('/').pop()!;
      const measured = await call<TaskDetail>(ui(), ui().adminToken, 'GET', `/v1/tasks/${key}`);
      // In the chart's order (its points are the runs, oldest first).
      const byRun = new Map(measured.body.points.map((p) => [p.run_id, p.duration_s]));
      const durations = runs.map((r) => byRun.get(r.id)!);
      expect(durations).toHaveLength(3);
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++)
          if (durations[i]! > durations[j]!) expect({ i, j, higher: ys[i]! < ys[j]! }).toEqual({ i, j, higher: true });
      expect(new Set(ys).size).toBeGreaterThan(1);
      expect(await chart.locator('circle[data-point] title').first().textContent()).toContain(runs[0]!.id);
      await page.getByText(/Details: the 3 runs charted/).click();
      await expectSettled(() => page.getByTestId('task-points').locator('tbody tr').count(), 3);
      await visited(page, 'observation-task');
    });
  });
});

describe('drift', () => {
  it('shows a viewer the drift with diffs but no Reconcile button', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'obs-viewer', viewer.password);
      await page.goto(`${ui().base}/ui/drift`);
      await page.locator('[data-drift-host="drift.example"] [data-drift]').first().waitFor();
      expect(await page.locator('[data-drift]').count()).toBe(4);
      expect(await page.getByRole('button', { name: 'Reconcile' }).count()).toBe(0);
    });
  });

  // A real run of the playbook inside (up to 180 s to finish, as every run here): more than the default 60 s allows
  // on a slow, loaded machine.
  it('renders the diffs, hides the no_log one, lists hosts not assessed; reconcile proposes a held run, approved it fixes the drift', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'obs-operator', operator.password);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Drift' }).click();
      const host = page.locator('[data-drift-host="drift.example"]');
      await host.locator('[data-drift]').first().waitFor();
      expect(await page.locator('[data-drift-host]').count()).toBe(1);
      expect(await host.locator('[data-drift]').count()).toBe(4);

      // The wrong line: removed (what the host has) and added (what the playbook wants), with signs, in context.
      const conf = host.locator('[data-task="desired config"]');
      expect(await conf.locator('[data-line="del"]').allTextContents()).toEqual(['- actual\n']);
      expect(await conf.locator('[data-line="add"]').allTextContents()).toEqual(['+ desired\n']);
      expect(await conf.locator('[data-line="same"]').allTextContents()).toEqual(['  line one\n', '  line three\n']);
      expect(await conf.getByRole('link', { name: runs[2]!.id }).count()).toBe(1);
      const alpha = host.locator('[data-task="desired items"]').filter({ hasText: 'alpha' });
      expect(await alpha.locator('[data-line="del"]').allTextContents()).toEqual(['- wrong\n']);
      expect(await alpha.locator('[data-line="add"]').allTextContents()).toEqual(['+ alpha\n']);
      const secret = host.locator('[data-task="secret config"]');
      expect(await secret.locator('[data-diff="hidden"]').textContent()).toContain('The diff is hidden');
      expect(await secret.locator('[data-line]').count()).toBe(0);
      expect(await page.content()).not.toContain('s3cret-canary');
      expect(await page.content()).not.toContain('leaked-on-host');

      // Hosts the dry run could not assess, with the reason.
      await expectHosts(page, 'unassessed', ['down.example', 'flip.example']);
      expect(await page.locator('[data-testid="unassessed"] tr[data-host="down.example"]').textContent()).toContain(
        'unreachable',
      );
      expect(await page.locator('[data-testid="unassessed"] tr[data-host="flip.example"]').textContent()).toContain(
        'odd run 3',
      );
      await visited(page, 'observation-drift');

      // Filters in the address.
      await page.getByLabel('Host', { exact: true }).fill('slow.example');
      await page.getByLabel('Host', { exact: true }).press('Enter');
      await page.getByText('No drift matches these filters').waitFor();
      expect(search(page).get('host')).toBe('slow.example');
      await page.getByLabel('Host', { exact: true }).fill('drift.example');
      await page.getByLabel('Host', { exact: true }).press('Enter');
      await host.locator('[data-drift]').first().waitFor();

      // Reconcile asks first, then shows the held run.
      await host.getByRole('button', { name: 'Reconcile' }).click();
      const dialog = page.getByRole('dialog', { name: 'Reconcile drift.example?' });
      await dialog.waitFor();
      await visited(page, 'observation-drift-confirm');
      await dialog.getByRole('button', { name: 'Propose the run' }).click();
      // The card names the proposed run (its resources now link to it), held for approval.
      const note = host.locator('[data-reconcile-run]');
      await note.locator('[data-status="held"]').waitFor();
      expect(await note.count()).toBe(1);
      expect(await note.textContent()).toContain('waiting for approval');
      const link = note.getByTestId('reconcile-run');
      const heldId = (await link.textContent())!;
      expect(heldId).toMatch(/^run_/);
      expect(await note.getAttribute('data-reconcile-run')).toBe(heldId);
      await page.mouse.move(0, 0);
      await visited(page, 'observation-drift-reconcile');
      const held = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${heldId}`);
      expect(held.body).toMatchObject({ status: 'held', origin: 'reconcile', check: false, limit: 'drift.example' });

      // The held run's page lists the drift it should fix.
      await link.click();
      const panel = page.getByTestId('run-drift');
      await panel.locator('[data-drift]').first().waitFor();
      expect(await panel.locator('[data-drift]').count()).toBe(4);
      expect(await panel.locator('[data-fixed="pending"]').count()).toBe(4);
      await visited(page, 'observation-reconcile-run-held');

      // An admin approves; once the run has finished, the drift is fixed and gone from the drift page.
      const approve = await call(ui(), ui().adminToken, 'POST', `/v1/runs/${heldId}/approve`, {});
      expect(approve.status).toBe(200);
      expect((await finished(heldId)).conclusion).toBe('succeeded');
      await expectSettled(() => panel.locator('[data-fixed="true"]').count(), 4);
      await visited(page, 'observation-reconcile-run-done');
      await page.goto(`${ui().base}/ui/drift?host=drift.example`);
      await page.getByText('No drift matches these filters').waitFor();
      expect(await page.locator('[data-drift]').count()).toBe(0);
      expect(fs.readFileSync(path.join(stateDir, 'drift.example.conf'), 'utf8')).toBe(
        'line one\ndesired\nline three\n',
      );
    });
  }, 240_000);
});
