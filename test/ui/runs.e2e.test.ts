// Runs in the web UI: submitting through the form (browser-side and server-side errors next to their fields), the
// history's filters kept in the address, cursor paging, live status, and the approval queue with four eyes.
import { describe, expect, it } from '@jest/globals';
import type { Run } from '@baton/contracts';
import type { Page } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, waitFor } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  localInventory,
  openPage,
  setupUi,
  signIn,
  tokenFor,
  visited,
  WAIT_MS,
  withPage,
} from './support/browser.js';

const { ui, browser } = setupUi();

const PING = `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n`;
/** No embedded executor holds this worker label: a run asking for it stays pending and costs no ansible. */
const PARKED = ['parked-for-ui-test'];

async function submit(token: string, body: Record<string, unknown>): Promise<Run> {
  const r = await call<Run>(ui(), token, 'POST', '/v1/runs', body);
  if (r.status !== 201) throw new Error(`submit: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function finished(id: string): Promise<Run> {
  return waitFor(`run ${id} to finish`, async () => {
    const r = await call<Run>(ui(), ui().adminToken, 'GET', `/v1/runs/${id}`);
    return r.body.status === 'finished' ? r.body : undefined;
  });
}

/** A run that stays pending (parked), then canceled: finished/canceled without running ansible. */
async function canceledRun(inventory_id: string): Promise<Run> {
  const run = await submit(ui().adminToken, { playbook: PING, inventory_id, labels: PARKED });
  const c = await call<Run>(ui(), ui().adminToken, 'POST', `/v1/runs/${run.id}/cancel`);
  expect(c.status).toBe(200);
  return c.body;
}

/** A bare git repository reached by file:// holding site.yml, tagged v1, then changed on main after the tag. */
function taggedRepo(): { url: string; tagged: string } {
  const root = tempDir('ui-runs-git-');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=UI test', '-c', 'user.email=ui@test.invalid', ...args], {
      cwd,
      encoding: 'utf8',
    }).trim();
  const bare = path.join(root, 'playbooks.git');
  const work = path.join(root, 'work');
  fs.mkdirSync(work);
  git(root, 'init', '--bare', '--quiet', '--initial-branch=main', bare);
  git(work, 'init', '--quiet', '--initial-branch=main');
  git(work, 'remote', 'add', 'origin', bare);
  fs.writeFileSync(path.join(work, 'site.yml'), PING);
  git(work, 'add', 'site.yml');
  git(work, 'commit', '--quiet', '-m', 'site');
  git(work, 'tag', 'v1');
  const tagged = git(work, 'rev-parse', 'HEAD');
  fs.writeFileSync(path.join(work, 'site.yml'), PING.replace('ping:', 'ping: {}'));
  git(work, 'commit', '--quiet', '-am', 'after the tag');
  git(work, 'push', '--quiet', 'origin', 'main', 'v1');
  return { url: `file://${bare}`, tagged };
}

/** Waits until the history table shows exactly these runs (in any order). */
async function expectRows(page: Page, ids: string[]): Promise<void> {
  const want = [...ids].sort();
  await page
    .waitForFunction(
      (w) => {
        const got = Array.from(document.querySelectorAll('tbody tr[data-run]'))
          .map((r) => r.getAttribute('data-run'))
          .sort();
        return JSON.stringify(got) === JSON.stringify(w);
      },
      want,
      { timeout: WAIT_MS },
    )
    .catch(async (err: unknown) => {
      const got = await page
        .locator('tbody tr[data-run]')
        .evaluateAll((rs) => rs.map((r) => r.getAttribute('data-run')));
      throw new Error(`rows ${JSON.stringify(got)} never became ${JSON.stringify(want)}: ${String(err)}`);
    });
}

const pathOf = (page: Page) => new URL(page.url()).pathname;
const search = (page: Page) => new URL(page.url()).searchParams;

describe('submitting a run', () => {
  it('submits an inline playbook with YAML vars against a stored inventory and lands on the run', async () => {
    await localInventory(ui(), 'form-local');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.getByRole('link', { name: 'New run' }).click();
      await page.getByRole('heading', { name: 'New run' }).waitFor();
      expect(pathOf(page)).toBe('/ui/runs/new');
      await visited(page, 'runs-new');

      await page
        .getByLabel('Playbook YAML')
        .fill(
          `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: "{{ greeting }} {{ numbers | sum }}"\n`,
        );
      await page.getByLabel('Inventory', { exact: true }).selectOption({ label: 'form-local' });
      await page.getByLabel('Extra vars').fill('greeting: hello\nnumbers: [1, 2]\n');
      await page.getByRole('button', { name: 'Submit run' }).click();

      await page.waitForURL(/\/ui\/runs\/run_[A-Za-z0-9]+$/);
      const id = pathOf(page).split('/').pop()!;
      await page.locator('[data-status="succeeded"]').first().waitFor();
      await visited(page, 'run-page-after-submit');
      const run = await finished(id);
      expect(run.extra_vars).toEqual({ greeting: 'hello', numbers: [1, 2] });
      expect(run.playbook).toBe('(inline)');
      expect(run.conclusion).toBe('succeeded');
      expect(run.host_summary).toMatchObject({ total: 2, ok: 2, failed: 0, unreachable: 0 });
    });
  });

  it('shows a vars parse error next to the field and sends nothing', async () => {
    await localInventory(ui(), 'vars-local');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/new`);
      const posts: string[] = [];
      page.on('request', (req) => {
        if (req.method() === 'POST' && new URL(req.url()).pathname === '/v1/runs') posts.push(req.url());
      });
      await page.getByLabel('Playbook YAML').fill(PING);
      await page.getByLabel('Inventory', { exact: true }).selectOption({ label: 'vars-local' });
      const vars = page.getByLabel('Extra vars');
      await vars.fill('region: [eu, us\n');
      await page.getByRole('button', { name: 'Submit run' }).click();
      const err = page.locator('[data-field="extra_vars"]').getByRole('alert');
      await err.filter({ hasText: /Not valid YAML or JSON/ }).waitFor();
      expect(await vars.getAttribute('aria-invalid')).toBe('true');

      // A list is valid YAML but not variables.
      await vars.fill('- a\n- b\n');
      await page.getByRole('button', { name: 'Submit run' }).click();
      await err.filter({ hasText: /mapping of variable names/ }).waitFor();
      await visited(page, 'runs-new-vars-error');
      expect(posts).toEqual([]);
    });
  });

  it("shows the server's 400s next to their fields: no inventory, a limit reading a file, too many shards", async () => {
    await localInventory(ui(), 'bad-local');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/new`);
      await page.getByLabel('Playbook YAML').fill(PING);
      const answer = () =>
        page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/v1/runs');

      let res = answer();
      await page.getByRole('button', { name: 'Submit run' }).click();
      expect((await res).status()).toBe(400);
      await page
        .locator('[data-field="inventory_id"]')
        .getByRole('alert')
        .filter({ hasText: /exactly one of inventory_id and inventory/ })
        .waitFor();

      await page.getByLabel('Inventory', { exact: true }).selectOption({ label: 'bad-local' });
      await page.getByLabel('Limit').fill('@/etc/hosts');
      res = answer();
      await page.getByRole('button', { name: 'Submit run' }).click();
      expect((await res).status()).toBe(400);
      await page
        .locator('[data-field="limit"]')
        .getByRole('alert')
        .filter({ hasText: /must not read hosts from a file/ })
        .waitFor();
      expect(await page.locator('[data-field="inventory_id"]').getByRole('alert').count()).toBe(0);
      await visited(page, 'runs-new-server-error');

      await page.getByLabel('Limit').fill('');
      await page.getByLabel('Shards').fill('5');
      res = answer();
      await page.getByRole('button', { name: 'Submit run' }).click();
      expect((await res).status()).toBe(400);
      await page
        .locator('[data-field="shards"]')
        .getByRole('alert')
        .filter({ hasText: /5 shards need at least 5 hosts/ })
        .waitFor();
      expect(pathOf(page)).toBe('/ui/runs/new');
    });
  });

  it("runs a project's playbook at a tag in check mode; a path missing at the commit shows at the path field", async () => {
    const repo = taggedRepo();
    const project = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/projects', {
      name: 'playbooks',
      git_url: repo.url,
      branch: 'main',
    });
    expect(project.status).toBe(201);
    await localInventory(ui(), 'project-local');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs/new`);
      await page.getByLabel('A playbook in a project (git)').check();
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'playbooks' });
      await page.getByLabel('Inventory', { exact: true }).selectOption({ label: 'project-local' });
      await page.getByLabel('Playbook path').fill('missing.yml');
      await page.getByLabel('Ref').fill('v1');
      await page.getByRole('button', { name: 'Submit run' }).click();
      await page
        .locator('[data-field="playbook"]')
        .getByRole('alert')
        .filter({ hasText: /missing\.yml does not exist/ })
        .waitFor();
      await visited(page, 'runs-new-project-error');

      await page.getByLabel('Playbook path').fill('site.yml');
      await page.getByLabel(/Check mode/).check();
      await page.getByRole('button', { name: 'Submit run' }).click();
      await page.waitForURL(/\/ui\/runs\/run_[A-Za-z0-9]+$/);
      const run = await finished(pathOf(page).split('/').pop()!);
      expect(run).toMatchObject({
        conclusion: 'succeeded',
        project_id: project.body.id,
        playbook: 'site.yml',
        ref: 'v1',
        commit: repo.tagged,
        check: true,
      });

      // The history shows the project at the commit the tag resolved to.
      await page.goto(`${ui().base}/ui/runs?project=${project.body.id}`);
      await expectRows(page, [run.id]);
      const row = page.locator(`tr[data-run="${run.id}"]`);
      await row.getByText(`playbooks@${repo.tagged.slice(0, 8)}`).waitFor();
      await row.getByText('check mode').waitFor();
    });
  });
});

describe('run history', () => {
  it('filters by inventory, conclusion, host, since and status, kept in the address through a reload', async () => {
    const inv = await localInventory(ui(), 'filters-local');
    const succeeded = await submit(ui().adminToken, { playbook: PING, inventory_id: inv });
    const canceled = await canceledRun(inv);
    const pending = await submit(ui().adminToken, { playbook: PING, inventory_id: inv, labels: PARKED });
    expect((await finished(succeeded.id)).conclusion).toBe('succeeded');

    const { page, problems, close } = await openPage(browser());
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs`);
      await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
      await page.getByLabel('Inventory').selectOption({ label: 'filters-local' });
      await expectRows(page, [succeeded.id, canceled.id, pending.id]);
      expect(search(page).get('inventory')).toBe(inv);
      await visited(page, 'runs-history');

      await page.getByLabel('Conclusion').selectOption('canceled');
      await expectRows(page, [canceled.id]);
      await page.getByLabel('Conclusion').selectOption('succeeded');
      await expectRows(page, [succeeded.id]);
      const row = page.locator(`tr[data-run="${succeeded.id}"]`);
      await row.getByText('2 ok').waitFor();
      await row.getByText('filters-local').waitFor();
      await row.getByText('admin').waitFor();

      await page.getByLabel('Conclusion').selectOption('');
      // Only the run that reached host alpha reported an outcome for it.
      const host = page.getByLabel('Host');
      await host.fill('alpha');
      await host.press('Enter');
      await expectRows(page, [succeeded.id]);
      expect(search(page).get('host')).toBe('alpha');
      await host.fill('');
      await host.press('Enter');
      await page.getByLabel('Since').selectOption({ label: 'Last hour' });
      await expectRows(page, [succeeded.id, canceled.id, pending.id]);
      expect(search(page).get('since')).toBe('1h');
      await page.getByLabel('Status').selectOption('pending');
      await expectRows(page, [pending.id]);
      expect(search(page).get('status')).toBe('pending');

      // A bookmark: the filtered view comes back after a reload.
      await page.reload();
      await expectRows(page, [pending.id]);
      expect(await page.getByLabel('Status').inputValue()).toBe('pending');
      expect(await page.getByLabel('Inventory').inputValue()).toBe(inv);
      expect(await page.getByLabel('Since').inputValue()).toBe('1h');

      // A filter that matches nothing says so and offers to clear.
      await page.getByLabel('Status').selectOption('running');
      await page.getByText('No runs match these filters').waitFor();
      await visited(page, 'runs-history-no-match');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await page.waitForFunction(() => !window.location.search.includes('inventory='));

      // The run id links to its page.
      await page.getByLabel('Inventory').selectOption({ label: 'filters-local' });
      await page.getByLabel('Conclusion').selectOption('canceled');
      await expectRows(page, [canceled.id]);
      await page.getByRole('link', { name: canceled.id }).click();
      await page.waitForURL(`**/ui/runs/${canceled.id}`);
      expect(problems).toEqual([]);
    } finally {
      await close();
      await call(ui(), ui().adminToken, 'POST', `/v1/runs/${pending.id}/cancel`);
    }
  });

  it('pages through the cursor with Load more', async () => {
    const inv = await localInventory(ui(), 'paging-local');
    const runs: Run[] = [];
    for (let i = 0; i < 5; i++) runs.push(await canceledRun(inv));
    const newestFirst = runs.map((r) => r.id).reverse();
    const { page, problems, close } = await openPage(browser());
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs?inventory=${inv}&limit=2`);
      await expectRows(page, newestFirst.slice(0, 2));
      const more = page.getByRole('button', { name: 'Load more' });
      await more.click();
      await expectRows(page, newestFirst.slice(0, 4));
      await more.click();
      await expectRows(page, newestFirst);
      await more.waitFor({ state: 'detached' });
      // Newest first, in the order the API gave.
      const order = await page
        .locator('tbody tr[data-run]')
        .evaluateAll((rs) => rs.map((r) => r.getAttribute('data-run')));
      expect(order).toEqual(newestFirst);
      await visited(page, 'runs-history-paged');
      await page.setViewportSize({ width: 390, height: 800 });
      await visited(page, 'runs-history-phone');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows a run submitted elsewhere and follows its status without a reload', async () => {
    const inv = await localInventory(ui(), 'live-local');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/runs?inventory=${inv}`);
      await page.getByText('No runs match these filters').waitFor();
      const marker = await page.evaluate(() => {
        (window as unknown as { stayed: boolean }).stayed = true;
        return true;
      });
      expect(marker).toBe(true);

      const run = await submit(ui().adminToken, { playbook: PING, inventory_id: inv });
      const row = page.locator(`tr[data-run="${run.id}"]`);
      await row.waitFor();
      await row.locator('[data-status="succeeded"]').waitFor();
      expect((await finished(run.id)).conclusion).toBe('succeeded');
      // Same document all along: no reload happened.
      expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
      await visited(page, 'runs-history-live');
    });
  });
});

describe('approvals', () => {
  it('a held run waits for an approver (not its submitter), who approves it from the queue; it then runs', async () => {
    const inv = await localInventory(ui(), 'gated-local');
    const alice = await createUser(ui(), 'alice', 'operator');
    const bob = await createUser(ui(), 'bob', 'operator');
    const policy = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/policies', {
      name: 'gated inventory needs bob',
      match: { inventories: [inv] },
      approvers: { users: [bob.id] },
      min_approvals: 1,
      expires_after_s: 3600,
    });
    expect(policy.status).toBe(201);
    const grant = await call(ui(), ui().adminToken, 'POST', '/v1/grants', {
      subject: alice.id,
      object: inv,
      level: 'use',
    });
    expect(grant.status).toBe(201);
    try {
      const aliceToken = await tokenFor(ui(), 'alice', alice.password);
      const held = await submit(aliceToken, { playbook: PING, inventory_id: inv });
      expect(held.status).toBe('held');

      // The submitter: nothing awaits her (four eyes), so no approve button anywhere in her queue.
      const a = await openPage(browser());
      try {
        await signIn(a.page, ui().base, 'alice', alice.password);
        await a.page.getByRole('link', { name: 'Approvals' }).click();
        await a.page.getByText('Nothing awaits your approval').waitFor();
        expect(await a.page.getByRole('button', { name: /Approve|Decide/ }).count()).toBe(0);
        await visited(a.page, 'approvals-empty');
        expect(a.problems).toEqual([]);
      } finally {
        await a.close();
      }

      const b = await openPage(browser());
      try {
        await signIn(b.page, ui().base, 'bob', bob.password);
        await b.page.goto(`${ui().base}/ui/approvals`);
        const row = b.page.locator(`tr[data-run="${held.id}"]`);
        await row.waitFor();
        await row.getByText('gated inventory needs bob').waitFor();
        await row.getByText('0 of 1 approval').waitFor();
        await row.getByText('alice').waitFor();
        await visited(b.page, 'approvals-queue');

        await row.getByRole('button', { name: 'Decide…' }).click();
        await row.getByLabel('Comment').fill('looks fine');
        await visited(b.page, 'approvals-decide');
        await row.getByRole('button', { name: 'Approve' }).click();
        await row.waitFor({ state: 'detached' });
        await b.page.getByText('Nothing awaits your approval').waitFor();
        expect(b.problems).toEqual([]);
      } finally {
        await b.close();
      }

      const done = await finished(held.id);
      expect(done.conclusion).toBe('succeeded');
      expect(done.approvals).toMatchObject([{ username: 'bob', decision: 'approve', comment: 'looks fine' }]);
    } finally {
      await call(ui(), ui().adminToken, 'DELETE', `/v1/policies/${policy.body.id}`);
    }
  });

  it('a viewer sees runs but no New run button, no submit form and no actions, even on a held run', async () => {
    const victor = await createUser(ui(), 'victor', 'viewer');
    const inv = await localInventory(ui(), 'viewer-local');
    const grant = await call(ui(), ui().adminToken, 'POST', '/v1/grants', {
      subject: victor.id,
      object: inv,
      level: 'use',
    });
    expect(grant.status).toBe(201);
    const policy = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/policies', {
      name: 'admins decide',
      match: { inventories: [inv] },
      approvers: { roles: ['admin'] },
    });
    expect(policy.status).toBe(201);
    const held = await submit(ui().adminToken, { playbook: PING, inventory_id: inv });
    expect(held.status).toBe('held');
    const { page, problems, close } = await openPage(browser());
    try {
      await signIn(page, ui().base, 'victor', victor.password);
      await page.goto(`${ui().base}/ui/runs`);
      await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
      const row = page.locator(`tr[data-run="${held.id}"]`);
      await row.locator('[data-status="held"]').waitFor();
      expect(await page.getByRole('link', { name: 'New run' }).count()).toBe(0);
      const actions = /^(Cancel|Retry|Approve|Reject|Decide…)$/;
      expect(await page.getByRole('button', { name: actions }).count()).toBe(0);
      await visited(page, 'runs-history-viewer');

      // The run's own page shows its state, and still no action.
      await row.getByRole('link', { name: held.id }).click();
      await page.waitForURL(`**/ui/runs/${held.id}`);
      await page.locator('[data-status="held"]').first().waitFor();
      expect(await page.getByRole('button', { name: actions }).count()).toBe(0);
      await visited(page, 'run-page-viewer');

      await page.goto(`${ui().base}/ui/runs/new`);
      await page.getByText('Submitting runs needs the operator or admin role').waitFor();
      expect(await page.getByRole('button', { name: 'Submit run' }).count()).toBe(0);
      await visited(page, 'runs-new-viewer');

      await page.goto(`${ui().base}/ui/approvals`);
      await page.getByText('Nothing awaits your approval').waitFor();
      await visited(page, 'approvals-viewer');
      expect(problems).toEqual([]);
    } finally {
      await close();
      await call(ui(), ui().adminToken, 'POST', `/v1/runs/${held.id}/cancel`);
      await call(ui(), ui().adminToken, 'DELETE', `/v1/policies/${policy.body.id}`);
    }
  });
});
