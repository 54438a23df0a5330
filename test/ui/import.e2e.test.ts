// The import page in a real browser against a real `baton serve`: an admin previews a Semaphore backup (the report
// shows what would be created and nothing is written), imports it for real, and follows a credential that needs its
// secret to the credential's page; a file that is not JSON is refused in the browser before anything is sent; a
// structurally wrong document shows where the server found its first problem; an operator is not offered the page.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { ImportReport } from '@baton/contracts';
import type { Page } from 'playwright-core';
import { ROOT } from '../support/baton-process.js';
import {
  ADMIN_PASSWORD,
  call,
  createUser,
  openPage,
  setupUi,
  signIn,
  tokenFor,
  visited,
  withPage,
} from './support/browser.js';

const { ui, browser } = setupUi();

// The shared sample sits beside the repository (../shared), the hostile ones in the repository's own fixtures.
const BACKUP = path.resolve(ROOT, '..', 'shared', 'fixtures', 'import', 'semaphore-backup.json');
const HOSTILE = path.join(ROOT, 'test', 'fixtures', 'import', 'hostile');
const TRUNCATED = path.join(HOSTILE, 'malformed-truncated.semaphore.json.txt');
const WRONG_TYPES = path.join(HOSTILE, 'semaphore-wrong-types.json');

let operator: { id: string; password: string };

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
const importButton = (page: Page) => page.getByRole('button', { name: 'Import', exact: true });
const previewButton = (page: Page) => page.getByRole('button', { name: 'Preview (dry run)' });

async function names(kind: 'projects' | 'credentials' | 'templates' | 'inventories'): Promise<string[]> {
  const r = await call<Array<{ name: string }>>(ui(), ui().adminToken, 'GET', `/v1/${kind}?limit=200`);
  expect(r.status).toBe(200);
  return r.body.map((o) => o.name).sort();
}

/** Signs in as the admin and opens the import page through its nav entry. */
async function openImport(page: Page): Promise<void> {
  await signIn(page, ui().base, 'admin', ADMIN_PASSWORD);
  await nav(page).getByRole('link', { name: 'Import' }).click();
  await page.getByRole('heading', { name: 'Import', level: 1 }).waitFor();
}

/** Picks the format and the file; waits until the page has read it. */
async function choose(page: Page, format: 'awx' | 'semaphore', file: string): Promise<void> {
  await page.getByLabel('Format').selectOption(format);
  await page.getByLabel('File', { exact: true }).setInputFiles(file);
}

beforeAll(async () => {
  operator = await createUser(ui(), 'oscar', 'operator');
});

describe('the import page', () => {
  it('previews a Semaphore backup without writing, imports it, and links the credentials that need a secret', async () => {
    const before = {
      projects: await names('projects'),
      credentials: await names('credentials'),
      templates: await names('templates'),
      inventories: await names('inventories'),
    };
    expect(before.projects).not.toContain('infra-playbooks');
    await withPage(browser(), async (page) => {
      await openImport(page);
      await visited(page, 'import-empty');
      // Nothing to preview or import before a file is chosen.
      expect(await previewButton(page).isDisabled()).toBe(true);
      expect(await importButton(page).isDisabled()).toBe(true);

      await choose(page, 'semaphore', BACKUP);
      await page.getByText('read as JSON, ready to preview').waitFor();
      expect(await importButton(page).isDisabled()).toBe(true);
      const previewed = page.waitForResponse((r) => r.url().includes('/v1/import/semaphore?'));
      await previewButton(page).click();
      const previewResponse = await previewed;
      expect(previewResponse.request().method()).toBe('POST');
      expect(new URL(previewResponse.url()).searchParams.get('dry_run')).toBe('true');
      expect(new URL(previewResponse.url()).searchParams.get('on_conflict')).toBe('skip');
      expect(previewResponse.status()).toBe(200);
      const preview = (await previewResponse.json()) as ImportReport;
      expect(preview.dry_run).toBe(true);
      expect(preview.created.project).toBeGreaterThanOrEqual(1);
      expect(preview.created.credential).toBeGreaterThanOrEqual(1);

      await page.getByRole('status').filter({ hasText: 'Preview ready (nothing written)' }).waitFor();
      const report = page.getByRole('region', { name: 'Preview (dry run): nothing was written' });
      await report.waitFor();
      // Every kind the server counted shows with its count.
      for (const [kind, n] of Object.entries(preview.created)) {
        expect(await report.getByTestId(`created-${kind}`).textContent()).toBe(String(n));
      }
      expect(await report.getByTestId('import-counts').getByRole('columnheader', { name: 'To create' }).count()).toBe(
        1,
      );
      // A dry run's ids do not exist yet: the follow-ups are named but not links.
      const wouldNeedSecret = report.getByRole('region', { name: 'Credentials needing secrets' });
      expect(preview.needs_secret.length).toBeGreaterThan(0);
      expect(await wouldNeedSecret.getByRole('listitem').count()).toBe(preview.needs_secret.length);
      expect(await wouldNeedSecret.getByRole('link').count()).toBe(0);
      // Warnings and skipped objects, one line each (the sample has terraform inventories and non-ansible apps).
      expect(preview.warnings.length + preview.skipped.length).toBeGreaterThan(0);
      expect(await report.getByTestId('import-warnings').getByRole('listitem').count()).toBe(preview.warnings.length);
      expect(await report.getByTestId('import-skipped').locator('tbody tr').count()).toBe(preview.skipped.length);
      await visited(page, 'import-preview');

      // Nothing was written by the preview.
      expect(await names('projects')).toEqual(before.projects);
      expect(await names('credentials')).toEqual(before.credentials);
      expect(await names('templates')).toEqual(before.templates);
      expect(await names('inventories')).toEqual(before.inventories);

      // The preview answered "skip": another conflict rule needs its own preview before importing.
      expect(await importButton(page).isEnabled()).toBe(true);
      await page.getByLabel('Rename').check();
      expect(await importButton(page).isDisabled()).toBe(true);
      await page.getByText('changed since the preview').waitFor();
      await page.getByLabel('Skip').check();
      expect(await importButton(page).isEnabled()).toBe(true);

      const imported = page.waitForResponse((r) => r.url().includes('/v1/import/semaphore?'));
      await importButton(page).click();
      const importResponse = await imported;
      expect(new URL(importResponse.url()).searchParams.get('dry_run')).toBe('false');
      expect(importResponse.status()).toBe(200);
      const final = (await importResponse.json()) as ImportReport;
      expect(final.dry_run).toBe(false);
      await page.getByRole('status').filter({ hasText: 'Imported:' }).waitFor();
      const done = page.getByRole('region', { name: 'Import report' });
      await done.waitFor();
      expect(await done.getByTestId('created-project').textContent()).toBe(String(final.created.project));
      // Imported once: importing again needs a new preview.
      expect(await importButton(page).isDisabled()).toBe(true);
      // The id map is there, folded.
      const idMap = done.getByTestId('import-id-map');
      expect(await idMap.isVisible()).toBe(false);
      await done.getByText(/Ids of the imported objects/).click();
      await idMap.waitFor();
      await visited(page, 'import-done');
      expect(await names('projects')).toContain('infra-playbooks');

      // A credential that needs its secret opens on its own page.
      const needSecret = done.getByRole('region', { name: 'Credentials needing secrets' });
      expect(await needSecret.getByRole('link').count()).toBe(final.needs_secret.length);
      const link = needSecret.getByRole('link').first();
      const href = (await link.getAttribute('href'))!;
      const id = href.split('/').pop()!;
      expect(final.needs_secret).toContain(id);
      const cred = await call<{ name: string }>(ui(), ui().adminToken, 'GET', `/v1/credentials/${id}`);
      expect(cred.status).toBe(200);
      await link.click();
      await page.getByRole('heading', { name: cred.body.name, level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/ui/credentials/${id}`);
      // The credential's page says what is missing and that runs refuse it until it is set.
      const banner = page.getByTestId('needs-secret');
      await banner.waitFor();
      expect(await banner.textContent()).toContain('imported without its secret');
      await visited(page, 'import-credential-needing-secret');
    });
  });

  it('refuses a file that is not JSON in the browser, before sending anything', async () => {
    await withPage(browser(), async (page) => {
      const sent: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/v1/import/')) sent.push(r.url());
      });
      await openImport(page);
      await choose(page, 'semaphore', TRUNCATED);
      const alert = page.locator('[data-field="file"]').getByRole('alert');
      await alert.filter({ hasText: 'is not valid JSON' }).waitFor();
      expect(await alert.textContent()).toContain('Nothing was sent.');
      expect(await previewButton(page).isDisabled()).toBe(true);
      expect(await importButton(page).isDisabled()).toBe(true);
      await visited(page, 'import-not-json');
      expect(sent).toEqual([]);
    });
  });

  it('shows where the server found the first problem of a structurally wrong document', async () => {
    const document: unknown = JSON.parse(fs.readFileSync(WRONG_TYPES, 'utf8'));
    const direct = await call<{ errors?: Array<{ path: string; message: string }> }>(
      ui(),
      ui().adminToken,
      'POST',
      '/v1/import/semaphore?dry_run=true',
      document,
    );
    expect(direct.status).toBe(400);
    const first = direct.body.errors?.[0];
    expect(first?.path).toMatch(/^body\./);
    const projectsBefore = await names('projects');
    await withPage(browser(), async (page) => {
      await openImport(page);
      await choose(page, 'semaphore', WRONG_TYPES);
      await page.getByText('read as JSON, ready to preview').waitFor();
      await previewButton(page).click();
      const problem = page.getByRole('alert').filter({ hasText: 'The document cannot be imported' });
      await problem.waitFor();
      expect(await problem.getByTestId('import-problem-path').textContent()).toBe(first!.path.replace(/^body\./, ''));
      expect(await problem.getByTestId('import-problem').textContent()).toContain(first!.message);
      await problem.getByText('Nothing was written.').waitFor();
      expect(await importButton(page).isDisabled()).toBe(true);
      expect(await page.getByRole('region', { name: /Preview|Import report/ }).count()).toBe(0);
      await visited(page, 'import-wrong-types');
    });
    expect(await names('projects')).toEqual(projectsBefore);
  });

  it('opens though its stylesheet failed to load once, and loads the stylesheet again', async () => {
    const { page, problems, close } = await openPage(browser());
    try {
      // The import page's own stylesheet (a chunk of its own, loaded when the page is first opened) is cut off once.
      let asked = 0;
      await page.route(/\/ui\/assets\/ImportPage-[^/]+\.css$/, (route) =>
        asked++ === 0 ? route.abort('connectionreset') : route.continue(),
      );
      await openImport(page);
      await page.waitForFunction(() =>
        Array.from(document.styleSheets).some((s) => s.href !== null && /\/assets\/ImportPage-/.test(s.href)),
      );
      expect(asked).toBe(2);
      await page.getByLabel('File', { exact: true }).waitFor();
      // Only the browser's own line for the request cut off: no page error, nothing the page logged.
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^console error: Failed to load resource: net::ERR_CONNECTION_RESET/);
    } finally {
      await close();
    }
  });

  it('is not offered to an operator: no nav entry, and the page says only admins import', async () => {
    const token = await tokenFor(ui(), 'oscar', operator.password);
    const refused = await call(ui(), token, 'POST', '/v1/import/semaphore?dry_run=true', { meta: { name: 'x' } });
    expect(refused.status).toBe(403);
    await withPage(browser(), async (page) => {
      await signIn(page, ui().base, 'oscar', operator.password);
      await nav(page).getByRole('link', { name: 'Credentials' }).waitFor();
      expect(await nav(page).getByRole('link', { name: 'Import' }).count()).toBe(0);
      await page.goto(`${ui().base}/ui/import`);
      await page.getByRole('heading', { name: 'Import', level: 1 }).waitFor();
      await page.getByRole('alert').filter({ hasText: 'Only admins import' }).waitFor();
      expect(await page.getByLabel('File', { exact: true }).count()).toBe(0);
      await visited(page, 'import-operator');
    });
  });
});
