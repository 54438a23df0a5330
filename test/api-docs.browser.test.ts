// The API docs page in a real browser (Debian's chromium driven by playwright-core) against the real app on a real
// port. The web UI's own browser tests are in test/ui/.
import fs from 'node:fs';
import type http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { type Browser, chromium, type Page } from 'playwright-core';
import { createHarness, type Harness } from '../apps/api/src/testing/harness.js';

const CHROMIUM = process.env.BATON_TEST_CHROMIUM ?? '/usr/bin/chromium';
const WAIT_MS = 20_000;

let browser: Browser | undefined;

beforeAll(async () => {
  // No silent skip: without a browser this test fails and says why.
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `chromium is missing at ${CHROMIUM}: install it (apt-get install -y chromium) or set BATON_TEST_CHROMIUM`,
    );
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: WAIT_MS,
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** A fresh page that records uncaught errors, console errors and failed responses. */
async function openPage(): Promise<{ page: Page; problems: string[] }> {
  if (!browser) throw new Error('the browser did not start');
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()} (${msg.location().url})`);
  });
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText ?? ''}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  return { page, problems };
}

describe.each(DIALECTS)('web UI in chromium on %s', (dialect) => {
  let h: Harness;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    h = await createHarness(dialect);
    server = await new Promise<http.Server>((resolve, reject) => {
      const s = h.app.listen(0, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
    });
    base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });

  afterAll(async () => {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await h?.close();
  });

  it('renders the API docs at /v1/docs from /v1/openapi.json, with no resolver errors', async () => {
    const { page, problems } = await openPage();
    try {
      const response = await page.goto(`${base}/v1/docs`);
      expect(response?.status()).toBe(200);
      // Tags start collapsed (a page of every operation at once is too much for Swagger UI): every tag is listed…
      const tags = ['operations', 'auth', 'users', 'runs', 'pipelines', 'templates', 'schedules', 'triggers'];
      await page.waitForSelector('h3.opblock-tag');
      const listed = (await page.locator('h3.opblock-tag').allTextContents()).map((t) => t.trim());
      for (const tag of tags.filter((t) => t !== 'pipelines')) expect(listed).toContain(tag);
      // …and opening one shows its operations.
      for (const tag of ['auth', 'users', 'runs', 'triggers'])
        await page.locator(`h3.opblock-tag[data-tag="${tag}"]`).click();
      await page.locator('.opblock-summary-path', { hasText: '/hooks/' }).first().waitFor();
      const paths = (await page.locator('.opblock-summary-path').allTextContents()).map((p) =>
        p.replace(/\u200b/g, ''),
      );
      expect(paths).toEqual(
        expect.arrayContaining([
          '/v1/users',
          '/v1/auth/login',
          '/v1/runs',
          '/v1/pipelines',
          '/v1/triggers',
          '/hooks/{token}',
        ]),
      );
      expect(await page.locator('.errors-wrapper').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
