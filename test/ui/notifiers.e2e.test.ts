// The notifications pages in a real browser against a real `baton serve` (BATON_NOTIFY_ALLOW_PRIVATE=true, so a local
// receiver can be reached): an operator creates a webhook notifier, sees its signing secret once, sends a test and
// watches it become delivered while the receiver checks the signature; a receiver answering 500 shows `retrying`; a
// template's page lists the notifiers that hear of its runs; a notifier shared from its page reaches the user granted
// it; a viewer is offered no "New notifier".
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { call, createUser, setupUi, signIn, tokenFor, visited, withPage } from './support/browser.js';

const { ui, browser } = setupUi({ env: { BATON_NOTIFY_ALLOW_PRIVATE: 'true' } });

let operator: { id: string; password: string };
let viewer: { id: string; password: string };
let receiver: http.Server;
let url: string;
const got: Array<{ signature: string; body: string }> = [];
const answers: number[] = [];

beforeAll(async () => {
  operator = await createUser(ui(), 'nora', 'operator');
  viewer = await createUser(ui(), 'vic', 'viewer');
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({
        signature: String(req.headers['x-baton-signature-256']),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(answers.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

/** Creates a webhook notifier through the form; answers its id and the secret shown once. */
async function createThroughForm(page: Page, name: string): Promise<{ id: string; secret: string }> {
  await nav(page).getByRole('link', { name: 'Notifications' }).click();
  await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'New notifier' }).click();
  await page.getByRole('heading', { name: 'New notifier', level: 1 }).waitFor();
  await visited(page, `notifier-new-${name}`);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('URL', { exact: true }).fill(url);
  await page.getByRole('checkbox', { name: /run\.succeeded/ }).check();
  await page.getByRole('button', { name: 'Create notifier' }).click();
  const secret = (await page.getByTestId('secret-value').textContent())!.trim();
  await visited(page, `notifier-secret-${name}`);
  await page.getByRole('button', { name: 'I have stored it' }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
  return { id: new URL(page.url()).pathname.split('/').pop()!, secret };
}

describe('the notifications pages', () => {
  it('creates a webhook notifier, shows its secret once, and delivers a signed test message', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'nora', operator.password);
      const { id, secret } = await createThroughForm(page, 'ops hook');
      expect(secret.length).toBeGreaterThan(20);
      const before = got.length;
      await page.getByRole('button', { name: 'Send test' }).click();
      await page.getByText(/Test message queued/).waitFor();
      await page.locator('[data-testid="delivery"][data-status="delivered"]').first().waitFor({ timeout: 30_000 });
      await visited(page, 'notifier-delivered');
      const [sent] = got.slice(before);
      const expected = crypto.createHmac('sha256', secret).update(sent!.body).digest('hex');
      expect(sent!.signature).toBe(`sha256=${expected}`);
      expect(JSON.parse(sent!.body)).toMatchObject({ event: 'test' });
      // The page never shows the secret again.
      await page.reload();
      await page.getByRole('heading', { name: 'ops hook', level: 1 }).waitFor();
      expect(await page.content()).not.toContain(secret);
      const api = await call<Array<{ status: string }>>(ui(), ui().adminToken, 'GET', `/v1/notifiers/${id}/deliveries`);
      expect(api.body[0]!.status).toBe('delivered');
    });
  });

  it('shows a delivery the receiver refused with 500 as retrying, with its error', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'nora', operator.password);
      await createThroughForm(page, 'flaky hook');
      answers.push(500);
      await page.getByRole('button', { name: 'Send test' }).click();
      const row = page.locator('[data-testid="delivery"][data-status="retrying"]').first();
      await row.waitFor({ timeout: 30_000 });
      expect(await row.textContent()).toContain('HTTP 500');
      await visited(page, 'notifier-retrying');
    });
  });

  it('lists on a template’s page the notifiers that hear of its runs', async () => {
    const token = await tokenFor(ui(), 'nora', operator.password);
    const tpl = await call<{ id: string }>(ui(), token, 'POST', '/v1/templates', {
      name: 'notified template',
      kind: 'run',
      spec: {
        playbook: '- hosts: all\n  gather_facts: false\n  tasks: []\n',
        inventory: 'localhost ansible_connection=local\n',
      },
    });
    expect(tpl.status).toBe(201);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'nora', operator.password);
      await page.goto(`${ui().base}/ui/templates/${tpl.body.id}`);
      const list = page.getByTestId('template-notifiers');
      await list.getByRole('link', { name: 'ops hook' }).waitFor();
      await visited(page, 'template-notifiers');
    });
  });

  it('shares a notifier from its “Who can use this”: the user granted use sees it and its deliveries, no one else', async () => {
    const other = await createUser(ui(), 'otto', 'operator');
    const otherToken = await tokenFor(ui(), 'otto', other.password);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'nora', operator.password);
      const { id } = await createThroughForm(page, 'shared hook');
      expect((await call(ui(), otherToken, 'GET', `/v1/notifiers/${id}`)).status).toBe(404);
      const panel = page.getByRole('region', { name: 'Who can use this' });
      await panel.getByLabel('Grant to').selectOption('user');
      await panel.getByLabel('User', { exact: true }).selectOption({ label: 'otto (operator)' });
      await panel.getByLabel('Level').selectOption('use');
      await panel.getByRole('button', { name: 'Grant' }).click();
      await panel.getByRole('row').filter({ hasText: 'otto' }).filter({ hasText: 'use' }).waitFor();
      expect(await panel.getByRole('alert').count()).toBe(0);
      await visited(page, 'notifier-shared');
      expect((await call(ui(), otherToken, 'GET', `/v1/notifiers/${id}`)).status).toBe(200);
      expect((await call(ui(), otherToken, 'GET', `/v1/notifiers/${id}/deliveries`)).status).toBe(200);
      // `use` is not `manage`: the grantee cannot change or delete it.
      expect((await call(ui(), otherToken, 'DELETE', `/v1/notifiers/${id}`)).status).toBe(403);
      const viewerToken = await tokenFor(ui(), 'vic', viewer.password);
      expect((await call(ui(), viewerToken, 'GET', `/v1/notifiers/${id}`)).status).toBe(404);
      // The grantee's page shows it and its deliveries, and offers nothing that needs `manage`.
      await withPage(browser(), async (theirs) => {
        await signIn(theirs, ui().base, 'otto', other.password);
        await theirs.goto(`${ui().base}/ui/notifiers/${id}`);
        await theirs.getByRole('heading', { name: 'shared hook', level: 1 }).waitFor();
        await theirs.getByRole('heading', { name: 'Deliveries' }).waitFor();
        expect(await theirs.getByRole('button', { name: /Send test|Rotate secret|Delete/ }).count()).toBe(0);
        await visited(theirs, 'notifier-shared-grantee');
      });
    });
  });

  it('offers a viewer no “New notifier”', async () => {
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'vic', viewer.password);
      await page.goto(`${ui().base}/ui/notifiers`);
      await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
      expect(await page.getByRole('link', { name: 'New notifier' }).count()).toBe(0);
      await visited(page, 'notifiers-viewer');
    });
  });
});
