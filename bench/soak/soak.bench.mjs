#!/usr/bin/env node
// bench/soak: steady runs for a long time against a real `baton serve`; the server's and its executor process's RSS
// and open file descriptors must stay flat (issue 19: growth under 10 %) and no event may be lost.
import {
  debugPlaybook,
  eventsComplete,
  fdCount,
  followRun,
  freshDatabase,
  mib,
  options,
  processTree,
  commandLine,
  rssKiB,
  seconds,
  sleep,
  startServe,
} from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/soak/soak.bench.mjs [--duration 2h] [--interval 60] [--concurrency 2] [--tasks 5]
                                                   [--warmup 10m] [--database postgres://…]

Starts a real \`baton serve\` (embedded mode, SQLite in a temp dir unless --database: a fresh database on that
PostgreSQL server, dropped at the end) and keeps --concurrency submitters busy for --duration (2h; 10m, 90s…): each
posts a --tasks-task local playbook, follows its event stream to the end, then reads the stream again from the
database. Every run's events must be seq 1..n without a gap, end in the finishing status, the second read must
equal the live one, and the run must succeed.
Every --interval seconds it samples the RSS and the open file descriptors (/proc/<pid>/fd) of the server and of its
executor process. The first sample is taken after --warmup (10m; a duration, or a number of runs) of the same
runs: start-up, first-use allocations and the heaps and caches growing to what steady work needs are not growth
(a 90-minute soak after 20 runs grew +23 % first → last, +0.4 % over its second half). It prints the first and the
last sample and their growth (target under 10 %), and the growth over the second half, from the middle sample on (a
leak grows there too; what a short warm-up missed does not).
`,
  {
    duration: '2h',
    interval: '60',
    concurrency: '2',
    tasks: '5',
    warmup: '10m',
    database: undefined,
  },
);
const DURATION_MS = seconds(opts.duration) * 1000;
const INTERVAL_MS = seconds(opts.interval) * 1000;

const database = freshDatabase(opts.database, 'soak');
const serve = await startServe({ bench: 'soak', database: database.url, env: { BATON_EXECUTORS: opts.concurrency } });
const { client, token, baseUrl } = serve;

let runs = 0;
const problems = [];

async function oneRun() {
  const run = await client.call('POST', '/v1/runs', token, {
    playbook: debugPlaybook(Number(opts.tasks), 'soak'),
    inventory_id: serve.inventory.id,
  });
  const live = await followRun(baseUrl, token, run.id);
  const stored = await followRun(baseUrl, token, run.id);
  const done = await client.call('GET', `/v1/runs/${run.id}`, token);
  const found = eventsComplete(live);
  if (stored.length !== live.length || stored.some((e, i) => e.seq !== live[i].seq || e.kind !== live[i].kind))
    found.push(`stored events differ from the live ones (${stored.length} against ${live.length})`);
  if (done.conclusion !== 'succeeded') found.push(`ended ${done.conclusion} (${done.reason})`);
  for (const p of found) problems.push(`${run.id}: ${p}`);
  runs += 1;
}

function sample() {
  const serverPid = serve.child.pid;
  const executor = processTree(serverPid).find((p) => commandLine(p).includes('executor-process'));
  return {
    at: Date.now(),
    runs,
    serverRss: rssKiB(serverPid),
    serverFds: fdCount(serverPid),
    executorRss: executor ? rssKiB(executor) : 0,
    executorFds: executor ? fdCount(executor) : 0,
  };
}
const line = (s, began) =>
  `  ${((s.at - began) / 1000).toFixed(0).padStart(6)} s ${String(s.runs).padStart(6)} runs   server ${mib(s.serverRss).padStart(10)} ${String(s.serverFds).padStart(4)} fds   executor ${mib(s.executorRss).padStart(10)} ${String(s.executorFds).padStart(4)} fds`;
const growth = (first, last) => `${first ? (((last - first) / first) * 100).toFixed(1) : '–'} %`;

let exitCode = 0;
try {
  console.log(
    `soak: ${opts.duration} of runs (${opts.concurrency} at a time, ${opts.tasks} tasks each), ${database.label}, sample every ${opts.interval} s`,
  );
  // A bare number is runs, anything else a duration; either way at the soak's concurrency.
  const warmupRuns = /^\d+$/.test(opts.warmup) ? Number(opts.warmup) : Infinity;
  const warmupUntil = Number.isFinite(warmupRuns) ? Infinity : Date.now() + seconds(opts.warmup) * 1000;
  let started = 0;
  await Promise.all(
    Array.from({ length: Number(opts.concurrency) }, async () => {
      while (started < warmupRuns && Date.now() < warmupUntil) {
        started += 1;
        await oneRun();
      }
    }),
  );
  const warmedUp = runs;
  console.log(`  warm-up: ${warmedUp} runs`);
  const began = Date.now();
  const samples = [sample()];
  console.log(line(samples[0], began));
  const deadline = began + DURATION_MS;
  const sampler = setInterval(() => {
    samples.push(sample());
    console.log(line(samples[samples.length - 1], began));
  }, INTERVAL_MS);
  await Promise.all(
    Array.from({ length: Number(opts.concurrency) }, async () => {
      while (Date.now() < deadline) await oneRun();
    }),
  );
  clearInterval(sampler);
  await sleep(2000); // the last run's cleanup (its directory, its agent) has ended
  samples.push(sample());
  const first = samples[0];
  const last = samples[samples.length - 1];
  console.log(line(last, began));
  const maxOf = (key) => Math.max(...samples.map((s) => s[key]));
  console.log(
    `  first → last: server RSS ${mib(first.serverRss)} → ${mib(last.serverRss)} (${growth(first.serverRss, last.serverRss)}, max ${mib(maxOf('serverRss'))}), ` +
      `fds ${first.serverFds} → ${last.serverFds} (${growth(first.serverFds, last.serverFds)})`,
  );
  console.log(
    `                executor RSS ${mib(first.executorRss)} → ${mib(last.executorRss)} (${growth(first.executorRss, last.executorRss)}, max ${mib(maxOf('executorRss'))}), ` +
      `fds ${first.executorFds} → ${last.executorFds} (${growth(first.executorFds, last.executorFds)})   (target: growth under 10 %)`,
  );
  // Caches and V8's heap can still grow for a while after a short warm-up; a leak grows in the second half as well.
  const mid = samples[Math.floor(samples.length / 2)];
  console.log(
    `  second half (${((mid.at - began) / 1000).toFixed(0)} s → end): server RSS ${mib(mid.serverRss)} → ${mib(last.serverRss)} (${growth(mid.serverRss, last.serverRss)}), ` +
      `executor RSS ${mib(mid.executorRss)} → ${mib(last.executorRss)} (${growth(mid.executorRss, last.executorRss)})`,
  );
  console.log(
    `  events: ${runs - warmedUp} runs during the soak (${runs} in all), ${problems.length} problems (target 0)`,
  );
  for (const p of problems.slice(0, 10)) console.log(`    ${p}`);
  if (problems.length) exitCode = 1;
} finally {
  await serve.stop();
  database.drop();
}
process.exit(exitCode);
