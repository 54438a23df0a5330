// Governance pages in a real browser against a real `baton serve`: teams, grants ("who can use this"), users, API
// tokens, policies, the audit trail and workers, and what a viewer is (not) offered.
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { openDatabase } from '@baton/db';
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
  withPage,
} from './support/browser.js';

const { ui, browser } = setupUi();

interface GrantBody {
  id: string;
  subject: string;
  object: string;
  level: string;
}

describe('users, teams and grants', () => {
  it('creates a user (password generated, shown once) and a team, adds the user, grants the team use on an inventory from "Who can use this", revokes it', async () => {
    const inventory = await localInventory(ui(), 'granted-inventory');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/users`);
      await page.getByRole('button', { name: 'New user' }).click();
      const form = page.getByRole('form', { name: 'New user' });
      await form.getByLabel('Username').fill('tm-member');
      await form.getByLabel('Role').selectOption('operator');
      // A typed password that is too short is refused next to its field.
      await form.getByLabel(/Generate a strong password/).uncheck();
      await form.getByLabel('Password', { exact: true }).fill('short');
      await form.getByRole('button', { name: 'Create user' }).click();
      await form.locator('[data-field="password"]').getByRole('alert').filter({ hasText: /12/ }).waitFor();
      await visited(page, 'governance-user-new-error');
      await form.getByLabel(/Generate a strong password/).check();
      await form.getByRole('button', { name: 'Create user' }).click();
      const secret = page.getByTestId('secret-value');
      const password = (await secret.textContent())!.trim();
      expect(password).toHaveLength(20);
      await page.getByRole('link', { name: 'tm-member' }).waitFor();
      await visited(page, 'governance-users');
      // The generated password is the account's.
      const memberToken = await tokenFor(ui(), 'tm-member', password);

      await page.goto(`${ui().base}/ui/teams`);
      await page.getByRole('button', { name: 'New team' }).click();
      await page.getByLabel('Name').fill('deployers');
      await visited(page, 'governance-team-new');
      await page.getByRole('button', { name: 'Create team' }).click();
      await page.getByRole('heading', { name: 'deployers', level: 1 }).waitFor();
      const teamId = new URL(page.url()).pathname.split('/').pop()!;
      expect(teamId).toMatch(/^team_/);

      await page.getByLabel('Add a user').selectOption({ label: 'tm-member (operator)' });
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.getByRole('link', { name: 'tm-member' }).waitFor();
      await visited(page, 'governance-team');
      const members = await call<Array<{ username: string }>>(
        ui(),
        ui().adminToken,
        'GET',
        `/v1/teams/${teamId}/members`,
      );
      expect(members.body.map((m) => m.username)).toEqual(['tm-member']);

      // Grant on the inventory from the grants page filtered by the object (its "Who can use this" panel).
      expect((await call(ui(), memberToken, 'GET', `/v1/inventories/${inventory}`)).status).toBe(404);
      await page.goto(`${ui().base}/ui/grants?object=${inventory}`);
      const panel = page.getByRole('region', { name: 'Who can use this' });
      await panel.getByRole('button', { name: 'Grant' }).click();
      await panel.getByRole('alert').filter({ hasText: 'Choose a team.' }).waitFor();
      await panel.getByLabel('Team', { exact: true }).selectOption({ label: 'deployers' });
      await panel.getByLabel('Level').selectOption('use');
      await panel.getByRole('button', { name: 'Grant' }).click();
      await panel.getByRole('row').filter({ hasText: 'deployers' }).filter({ hasText: 'use' }).waitFor();
      await visited(page, 'governance-access-panel');
      const granted = await call<GrantBody[]>(ui(), ui().adminToken, 'GET', `/v1/grants?object=${inventory}`);
      expect(granted.body.map((g) => [g.subject, g.level])).toContainEqual([teamId, 'use']);
      // The member now sees the inventory through the team.
      expect((await call(ui(), memberToken, 'GET', `/v1/inventories/${inventory}`)).status).toBe(200);

      await panel.getByRole('row').filter({ hasText: 'deployers' }).getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await panel.getByRole('row').filter({ hasText: 'deployers' }).waitFor({ state: 'detached' });
      const after = await call<GrantBody[]>(ui(), ui().adminToken, 'GET', `/v1/grants?object=${inventory}`);
      expect(after.body.map((g) => g.subject)).not.toContain(teamId);
      expect((await call(ui(), memberToken, 'GET', `/v1/inventories/${inventory}`)).status).toBe(404);
    });
  });
});

describe('user administration', () => {
  it("changes a user's role, resets the password (shown once) and deletes the user, whose token then fails", async () => {
    const user = await createUser(ui(), 'gov-changing', 'viewer');
    const oldToken = await tokenFor(ui(), 'gov-changing', user.password);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/users/${user.id}`);
      await page.getByRole('heading', { name: 'gov-changing', level: 1 }).waitFor();
      const roleForm = page.getByRole('form', { name: 'Role and e-mail' });
      await roleForm.getByLabel('Role').selectOption('operator');
      await roleForm.getByLabel('E-mail').fill('not an address');
      await roleForm.getByRole('button', { name: 'Save' }).click();
      await roleForm.locator('[data-field="email"]').getByRole('alert').waitFor();
      await roleForm.getByLabel('E-mail').fill('changing@example.com');
      await roleForm.getByRole('button', { name: 'Save' }).click();
      await roleForm.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const stored = await call<{ role: string; email: string }>(ui(), ui().adminToken, 'GET', `/v1/users/${user.id}`);
      expect(stored.body).toMatchObject({ role: 'operator', email: 'changing@example.com' });

      await page.getByRole('form', { name: 'Reset password' }).getByRole('button', { name: 'Reset password' }).click();
      const password = (await page.getByTestId('secret-value').textContent())!.trim();
      await visited(page, 'governance-user');
      // The new password works; the old session ended with it.
      const newToken = await tokenFor(ui(), 'gov-changing', password);
      expect((await call(ui(), oldToken, 'POST', '/v1/auth/check', {})).status).toBe(401);

      await page.getByRole('button', { name: 'Delete user' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText(/API tokens stop working/).waitFor();
      await dialog.getByRole('button', { name: 'Delete user' }).click();
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'admin', exact: true }).waitFor();
      expect(await page.getByRole('link', { name: 'gov-changing' }).count()).toBe(0);
      expect((await call(ui(), newToken, 'POST', '/v1/auth/check', {})).status).toBe(401);
    });
  });
});

describe('API tokens', () => {
  it('creates a token shown once (not after a reload), which works until it is revoked', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/tokens`);
      await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
      await visited(page, 'governance-tokens-empty');
      const form = page.getByRole('form', { name: 'New token' });
      await form.getByLabel('Name').fill('ci-read');
      await form.getByLabel('Scope').selectOption('read');
      await form.getByLabel('Expires in (days)').fill('0');
      await form.getByRole('button', { name: 'Create token' }).click();
      await form.locator('[data-field="expires_in_days"]').getByRole('alert').waitFor();
      await form.getByLabel('Expires in (days)').fill('7');
      await form.getByRole('button', { name: 'Create token' }).click();
      const token = (await page.getByTestId('secret-value').textContent())!.trim();
      expect(token).toMatch(/^bt_/);
      await page.getByRole('row').filter({ hasText: 'ci-read' }).filter({ hasText: 'never' }).waitFor();
      await visited(page, 'governance-token-once');

      // It works (read scope: looking is fine, changing is not).
      expect((await call(ui(), token, 'GET', '/v1/users')).status).toBe(200);
      expect((await call(ui(), token, 'POST', '/v1/teams', { name: 'nope' })).status).toBe(403);

      await page.reload();
      await page.getByRole('row').filter({ hasText: 'ci-read' }).waitFor();
      expect(await page.getByTestId('secret-value').count()).toBe(0);
      expect(await page.content()).not.toContain(token);

      await page.getByRole('row').filter({ hasText: 'ci-read' }).getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('row').filter({ hasText: 'ci-read' }).waitFor({ state: 'detached' });
      expect((await call(ui(), token, 'GET', '/v1/users')).status).toBe(401);
    });
  });
});

describe('approval policies', () => {
  it('creates a policy with the form after a bad field is shown next to it, then disables it', async () => {
    const inventory = await localInventory(ui(), 'prod-inventory');
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/policies`);
      await page.getByText('No approval policies').waitFor();
      await visited(page, 'governance-policies-empty');
      await page.getByRole('link', { name: 'New policy' }).click();
      const form = page.getByRole('form', { name: 'Policy' });
      await form.getByLabel('Name').fill('production needs approval');
      await form.getByLabel('Inventories').selectOption({ label: 'prod-inventory' });
      await form.getByLabel('Hosts (globs)').fill('db-*\nweb-?');
      await form.getByRole('group', { name: 'Origins' }).getByLabel('schedule').check();
      await form.getByRole('group', { name: 'Roles', exact: true }).getByLabel('operator').check();
      await form.getByLabel('Approvals needed').fill('11');
      await form.getByLabel('Expires after').fill('2');
      await form.getByLabel('Unit').selectOption('hours');
      await form.getByRole('button', { name: 'Create policy' }).click();
      await form.locator('[data-field="min_approvals"]').getByRole('alert').waitFor();
      await visited(page, 'governance-policy-error');
      expect((await call<unknown[]>(ui(), ui().adminToken, 'GET', '/v1/policies')).body).toEqual([]);

      await form.getByLabel('Approvals needed').fill('1');
      await form.getByRole('button', { name: 'Create policy' }).click();
      await page.getByRole('heading', { name: 'production needs approval', level: 1 }).waitFor();
      await visited(page, 'governance-policy');
      const id = new URL(page.url()).pathname.split('/').pop()!;
      const stored = await call<Record<string, unknown>>(ui(), ui().adminToken, 'GET', `/v1/policies/${id}`);
      expect(stored.body).toMatchObject({
        enabled: true,
        match: { inventories: [inventory], hosts: ['db-*', 'web-?'], origins: ['schedule'] },
        approvers: { roles: ['operator'] },
        min_approvals: 1,
        expires_after_s: 7200,
      });

      await page.getByRole('button', { name: 'Disable production needs approval' }).click();
      await page.locator('[data-enabled="false"]').getByText('Disabled').waitFor();
      expect((await call<{ enabled: boolean }>(ui(), ui().adminToken, 'GET', `/v1/policies/${id}`)).body.enabled).toBe(
        false,
      );
      await page.goto(`${ui().base}/ui/policies`);
      await page.getByRole('row').filter({ hasText: 'production needs approval' }).waitFor();
      await visited(page, 'governance-policies');
    });
  });
});

describe('audit trail and workers', () => {
  it('lets an admin verify the audit chain (intact), read an entry, filter and export the signed snapshot', async () => {
    await call(ui(), ui().adminToken, 'POST', '/v1/teams', { name: 'audited-team' });
    const { page, problems, close } = await openPage(browser());
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    try {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit trail' }).click();
      await page.getByRole('heading', { name: 'Audit trail', level: 1 }).waitFor();
      await page.getByRole('row').filter({ hasText: 'audited-team' }).first().waitFor();
      await page.getByRole('button', { name: 'Verify chain' }).click();
      await page.getByRole('status').filter({ hasText: 'Chain intact' }).waitFor();
      await visited(page, 'governance-audit-verified');

      const row = page.getByRole('row').filter({ hasText: 'audited-team' }).first();
      await row.getByRole('button', { name: /details/ }).click();
      await page.getByText('Previous hash').waitFor();
      await visited(page, 'governance-audit-entry');

      await page.getByLabel('Action').fill('team.create');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/action=team\.create/);
      await page.getByRole('row').filter({ hasText: 'audited-team' }).first().waitFor();
      const actions = await page.locator('tbody tr[data-seq] td:nth-child(4)').allTextContents();
      expect(actions.length).toBeGreaterThan(0);
      expect(new Set(actions)).toEqual(new Set(['team.create']));

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export signed snapshot' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('baton-audit-export.json');
      const file = await download.path();
      const exported = JSON.parse((await import('node:fs')).readFileSync(file, 'utf8')) as { format: string };
      expect(exported.format).toBe('baton-audit-export/1');
      // The token never travels in an address.
      const token = await page.evaluate(() => sessionStorage.getItem('baton.token'));
      expect(urls.filter((u) => u.includes(token!))).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lists the embedded executor with its lease freshness', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/workers`);
      await page.getByRole('heading', { name: 'Workers', level: 1 }).waitFor();
      const row = page.locator('tr[data-worker]').first();
      await row.getByText('embedded (in-process)').waitFor();
      expect(await row.locator('[data-freshness]').getAttribute('data-freshness')).toBe('fresh');
      await page.getByText(/Embedded mode: these executors run inside/).waitFor();
      await visited(page, 'governance-workers');
    });
  });

  it('shows a worker daemon that takes no new run because its event buffer is full, and why', async () => {
    // The row the API mirrors from a paused daemon's heartbeat (mirroring itself: worker.service.test.ts); written
    // into the server's own database, so the page reads it through the real API.
    const db = openDatabase(`sqlite:${path.join(ui().env.BATON_DATA_DIR!, 'baton.db')}`);
    const now = new Date().toISOString();
    try {
      await db.repos.workers.upsert({
        id: 'wrk_01M8PAUSED0000000000000000',
        name: 'daemon-cut-off',
        host: 'worker-7',
        mode: 'daemon',
        labels: [],
        capacity: 2,
        running: [],
        started_at: now,
        heartbeat_at: now,
        lease_expires_at: now,
        paused: 'event_buffer_full',
      });
    } finally {
      await db.close();
    }
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui().base}/ui/workers`);
      const row = page.locator('tr[data-worker="daemon-cut-off"]');
      await row.getByText('Paused: event buffer full').waitFor();
      expect(await row.locator('[data-paused]').getAttribute('data-paused')).toBe('event_buffer_full');
      expect(await row.locator('[data-paused]').getAttribute('title')).toMatch(/BATON_WORKER_BUFFER_MB/);
      await page.getByRole('status').filter({ hasText: 'daemon-cut-off takes no new runs' }).waitFor();
      // The embedded executor beside it leases as before.
      expect(
        await page
          .locator('tr[data-worker]')
          .filter({ hasText: 'embedded (in-process)' })
          .locator('[data-paused]')
          .count(),
      ).toBe(0);
      await visited(page, 'governance-workers-paused');
    });
  });
});

describe('a viewer', () => {
  it('sees no create, delete or audit entries, and a clear message where the API forbids', async () => {
    const viewer = await createUser(ui(), 'gov-viewer', 'viewer');
    const team = await call<{ id: string }>(ui(), ui().adminToken, 'POST', '/v1/teams', { name: 'viewers-look' });
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'gov-viewer', viewer.password);
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Users' }).waitFor();
      expect(await nav.getByRole('link', { name: 'Audit trail' }).count()).toBe(0);

      await page.goto(`${ui().base}/ui/users`);
      await page.getByRole('link', { name: 'gov-viewer' }).waitFor();
      expect(await page.getByRole('button', { name: 'New user' }).count()).toBe(0);
      await visited(page, 'governance-viewer-users');
      await page.getByRole('link', { name: 'admin', exact: true }).click();
      await page.getByRole('heading', { name: 'admin', level: 1 }).waitFor();
      expect(await page.getByRole('button', { name: /Delete|Reset|Save/ }).count()).toBe(0);

      await page.goto(`${ui().base}/ui/teams`);
      await page.getByRole('link', { name: 'viewers-look' }).click();
      await page.getByRole('heading', { name: 'Members' }).waitFor();
      await page.getByRole('region', { name: 'Who can use this' }).waitFor();
      expect(await page.getByRole('button', { name: /New team|Delete|Add member|Grant|Revoke|Remove/ }).count()).toBe(
        0,
      );
      await visited(page, 'governance-viewer-team');
      expect(team.status).toBe(201);

      for (const [path, name] of [
        ['/policies', 'governance-viewer-policies'],
        ['/audit', 'governance-viewer-audit'],
      ] as const) {
        await page.goto(`${ui().base}/ui${path}`);
        await page.getByRole('alert').filter({ hasText: 'Not available to you' }).waitFor();
        expect(await page.getByRole('button', { name: /New|Delete|Verify|Export/ }).count()).toBe(0);
        await visited(page, name);
      }

      await page.goto(`${ui().base}/ui/grants`);
      await page.getByRole('heading', { name: 'Grants', level: 1 }).waitFor();
      await page.getByText('No grants yet').waitFor();
      expect(await page.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
      await visited(page, 'governance-viewer-grants');
    });
  });
});
