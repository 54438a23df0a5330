#!/usr/bin/env node
// bench/dispatch: time from `POST /v1/runs` to the start of the ansible-playbook process, over real runs of a
// real `baton serve` (embedded mode, SQLite by default). 20 submitters each submit a run, wait for it to end,
// and submit the next, so no run waits for a free executor: the figure is Baton's own dispatch path
// (validation, transaction, audit, enqueue, lease, claim, bundle, run directory, spawn) under concurrency.
//
//   pnpm build && node bench/dispatch/dispatch.bench.mjs [--runs 200] [--submitters 20] [--warmup 20] [--database postgres://…]
//
// The first --warmup runs (default: one per submitter) are measured apart and not counted in the figure: they all
// start in the same millisecond on a server that has served nothing yet, so they mostly measure twenty requests
// queued behind each other on a cold process. Their own figure is printed too.
//
// The start time is the `ansible-playbook started` log line the executor writes when spawn returns; both
// clocks are this machine's.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const RUNS = Number(option('runs', '200'));
const WARMUP = Number(option('warmup', option('submitters', '20')));
const SUBMITTERS = Number(option('submitters', '20'));
const DATABASE = option('database', undefined);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PASSWORD = 'bench password 12345';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-dispatch-'));
// The server logs to a file, not a pipe: Node writes to a pipe synchronously, so a reader that falls behind
// would stall the server's event loop and the figure would measure the reader.
const logFile = path.join(dataDir, 'serve.log');
const logFd = fs.openSync(logFile, 'w');
const server = spawn(path.join(root, 'bin/baton'), ['serve'], {
  env: {
    ...process.env,
    BATON_PORT: '0',
    BATON_DATA_DIR: dataDir,
    BATON_ADMIN_PASSWORD: PASSWORD,
    BATON_EXECUTORS: String(SUBMITTERS + 2),
    BATON_LOG_LEVEL: 'info',
    BATON_RUN_GRACE_SECONDS: '1',
    ...(DATABASE ? { BATON_DATABASE_URL: DATABASE } : {}),
  },
  stdio: ['ignore', logFd, 'inherit'],
});

const started = new Map(); // run id → the `ansible-playbook started` entry
const waiters = new Map(); // run id → resolve
let baseUrl;
let resolveListening;
const listening = new Promise((resolve, reject) => {
  resolveListening = resolve;
  server.once('exit', (code) => reject(new Error(`baton serve exited with ${code}`)));
});
let readOffset = 0;
let partial = '';
const tail = setInterval(() => {
  const size = fs.statSync(logFile).size;
  if (size <= readOffset) return;
  const buffer = Buffer.alloc(size - readOffset);
  fs.readSync(fs.openSync(logFile, 'r'), buffer, 0, buffer.length, readOffset);
  readOffset = size;
  const lines = (partial + buffer.toString('utf8')).split('\n');
  partial = lines.pop();
  for (const line of lines) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.message === 'listening') resolveListening(entry.url.replace(/\/$/, ''));
    if (entry.message === 'ansible-playbook started') {
      started.set(entry.run_id, entry);
      waiters.get(entry.run_id)?.();
    }
  }
}, 10);

async function api(method, url, token, body) {
  const res = await fetch(`${baseUrl}${url}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => undefined);
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

try {
  baseUrl = await listening;
  const { token } = await api('POST', '/v1/auth/login', undefined, { username: 'admin', password: PASSWORD });
  const inventory = await api('POST', '/v1/inventories', token, {
    name: 'bench',
    content: 'localhost ansible_connection=local\n',
  });
  const playbook = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: { msg: dispatched }\n';
  const latencies = [];
  const warmup = [];
  const parts = { post: [], queue: [], claim: [], bundle: [], prepare: [] };
  let next = 0;

  async function submitter() {
    while (next < WARMUP + RUNS) {
      next += 1;
      const counted = next > WARMUP;
      const t0 = Date.now();
      const run = await api('POST', '/v1/runs', token, { playbook, inventory_id: inventory.id });
      const t1 = Date.now();
      if (!started.has(run.id)) await new Promise((resolve) => waiters.set(run.id, resolve));
      const entry = started.get(run.id);
      const spawnedAt = Date.parse(entry.at);
      const leasedAt = Date.parse(entry.leased_at);
      if (!counted) warmup.push(spawnedAt - t0);
      else {
        latencies.push(spawnedAt - t0);
        parts.post.push(t1 - t0);
        parts.queue.push(leasedAt - t1);
        parts.claim.push(entry.claim_ms);
        parts.bundle.push(entry.bundle_ms);
        parts.prepare.push(spawnedAt - leasedAt - entry.claim_ms - entry.bundle_ms);
      }
      // Wait for the end like a client would: on the run's event stream, not by polling.
      const stream = await fetch(`${baseUrl}/v1/runs/${run.id}/stream`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await stream.text();
      const current = await api('GET', `/v1/runs/${run.id}`, token);
      if (current.conclusion !== 'succeeded')
        throw new Error(`run ${run.id} ended ${current.status} ${current.conclusion} (${current.reason})`);
    }
  }

  const began = Date.now();
  await Promise.all(Array.from({ length: SUBMITTERS }, submitter));
  const sorted = latencies.sort((a, b) => a - b);
  console.log(
    `dispatch: ${sorted.length} runs, ${SUBMITTERS} submitters, ${DATABASE ? 'postgres' : 'sqlite'}: ` +
      `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted[sorted.length - 1]} ms ` +
      `(target p99 < 100 ms; ${((Date.now() - began) / 1000).toFixed(1)} s in all)`,
  );
  // Where the time goes (p50 / p99 of each step): the POST itself, waiting in the queue after the answer, the
  // claim, building the bundle, and preparing the run directory up to spawn.
  const steps = Object.entries(parts).map(([step, values]) => {
    const v = [...values].sort((a, b) => a - b);
    return `${step} ${percentile(v, 50)}/${percentile(v, 99)}`;
  });
  console.log(`  steps (p50/p99 ms): ${steps.join(', ')}`);
  if (warmup.length > 0) {
    const w = warmup.sort((a, b) => a - b);
    console.log(
      `  warm-up, not counted: ${w.length} runs submitted at once to a fresh server: p50 ${percentile(w, 50)} ms, max ${w[w.length - 1]} ms`,
    );
  }
} finally {
  clearInterval(tail);
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
