#!/usr/bin/env node
// bench/scale: runs per minute in queue mode for a sleep-bound playbook, with 1 and then with 3 `baton worker`
// daemons (issue 5's target: at least 2.7 times as many with 3).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { freshDatabase, options, sleep, startBaton, startServe } from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/scale/scale.bench.mjs [--sleep 10] [--concurrency 1] [--runs-per-slot 4]
                                                     [--database postgres://…] [--redis redis://127.0.0.1:6379]

One real \`baton serve\` in queue mode (SQLite in a temp dir unless --database: a fresh database on that PostgreSQL
server, dropped at the end; one SQLite replica with remote workers is a supported deployment) and real \`baton worker\`
daemons of --concurrency each on one Redis, under a key prefix of their own (its keys are deleted at the end). With 1
and then 3 workers, it queues workers × concurrency × runs-per-slot runs of a playbook whose one task is
\`sleep <--sleep>\` all at once, and times the first submit to the last run finished (each must succeed).
`,
  { sleep: '10', concurrency: '1', 'runs-per-slot': '4', database: undefined, redis: 'redis://127.0.0.1:6379' },
);
const SLEEP_S = Number(opts.sleep);
const CONCURRENCY = Number(opts.concurrency);
const RUNS_PER_SLOT = Number(opts['runs-per-slot']);
const queueMode = {
  BATON_REDIS_URL: opts.redis,
  BATON_WORKER_KEY: crypto.randomBytes(32).toString('hex'),
  BATON_QUEUE_PREFIX: `bench_scale_${Date.now()}`,
  BATON_LOG_LEVEL: 'info',
  BATON_RUN_GRACE_SECONDS: '1',
};

const database = freshDatabase(opts.database, 'scale');
const serve = await startServe({ bench: 'scale', database: database.url, env: queueMode });
const { client, token } = serve;

async function measure(workers) {
  const started = [];
  for (let i = 0; i < workers; i++) {
    const name = `worker-${workers}-${i}`;
    const argv = ['worker', '--name', `bench-${workers}-${i}`, '--concurrency', String(CONCURRENCY)];
    started.push(await startBaton(argv, queueMode, { dataDir: serve.dataDir, name, ready: 'worker started' }));
  }
  const playbook = `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: sleep ${SLEEP_S}\n`;
  const count = workers * CONCURRENCY * RUNS_PER_SLOT;
  const began = Date.now();
  const left = new Set();
  for (let i = 0; i < count; i++)
    left.add((await client.call('POST', '/v1/runs', token, { playbook, inventory_id: serve.inventory.id })).id);
  while (left.size > 0) {
    await sleep(250);
    for (const id of [...left]) {
      const run = await client.call('GET', `/v1/runs/${id}`, token);
      if (run.status !== 'finished') continue;
      if (run.conclusion !== 'succeeded') throw new Error(`run ${id} ended ${run.conclusion} (${run.reason})`);
      left.delete(id);
    }
  }
  const seconds = (Date.now() - began) / 1000;
  for (const worker of started) await worker.stop();
  return { count, seconds, perMinute: (count / seconds) * 60 };
}

let exitCode = 0;
try {
  const line = (workers, r) =>
    `scale: ${workers} worker${workers > 1 ? 's' : ' '} × ${CONCURRENCY}: ${r.count} runs in ${r.seconds.toFixed(1)} s = ${r.perMinute.toFixed(1)} runs/min (${database.label})`;
  const one = await measure(1);
  console.log(line(1, one));
  const three = await measure(3);
  console.log(line(3, three));
  console.log(
    `scale: 3 workers give ${(three.perMinute / one.perMinute).toFixed(2)}× the runs per minute of 1 (target ≥ 2.7×; playbook: sleep ${SLEEP_S} s)`,
  );
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await serve.stop();
  database.drop();
  // The prefix's keys (queue, stream, registries) go with it.
  spawnSync('sh', [
    '-c',
    `redis-cli -u "$0" --scan --pattern "$1*" | xargs -r redis-cli -u "$0" del >/dev/null`,
    opts.redis,
    queueMode.BATON_QUEUE_PREFIX,
  ]);
}
process.exit(exitCode);
