#!/usr/bin/env node
// bench/load: N concurrent API clients with a realistic mix of requests against a real `baton serve` that executes
// runs at the same time, for a fixed duration: p50/p99 per operation, errors (target 0) and throughput.
import { performance } from 'node:perf_hooks';
import {
  ApiError,
  debugPlaybook,
  followRun,
  freshDatabase,
  mib,
  ms,
  options,
  percentile,
  seconds,
  sleep,
  startServe,
  treeMemory,
} from './baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/load/load.bench.mjs [--clients 200] [--duration 300] [--think 1000] [--executors 4]
                                                   [--max-active-runs 8] [--database postgres://user@host:port/db]

Starts a real \`baton serve\` (embedded mode; SQLite in a temp dir, or with --database a fresh database created on
that PostgreSQL server and dropped at the end) and runs --clients API clients for --duration (300, 30s, 5m).
Each client waits a random 0..2×--think ms between requests and picks one of:
  list runs (GET /v1/runs?limit=50)               25 %   run page (GET /v1/runs/{id})              20 %
  log range (GET /v1/runs/{id}/logs?offset&limit) 15 %   SSE follow (/v1/runs/{id}/stream to end)   10 %
  list inventories (GET /v1/inventories)          10 %   list templates (GET /v1/templates)          10 %
  submit a 3-task local playbook (POST /v1/runs)  10 %, only while fewer than --max-active-runs are unfinished
                                                  (else a run list), so the queue stays bounded
Prints p50/p99 per operation (for SSE: time to the stream's headers; the
client then reads it to its end), errors by operation and status (target 0),
requests per second, runs finished, and the server's RSS (all its processes) at the end. Runs still unfinished
at the deadline are canceled (ansible runs at SCHED_IDLE: on a busy machine the last ones could take minutes).
`,
  {
    clients: '200',
    duration: '300',
    think: '1000',
    executors: '4',
    'max-active-runs': '8',
    database: undefined,
  },
);
const CLIENTS = Number(opts.clients);
const DURATION_MS = seconds(opts.duration) * 1000;
const THINK_MS = Number(opts.think);
const MAX_ACTIVE = Number(opts['max-active-runs']);

const database = freshDatabase(opts.database, 'load');
const serve = await startServe({
  bench: 'load',
  database: database.url,
  env: { BATON_EXECUTORS: opts.executors },
});
const { client, token, baseUrl } = serve;

const timings = new Map(); // operation → durations in ms
const errors = new Map(); // "operation status" → count
const errorSamples = [];
let requests = 0;
const finishedRuns = []; // ids of runs known to be finished (safe targets for reads)
const activeRuns = new Set();
let submitted = 0;
let loadStarted = false;
let loadRunning = true;
let canceledAtEnd = 0;
let finishedDuringLoad = 0;
let failedRuns = 0;

function record(operation, started) {
  requests += 1;
  if (!timings.has(operation)) timings.set(operation, []);
  timings.get(operation).push(performance.now() - started);
}
function fail(operation, err) {
  requests += 1;
  const key = `${operation} ${err instanceof ApiError ? err.status : (err.cause?.code ?? err.name)}`;
  errors.set(key, (errors.get(key) ?? 0) + 1);
  if (errorSamples.length < 5) errorSamples.push(`${key}: ${err.message.slice(0, 300)}`);
}
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const someRun = () => (finishedRuns.length ? pick(finishedRuns.slice(-200)) : undefined);

async function watchToEnd(runId) {
  // The submitter does not wait: its run is watched here, like a UI would, and becomes a read target at its end.
  try {
    await followRun(baseUrl, token, runId);
    const run = await client.call('GET', `/v1/runs/${runId}`, token);
    if (run.conclusion === 'canceled' && !loadRunning) canceledAtEnd += 1;
    else if (run.conclusion !== 'succeeded') failedRuns += 1;
    finishedRuns.push(runId);
    if (loadStarted) finishedDuringLoad += 1;
  } catch (err) {
    fail('watch submitted run', err);
  } finally {
    activeRuns.delete(runId);
  }
}

const operations = [
  [25, 'list runs', () => client.call('GET', '/v1/runs?limit=50', token)],
  [20, 'run page', (id) => client.call('GET', `/v1/runs/${id}`, token), true],
  [
    15,
    'log range',
    async (id) => {
      const res = await fetch(`${baseUrl}/v1/runs/${id}/logs?offset=${Math.floor(Math.random() * 5)}&limit=20`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const text = await res.text();
      if (!res.ok) throw new ApiError('GET', `/v1/runs/${id}/logs`, res.status, text);
    },
    true,
  ],
  [10, 'sse follow (open)', undefined, true],
  [10, 'list inventories', () => client.call('GET', '/v1/inventories', token)],
  [10, 'list templates', () => client.call('GET', '/v1/templates', token)],
  [10, 'submit run', undefined],
];
const totalWeight = operations.reduce((s, [w]) => s + w, 0);

/** Follows a run's stream to its end (or the end of the bench); the figure is the time to the stream's headers. */
async function sseFollow(runId, deadline) {
  const started = performance.now();
  const signal = globalThis.AbortSignal.timeout(Math.max(1, deadline - Date.now()));
  try {
    await followRun(baseUrl, token, runId, undefined, { signal, onOpen: () => record('sse follow (open)', started) });
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

async function clientLoop(deadline) {
  await sleep(Math.random() * THINK_MS); // clients do not all start in the same millisecond
  while (Date.now() < deadline) {
    let r = Math.random() * totalWeight;
    let [, name, call, needsRun] = operations.find(([w]) => (r -= w) < 0);
    const runId = needsRun
      ? name.startsWith('sse') && activeRuns.size
        ? pick([...activeRuns])
        : someRun()
      : undefined;
    if ((needsRun && !runId) || (name === 'submit run' && activeRuns.size >= MAX_ACTIVE)) {
      [, name, call] = operations[0];
    }
    const started = performance.now();
    try {
      if (name === 'submit run') {
        const run = await client.call('POST', '/v1/runs', token, {
          playbook: debugPlaybook(3, 'load'),
          inventory_id: serve.inventory.id,
        });
        record(name, started);
        submitted += 1;
        activeRuns.add(run.id);
        void watchToEnd(run.id);
      } else if (name.startsWith('sse')) {
        await sseFollow(runId, deadline);
      } else {
        await call(runId);
        record(name, started);
      }
    } catch (err) {
      fail(name, err);
    }
    await sleep(Math.random() * 2 * THINK_MS);
  }
}

let exitCode = 0;
try {
  // A few runs first, so reads have targets from the start.
  for (let i = 0; i < 3; i++) {
    const run = await client.call('POST', '/v1/runs', token, {
      playbook: debugPlaybook(3, 'load'),
      inventory_id: serve.inventory.id,
    });
    await watchToEnd(run.id);
  }
  console.log(
    `load: ${CLIENTS} clients for ${opts.duration} (think 0–${2 * THINK_MS} ms), ${database.label}, ` +
      `${opts.executors} executors, at most ${MAX_ACTIVE} unfinished runs`,
  );
  const began = Date.now();
  loadStarted = true;
  await Promise.all(Array.from({ length: CLIENTS }, () => clientLoop(began + DURATION_MS)));
  const elapsed = (Date.now() - began) / 1000;
  loadRunning = false;
  // Runs still unfinished at the deadline are canceled, not waited for: on a busy machine ansible at SCHED_IDLE can take
  // minutes. The watchers then see them end (canceled runs are not counted as failures).
  const leftOver = [...activeRuns];
  await Promise.all(leftOver.map((id) => client.call('POST', `/v1/runs/${id}/cancel`, token).catch(() => {})));
  while (activeRuns.size > 0) await sleep(100);
  const memory = treeMemory(serve.child.pid);

  console.log(`  ${'operation'.padEnd(26)} ${'count'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
  for (const [, name] of operations) {
    const values = timings.get(name) ?? [];
    console.log(
      `  ${name.padEnd(26)} ${String(values.length).padStart(7)} ${ms(percentile(values, 50)).padStart(8)} ${ms(percentile(values, 99)).padStart(8)}`,
    );
  }
  const errorCount = [...errors.values()].reduce((s, n) => s + n, 0);
  console.log(
    `  throughput: ${(requests / elapsed).toFixed(1)} requests/s over ${elapsed.toFixed(0)} s; ` +
      `runs: ${submitted} submitted, ${finishedDuringLoad - canceledAtEnd} finished, ${canceledAtEnd} canceled at the end ` +
      `(${failedRuns} not succeeded); server RSS at the end ${mib(memory.rss)} (${memory.processes.length} processes)`,
  );
  console.log(
    `  errors: ${errorCount} (target 0)${errorCount ? ': ' + [...errors].map(([k, n]) => `${k} ×${n}`).join(', ') : ''}`,
  );
  for (const sample of errorSamples) console.log(`    ${sample}`);
  if (errorCount > 0 || failedRuns > 0) exitCode = 1;
} finally {
  await serve.stop();
  database.drop();
}
process.exit(exitCode);
