// Governance pages in a real browser against a real `baton serve`: teams, grants ("who can use this"), users, API
// tokens, policies, the audit trail and workers, and what a viewer is (not) offered.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { cleanupProcesses } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  launchBrowser,
  localInventory,
  openPage,
  signIn,
  startServer,
  tokenFor,
  type UiServer,
  visited,
} from './support/browser.js';

let ui: UiServer;
let browser: Browser;

beforeAll(async () => {
  [ui, browser] = await Promise.all([startServer(), launchBrowser()]);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await ui?.server.stop();
  await cleanupProcesses();
});

interface GrantBody {
  id: string;
  subject: string;
  object: string;
  level: string;
}

describe('teams and grants', () => {
  it('creates a team, adds a member, grants the team use on an inventory from "Who can use this", revokes it', async () => {
    const member = await createUser(ui, 'tm-member', 'operator');
    const inventory = await localInventory(ui, 'granted-inventory');
    const { page, problems, close } = await openPage(browser);
    try {
      await signIn(page, ui.base, 'admin', ADMIN_PASSWORD);
      await page.goto(`${ui.base}/ui/teams`);
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
      const members = await call<Array<{ user_id: string }>>(ui, ui.adminToken, 'GET', `/v1/teams/${teamId}/members`);
      expect(members.body.map((m) => m.user_id)).toEqual([member.id]);

      // Grant on the inventory from the grants page filtered by the object (its "Who can use this" panel).
      await page.goto(`${ui.base}/ui/grants?object=${inventory}`);
      const panel = page.getByRole('region', { name: 'Who can use this' });
      await panel.getByRole('button', { name: 'Grant' }).click();
      await panel.getByRole('alert').filter({ hasText: 'Choose a team.' }).waitFor();
      await panel.getByLabel('Team', { exact: true }).selectOption({ label: 'deployers' });
      await panel.getByLabel('Level').selectOption('use');
      await panel.getByRole('button', { name: 'Grant' }).click();
      await panel.getByRole('row').filter({ hasText: 'deployers' }).filter({ hasText: 'use' }).waitFor();
      await visited(page, 'governance-access-panel');
      const granted = await call<GrantBody[]>(ui, ui.adminToken, 'GET', `/v1/grants?object=${inventory}`);
      expect(granted.body.map((g) => [g.subject, g.level])).toContainEqual([teamId, 'use']);
      // The member now sees the inventory through the team.
      const memberToken = await tokenFor(ui, 'tm-member', member.password);
      expect((await call(ui, memberToken, 'GET', `/v1/inventories/${inventory}`)).status).toBe(200);

      await panel.getByRole('row').filter({ hasText: 'deployers' }).getByRole('button', { name: 'Revoke' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Revoke' }).click();
      await panel.getByRole('row').filter({ hasText: 'deployers' }).waitFor({ state: 'detached' });
      const after = await call<GrantBody[]>(ui, ui.adminToken, 'GET', `/v1/grants?object=${inventory}`);
      expect(after.body.map((g) => g.subject)).not.toContain(teamId);
      expect((await call(ui, memberToken, 'GET', `/v1/inventories/${inventory}`)).status).toBe(404);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
