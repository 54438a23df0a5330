// Browser tests of the web UI: Debian's chromium driven by playwright-core against a real `baton serve` (real
// ansible, no mocked API). Every page visited is checked with axe-core; screenshots go under test-output/ui/.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { DialectName } from '@baton/db';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import {
  ADMIN_PASSWORD,
  call,
  cleanupProcesses,
  freshEnv,
  login,
  ROOT,
  serve,
  type Server,
} from '../../support/baton-process.js';

export { ADMIN_PASSWORD, call };
const CHROMIUM = process.env.BATON_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const WAIT_MS = 20_000;
export const SHOTS_DIR = path.join(ROOT, 'test-output', 'ui');
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface UiServer {
  server: Server;
  base: string;
  /** an admin's API token, for setting things up through the API */
  adminToken: string;
  /** the server's environment (BATON_DATA_DIR, BATON_DATABASE_URL…) */
  env: Record<string, string>;
}

/**
 * `baton serve` with in-process executors on a fresh data directory: embedded SQLite, or a fresh PostgreSQL
 * database. Pages test the UI, which talks to the same API on both: one dialect is enough for most files.
 */
export async function startServer(
  extraEnv: Record<string, string> = {},
  port?: number,
  dialect: DialectName = 'sqlite',
): Promise<UiServer> {
  const env = {
    ...(await freshEnv(dialect)),
    BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
    // A build of the UI of one's own (vite build --outDir …), so parallel builds never swap assets under a test.
    ...(process.env.BATON_TEST_UI_DIR ? { BATON_UI_DIR: process.env.BATON_TEST_UI_DIR } : {}),
    ...extraEnv,
  };
  const server = await serve(env, { port });
  const { token } = await login(server.base, 'admin', ADMIN_PASSWORD);
  if (!token) throw new Error('admin could not sign in');
  return { server, base: server.base, adminToken: token, env };
}

export async function launchBrowser(): Promise<Browser> {
  // No silent skip: without a browser the test fails and says why.
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `chromium is missing at ${CHROMIUM}: install it (apt-get install -y chromium) or set BATON_TEST_CHROMIUM`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: WAIT_MS,
  });
}

/** How a test file's server starts: extra environment, and a fixed port when something must know it first. */
export interface UiServerOptions {
  env?: Record<string, string>;
  port?: number;
}

export interface UiSuite {
  /** the file's server (started in beforeAll) */
  ui(): UiServer;
  /** the file's browser (launched in beforeAll) */
  browser(): Browser;
}

/**
 * One server and one browser for a test file: started side by side before its tests, stopped after them, then any
 * process a test left behind is cleaned up. `options` may be a function run first (e.g. to start an OIDC issuer the
 * server's environment names); a file's own set-up and tear-down go in its own beforeAll/afterAll, after this call.
 */
export function setupUi(options: UiServerOptions | (() => Promise<UiServerOptions>) = {}): UiSuite {
  let ui: UiServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    const serverStart = (typeof options === 'function' ? options() : Promise.resolve(options)).then((o) =>
      startServer(o.env, o.port),
    );
    [ui, browser] = await Promise.all([serverStart, launchBrowser()]);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await ui?.server.stop();
    await cleanupProcesses();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the ${what} is not started (setupUi's beforeAll has not run or failed)`);
    return value;
  };
  return { ui: () => started(ui, 'server'), browser: () => started(browser, 'browser') };
}

export interface UiPage {
  page: Page;
  context: BrowserContext;
  /** uncaught errors, console errors (CSP violations among them) and 5xx answers seen so far */
  problems: string[];
  close(): Promise<void>;
}

/**
 * A fresh browser context (its own sessionStorage) and page at 1280×800, recording what went wrong. 4xx answers
 * are not problems: pages show them (a bad survey answer is a 400 on purpose).
 */
export async function openPage(browser: Browser, opts: { width?: number; height?: number } = {}): Promise<UiPage> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // The browser logs every 4xx fetch as a console error; those are answers the page handles. Chromium also fails
    // requests in flight with ERR_NETWORK_CHANGED whenever an interface comes or goes — other test files make network
    // namespaces and veth pairs meanwhile — as it does for a user whose network switches: the UI retries its reads
    // and the test's own assertions show whether the page recovered.
    if (msg.type() === 'error' && !/status of 4\d\d|net::ERR_NETWORK_CHANGED/.test(msg.text()))
      problems.push(`console error: ${msg.text()} (${msg.location().url})`);
  });
  page.on('response', (res) => {
    if (res.status() >= 500) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  return { page, context, problems, close: () => context.close() };
}

/**
 * Runs `use` on a fresh page (see openPage) and closes the page afterwards; the test fails if the page saw any
 * problem (an uncaught error, a console error such as a CSP violation, a 5xx answer).
 */
export async function withPage(
  browser: Browser,
  use: (page: Page) => Promise<void>,
  opts: { width?: number; height?: number } = {},
): Promise<void> {
  const { page, problems, close } = await openPage(browser, opts);
  try {
    await use(page);
    expect(problems).toEqual([]);
  } finally {
    await close();
  }
}

/** Signs in through the sign-in form and waits for the signed-in frame. */
export async function signIn(page: Page, base: string, username: string, password: string): Promise<void> {
  await page.goto(`${base}/ui/sign-in`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('whoami').filter({ hasText: username }).waitFor();
}

/** Creates a user through the API and returns its password. */
export async function createUser(
  ui: UiServer,
  username: string,
  role: 'admin' | 'operator' | 'viewer',
): Promise<{ id: string; password: string }> {
  const password = `${username} password for tests`;
  const r = await call<{ id: string }>(ui, ui.adminToken, 'POST', '/v1/users', { username, role, password });
  if (r.status !== 201) throw new Error(`creating ${username}: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.id, password };
}

/** An API token for a user (to set things up as them). */
export async function tokenFor(ui: UiServer, username: string, password: string): Promise<string> {
  const { token } = await login(ui.base, username, password);
  if (!token) throw new Error(`${username} could not sign in`);
  return token;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * Runs axe-core in the page and fails on serious or critical violations. The script is evaluated through the
 * DevTools protocol, which the page's Content-Security-Policy does not govern (the CSP itself stays on).
 */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const violations = await page.evaluate(`(async () => {
    if (!window.axe) { ${AXE_SOURCE} }
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  })()`);
  const serious = (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect({
    page: label,
    violations: serious.map(
      (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    ),
  }).toEqual({
    page: label,
    violations: [],
  });
}

/** Saves a full-page screenshot as test-output/ui/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS_DIR, `${name.replace(/[^a-z0-9_-]+/gi, '-')}.png`), fullPage: true });
}

/** Checks a page the way every test should: accessible, and a screenshot for the record. */
export async function visited(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await screenshot(page, name);
}

/** A stored inventory of local hosts (ansible_connection=local), for runs that need no ssh. */
export async function localInventory(ui: UiServer, name = 'local', hosts = ['alpha', 'beta']): Promise<string> {
  const content = `[web]\n${hosts.map((h) => `${h} ansible_connection=local ansible_python_interpreter=${process.env.BATON_TEST_PYTHON ?? '/usr/bin/python3'}`).join('\n')}\n`;
  const r = await call<{ id: string }>(ui, ui.adminToken, 'POST', '/v1/inventories', { name, content });
  if (r.status !== 201) throw new Error(`inventory: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}
