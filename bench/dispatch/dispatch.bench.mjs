#!/usr/bin/env node
// bench/dispatch: time from `POST /v1/runs` to the start of the ansible-playbook process, over real runs of a
// real `baton serve` (embedded mode, SQLite by default). 20 submitters each submit a run, wait for it to end,
// and submit the next, so no run waits for a free executor: the figure is Baton's own dispatch path
// (validation, transaction, audit, enqueue, lease, claim, bundle, run directory, spawn) under concurrency.
//
// The first --warmup runs (default: one per submitter) are measured apart and not counted in the figure: they all
// start in the same millisecond on a server that has served nothing yet, so they mostly measure twenty requests
// queued behind each other on a cold process. Their own figure is printed too.
//
// The start time is the `ansible-playbook started` log line the executor writes when spawn returns; both
// clocks are this machine's. The server logs to a file, not a pipe (bench/load/baton-bench.mjs): a reader that
// fell behind on a pipe would stall the server's event loop and the figure would measure the reader.
import { followRun, freshDatabase, options, percentile, startServe, tailJsonLog } from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/dispatch/dispatch.bench.mjs [--runs 200] [--submitters 20] [--warmup 20] [--database postgres://…]

Submits --runs one-task runs from --submitters concurrent clients (after --warmup runs not counted, one per submitter
by default) to a real \`baton serve\` and prints p50/p99/max from POST to the spawn of ansible-playbook, with the steps
in between. --database: a fresh database on that PostgreSQL server, dropped at the end; SQLite otherwise.
`,
  { runs: '200', submitters: '20', warmup: undefined, database: undefined },
);
const RUNS = Number(opts.runs);
const SUBMITTERS = Number(opts.submitters);
const WARMUP = Number(opts.warmup ?? opts.submitters);

const database = freshDatabase(opts.database, 'dispatch');
const serve = await startServe({
  bench: 'dispatch',
  database: database.url,
  env: { BATON_EXECUTORS: String(SUBMITTERS + 2) },
});
const started = new Map(); // run id → the `ansible-playbook started` entry
const waiters = new Map(); // run id → resolve
const tail = tailJsonLog(
  serve.logFile,
  (entry) => {
    if (entry.message !== 'ansible-playbook started') return;
    started.set(entry.run_id, entry);
    waiters.get(entry.run_id)?.();
  },
  10,
);

try {
  const { client, token, baseUrl, inventory } = serve;
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
      const run = await client.call('POST', '/v1/runs', token, { playbook, inventory_id: inventory.id });
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
      await followRun(baseUrl, token, run.id);
      const current = await client.call('GET', `/v1/runs/${run.id}`, token);
      if (current.conclusion !== 'succeeded')
        throw new Error(`run ${run.id} ended ${current.status} ${current.conclusion} (${current.reason})`);
    }
  }

  const began = Date.now();
  await Promise.all(Array.from({ length: SUBMITTERS }, submitter));
  console.log(
    `dispatch: ${latencies.length} runs, ${SUBMITTERS} submitters, ${database.label}: ` +
      `p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${percentile(latencies, 100)} ms ` +
      `(target p99 < 100 ms; ${((Date.now() - began) / 1000).toFixed(1)} s in all)`,
  );
  // Where the time goes (p50 / p99 of each step): the POST itself, waiting in the queue after the answer, the
  // claim, building the bundle, and preparing the run directory up to spawn.
  const steps = Object.entries(parts).map(
    ([step, values]) => `${step} ${percentile(values, 50)}/${percentile(values, 99)}`,
  );
  console.log(`  steps (p50/p99 ms): ${steps.join(', ')}`);
  if (warmup.length > 0)
    console.log(
      `  warm-up, not counted: ${warmup.length} runs submitted at once to a fresh server: p50 ${percentile(warmup, 50)} ms, max ${percentile(warmup, 100)} ms`,
    );
} finally {
  tail.stop();
  await serve.stop();
  database.drop();
}
