#!/usr/bin/env node
// bench/memory: idle resident memory of `baton serve` in embedded mode, summed over ALL its processes (the server
// and its executor process, read from /proc), after a warm-up, after one run and once the executor process has
// exited for want of runs (BATON_EXECUTOR_IDLE_SECONDS); then of `baton worker` in queue
// mode (a queue-mode `baton serve` on Redis beside it, measured too). Issue 19's target: embedded serve under 120 MB.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  cpuMs,
  debugPlaybook,
  followRun,
  mib,
  options,
  processTree,
  sleep,
  startBaton,
  startServe,
  treeMemory,
} from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/memory/memory.bench.mjs [--settle 5] [--warmup 20] [--executor-idle 60] [--idle-cpu 30] [--redis redis://127.0.0.1:6379] [--no-worker]

Idle RSS of \`baton serve\` (embedded, SQLite in a temp dir) summed over its process tree: after start, after
--warmup API requests, after one 5-task run (each read --settle seconds after the activity), and once the
executor process has exited after --executor-idle seconds without runs (BATON_EXECUTOR_IDLE_SECONDS; the server's
default is 60); then the CPU the idle server uses over --idle-cpu seconds (its own ticks: scheduler, notification
sender, the event loop's delay sampling). Then a queue-mode
serve on --redis (a key prefix of its own, deleted at the end) and one \`baton worker\`, after one run each.
BATON_NODE_FLAGS reaches every node process bin/baton starts (e.g. to try V8 flags).
`,
  {
    settle: '5',
    warmup: '20',
    'executor-idle': '60',
    'idle-cpu': '30',
    redis: 'redis://127.0.0.1:6379',
    'no-worker': false,
  },
);
const SETTLE_MS = Number(opts.settle) * 1000;

function describe(label, pid) {
  const { processes, rss } = treeMemory(pid);
  const parts = processes
    .map((p) => `${p.cmd.includes('BATON_EXECUTOR') || p.pid !== pid ? 'child' : 'main'} ${p.pid} ${mib(p.rss)}`)
    .join(', ');
  console.log(`  ${label.padEnd(26)} ${mib(rss).padStart(10)}   (${processes.length} processes: ${parts})`);
  return rss;
}

async function oneRun(serve) {
  const run = await serve.client.call('POST', '/v1/runs', serve.token, {
    playbook: debugPlaybook(5, 'memory'),
    inventory_id: serve.inventory.id,
  });
  await followRun(serve.baseUrl, serve.token, run.id);
  const done = await serve.client.call('GET', `/v1/runs/${run.id}`, serve.token);
  if (done.conclusion !== 'succeeded') throw new Error(`run ${run.id} ended ${done.conclusion} (${done.reason})`);
}

async function warmUp(serve) {
  for (let i = 0; i < Number(opts.warmup); i++) {
    await serve.client.call('GET', '/v1/runs?limit=50', serve.token);
    await serve.client.call('GET', '/v1/inventories', serve.token);
    await serve.client.call('GET', '/v1/templates', serve.token);
  }
}

console.log(`memory: RSS summed over each process tree (settle ${opts.settle} s after activity)`);
const embedded = await startServe({
  bench: 'memory',
  env: { BATON_EXECUTOR_IDLE_SECONDS: opts['executor-idle'] },
});
try {
  console.log('baton serve, embedded mode (SQLite):');
  await sleep(SETTLE_MS);
  describe('after start', embedded.child.pid);
  await warmUp(embedded);
  await sleep(SETTLE_MS);
  describe(`after ${opts.warmup}×3 requests`, embedded.child.pid);
  await oneRun(embedded);
  await sleep(SETTLE_MS);
  const warm = describe('after one run', embedded.child.pid);
  console.log(`  → embedded serve after a run, executor process still up: ${mib(warm)}`);
  if (Number(opts['executor-idle']) === 0) {
    console.log('  (--executor-idle 0: the executor process stays; that reading is the idle one)');
  } else {
    // The executor process exits --executor-idle seconds after the run (a safety net of that plus a minute).
    const deadline = Date.now() + (Number(opts['executor-idle']) + 60) * 1000;
    while (treeMemory(embedded.child.pid).processes.length > 1) {
      if (Date.now() > deadline) throw new Error('the executor process did not exit when idle');
      await sleep(500);
    }
    await sleep(SETTLE_MS);
    const idle = describe('idle, executor exited', embedded.child.pid);
    console.log(`  → embedded serve idle: ${mib(idle)} (target under 120 MB = 114.4 MiB)`);
    const treeCpu = () => processTree(embedded.child.pid).reduce((sum, pid) => sum + cpuMs(pid), 0);
    const before = treeCpu();
    await sleep(Number(opts['idle-cpu']) * 1000);
    const perSecond = (treeCpu() - before) / Number(opts['idle-cpu']);
    console.log(`  → embedded serve idle CPU: ${perSecond.toFixed(1)} ms a second over ${opts['idle-cpu']} s`);
  }
} finally {
  await embedded.stop();
}

if (!opts['no-worker']) {
  const prefix = `bench_memory_${Date.now()}`;
  const queueEnv = {
    BATON_REDIS_URL: opts.redis,
    BATON_WORKER_KEY: crypto.randomBytes(32).toString('hex'),
    BATON_QUEUE_PREFIX: prefix,
  };
  const serve = await startServe({ bench: 'memory-queue', env: { ...queueEnv, BATON_EXECUTORS: '0' } });
  const workerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-memory-worker-'));
  let worker;
  try {
    worker = await startBaton(
      ['worker', '--name', 'bench-memory', '--concurrency', '1'],
      { ...queueEnv, BATON_LOG_LEVEL: 'info' },
      { dataDir: workerDir, name: 'worker', ready: 'worker started' },
    );
    await oneRun(serve);
    await sleep(SETTLE_MS);
    console.log('queue mode (SQLite, Redis), after one run:');
    describe('baton serve (no executors)', serve.child.pid);
    describe('baton worker', worker.child.pid);
  } finally {
    await worker?.stop();
    await serve.stop();
    fs.rmSync(workerDir, { recursive: true, force: true });
    // the prefix's keys, as bench/scale leaves nothing behind
    const { spawnSync } = await import('node:child_process');
    const url = new URL(opts.redis);
    const cli = ['-h', url.hostname, '-p', url.port || '6379'];
    const keys = spawnSync('redis-cli', [...cli, '--scan', '--pattern', `${prefix}*`], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
    for (let i = 0; i < keys.length; i += 500) spawnSync('redis-cli', [...cli, 'del', ...keys.slice(i, i + 500)]);
  }
}
