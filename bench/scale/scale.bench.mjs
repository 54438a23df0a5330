#!/usr/bin/env node
// bench/scale: runs per minute in queue mode for a sleep-bound playbook, with 1 and then with 3 `baton worker`
// daemons (issue 5's target: at least 2.7 times as many with 3). One real `baton serve` in queue mode (SQLite unless
// --database; one SQLite replica with remote workers is a supported deployment) and real workers on one Redis,
// under a key prefix of its own.
//
//   pnpm build && node bench/scale/scale.bench.mjs [--sleep 10] [--concurrency 1] [--runs-per-slot 4] [--postgres | --database postgres://…] [--redis redis://…]
//
// Each configuration queues (workers × concurrency × runs-per-slot) runs at once and times first submit → last finish.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SLEEP_S = Number(option('sleep', '10'));
const CONCURRENCY = Number(option('concurrency', '1'));
const RUNS_PER_SLOT = Number(option('runs-per-slot', '4'));
// --postgres: a fresh database on the local server (psql as postgres over 127.0.0.1), dropped at the end.
// --database: a URL of your own; it must be an empty database for this bench alone (Baton migrates it).
const FRESH_PG = args.includes('--postgres') ? `bench_scale_${Date.now()}` : undefined;
const DATABASE = FRESH_PG ? `postgres://postgres@127.0.0.1:5432/${FRESH_PG}` : option('database', undefined);
const psql = (sql) =>
  spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'postgres', '-qc', sql], { stdio: 'inherit' });
if (FRESH_PG) psql(`create database ${FRESH_PG}`);
const REDIS = option('redis', 'redis://127.0.0.1:6379');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BATON = path.join(root, 'bin/baton');
const PASSWORD = 'bench password 12345';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-scale-'));
const common = {
  BATON_REDIS_URL: REDIS,
  BATON_WORKER_KEY: crypto.randomBytes(32).toString('hex'),
  BATON_QUEUE_PREFIX: `bench_scale_${Date.now()}`,
  BATON_LOG_LEVEL: 'info',
  BATON_RUN_GRACE_SECONDS: '1',
};
const children = [];

/** Starts bin/baton with its output in a file (a pipe read too slowly would stall it), resolving on a log line. */
function start(argv, env, name, readyMessage) {
  const logFile = path.join(dataDir, `${name}.log`);
  const child = spawn(BATON, argv, {
    env: { ...process.env, ...common, ...env },
    stdio: ['ignore', fs.openSync(logFile, 'w'), fs.openSync(logFile, 'a')],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 60_000;
    const poll = setInterval(() => {
      const text = fs.readFileSync(logFile, 'utf8');
      for (const line of text.split('\n')) {
        try {
          const entry = JSON.parse(line);
          if (entry.message === readyMessage) {
            clearInterval(poll);
            resolve({ child, entry });
            return;
          }
        } catch {
          // not a JSON line (yet): a line still being written
        }
      }
      if (child.exitCode !== null || Date.now() > deadline) {
        clearInterval(poll);
        reject(new Error(`${name} did not start (${readyMessage}):\n${text.slice(-2000)}`));
      }
    }, 100);
  });
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

let baseUrl;
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

async function measure(token, inventoryId, workers) {
  const started = [];
  for (let i = 0; i < workers; i++) {
    started.push(
      await start(
        ['worker', '--name', `bench-${workers}-${i}`, '--concurrency', String(CONCURRENCY)],
        {},
        `worker-${workers}-${i}`,
        'worker started',
      ),
    );
  }
  const playbook = `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: sleep ${SLEEP_S}\n`;
  const count = workers * CONCURRENCY * RUNS_PER_SLOT;
  const began = Date.now();
  const ids = [];
  for (let i = 0; i < count; i++)
    ids.push((await api('POST', '/v1/runs', token, { playbook, inventory_id: inventoryId })).id);
  const left = new Set(ids);
  while (left.size > 0) {
    await new Promise((r) => setTimeout(r, 250));
    for (const id of [...left]) {
      const run = await api('GET', `/v1/runs/${id}`, token);
      if (run.status !== 'finished') continue;
      if (run.conclusion !== 'succeeded') throw new Error(`run ${id} ended ${run.conclusion} (${run.reason})`);
      left.delete(id);
    }
  }
  const seconds = (Date.now() - began) / 1000;
  for (const { child } of started) await stop(child);
  return { count, seconds, perMinute: (count / seconds) * 60 };
}

try {
  const { entry } = await start(
    ['serve'],
    {
      BATON_PORT: '0',
      BATON_DATA_DIR: dataDir,
      BATON_ADMIN_PASSWORD: PASSWORD,
      ...(DATABASE ? { BATON_DATABASE_URL: DATABASE } : {}),
    },
    'serve',
    'listening',
  );
  baseUrl = entry.url.replace(/\/$/, '');
  const { token } = await api('POST', '/v1/auth/login', undefined, { username: 'admin', password: PASSWORD });
  const inventory = await api('POST', '/v1/inventories', token, {
    name: 'bench',
    content: 'localhost ansible_connection=local\n',
  });
  const one = await measure(token, inventory.id, 1);
  console.log(
    `scale: 1 worker  × ${CONCURRENCY}: ${one.count} runs in ${one.seconds.toFixed(1)} s = ${one.perMinute.toFixed(1)} runs/min`,
  );
  const three = await measure(token, inventory.id, 3);
  console.log(
    `scale: 3 workers × ${CONCURRENCY}: ${three.count} runs in ${three.seconds.toFixed(1)} s = ${three.perMinute.toFixed(1)} runs/min`,
  );
  console.log(
    `scale: 3 workers give ${(three.perMinute / one.perMinute).toFixed(2)}× the runs per minute of 1 (target ≥ 2.7×; playbook: sleep ${SLEEP_S} s)`,
  );
} finally {
  for (const child of children) await stop(child);
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (FRESH_PG) psql(`drop database if exists ${FRESH_PG} with (force)`);
  // The prefix's keys (queue, stream, registries) go with it.
  spawnSync('sh', [
    '-c',
    `redis-cli -u "$0" --scan --pattern "$1*" | xargs -r redis-cli -u "$0" del >/dev/null`,
    REDIS,
    common.BATON_QUEUE_PREFIX,
  ]);
}
