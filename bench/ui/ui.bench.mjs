// Web UI figures (issue 13): initial JavaScript size, the runs page with 10,000 runs in history, a 200,000-line log.
// A real `bin/baton serve` (embedded SQLite in a temp dir) and Debian's chromium driven by playwright-core.
// Usage: pnpm build && node bench/ui/ui.bench.mjs [--runs 10000] [--lines 200000] [--repeat 5]
import { spawn } from 'node:child_process';
/* global sessionStorage, requestAnimationFrame, performance -- evaluated in the browser */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 10_000);
const LINES = arg('lines', 200_000);
const REPEAT = arg('repeat', 5);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.join(root, 'apps/web/dist');
const PASSWORD = 'bench password 12345';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

// 1. Initial JavaScript: the entry script and the modules index.html preloads, gzipped.
const index = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
const initial = [...index.matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
const gz = (file) => zlib.gzipSync(fs.readFileSync(path.join(dist, file)), { level: 9 }).length;
const initialBytes = initial.reduce((sum, f) => sum + gz(f), 0);
console.log(`initial JS: ${kb(initialBytes)} gzipped in ${initial.length} file(s) (budget 250 KB)`);

// 2. A server with RUNS runs in history and one run with a LINES-line log.
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-ui-'));
const logFd = fs.openSync(path.join(dataDir, 'serve.log'), 'w');
const server = spawn(path.join(root, 'bin/baton'), ['serve'], {
  env: {
    ...process.env,
    BATON_HOST: '127.0.0.1',
    BATON_PORT: String(port),
    BATON_DATA_DIR: path.join(dataDir, 'data'),
    BATON_ADMIN_PASSWORD: PASSWORD,
  },
  stdio: ['ignore', logFd, logFd],
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  if (
    await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  if (i > 300) throw new Error('baton serve did not start');
  await new Promise((r) => setTimeout(r, 100));
}
async function api(method, url, body, token) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}
const { token } = await api('POST', '/v1/auth/login', { username: 'admin', password: PASSWORD });
const inv = await api(
  'POST',
  '/v1/inventories',
  { name: 'local', content: 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n' },
  token,
);

// The long log first: a debug of a LINES-item list prints one item per line.
const big = await api(
  'POST',
  '/v1/runs',
  {
    inventory_id: inv.id,
    playbook: `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: "{{ range(${LINES}) | list }}"\n`,
  },
  token,
);

// History: runs held by a policy that holds everything cost no ansible.
const policy = await api(
  'POST',
  '/v1/policies',
  { name: 'hold all (bench)', match: {}, approvers: { roles: ['admin'] } },
  token,
);
const t0 = Date.now();
let next = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < RUNS) {
      next++;
      await api('POST', '/v1/runs', { inventory_id: inv.id, playbook: '- hosts: all\n  tasks: []\n' }, token);
    }
  }),
);
console.log(`seeded ${RUNS} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
await api('DELETE', `/v1/policies/${policy.id}`, undefined, token);
let bigRun;
for (;;) {
  bigRun = await api('GET', `/v1/runs/${big.id}`, undefined, token);
  if (bigRun.status === 'finished') break;
  await new Promise((r) => setTimeout(r, 500));
}
console.log(`long log: ${bigRun.log_lines} lines (${bigRun.conclusion})`);

// 3. The browser: a signed-in session (the token in sessionStorage, as the sign-in page leaves it).
const browser = await chromium.launch({
  executablePath: process.env.BATON_TEST_CHROMIUM ?? '/usr/bin/chromium',
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
});
async function timed(url, ready) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript((t) => sessionStorage.setItem('baton.token', t), token);
  const page = await context.newPage();
  let jsBytes = 0;
  page.on('response', async (r) => {
    if (r.url().endsWith('.js'))
      jsBytes += Number(r.headers()['content-length'] ?? (await r.body().catch(() => Buffer.alloc(0))).length);
  });
  await page.goto(url);
  await ready(page);
  // Interactive: the main thread answers a click within the next frame.
  const ms = await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0))),
  );
  await context.close();
  return { ms, jsBytes };
}

const runsTimes = [];
for (let i = 0; i < REPEAT; i++) {
  // Ready: the first page of the history (50 rows) is in the table.
  const r = await timed(`${base}/ui/runs`, (page) =>
    page
      .locator('tbody tr[data-run]')
      .nth(Math.min(49, RUNS - 1))
      .waitFor({ timeout: 30_000 }),
  );
  runsTimes.push(r.ms);
}
console.log(
  `runs page (${RUNS} runs in history) interactive: median ${median(runsTimes).toFixed(0)} ms of ${REPEAT} (target < 1000 ms)`,
);

const logTimes = [];
const lastTimes = [];
for (let i = 0; i < REPEAT; i++) {
  const r = await timed(`${base}/ui/runs/${big.id}`, (page) =>
    page.getByText('PLAY [all]').first().waitFor({ timeout: 30_000 }),
  );
  logTimes.push(r.ms);
  const last = await timed(`${base}/ui/runs/${big.id}#L${bigRun.log_lines - 3}`, (page) =>
    page.getByText('PLAY RECAP').first().waitFor({ timeout: 30_000 }),
  );
  lastTimes.push(last.ms);
}
console.log(
  `run page with a ${bigRun.log_lines}-line log, first lines shown: median ${median(logTimes).toFixed(0)} ms (target < 2000 ms)`,
);
console.log(
  `same page opened at its last lines (#L${bigRun.log_lines - 3}): median ${median(lastTimes).toFixed(0)} ms`,
);

await browser.close();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
fs.rmSync(dataDir, { recursive: true, force: true });
