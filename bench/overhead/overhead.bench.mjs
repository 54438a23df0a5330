#!/usr/bin/env node
// bench/overhead: N sequential runs of a 5-task local playbook through Baton (submit, follow the stream to its end)
// against the same N runs of plain ansible-playbook; prints the wall-time ratio (issue 19's target: 1.05) and where
// Baton's extra time goes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  commandLine,
  cpuMs,
  debugPlaybook,
  followRun,
  freshDatabase,
  ms,
  options,
  percentile,
  processTree,
  startServe,
  tailJsonLog,
} from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/overhead/overhead.bench.mjs [--runs 20] [--tasks 5] [--warmup 2] [--pause 500] [--idle-baseline]
                                                           [--database postgres://…]

Starts a real \`baton serve\` (embedded mode, SQLite in a temp dir unless --database) and, alternating run by run
so both see the same machine, times:
  baton:  POST /v1/runs of a --tasks-task debug playbook on localhost (ansible_connection=local), then its event
          stream read to \`event: end\` (what a client waits for);
  direct: ansible-playbook on the same playbook and inventory with the settings the executor gives ansible
          (default stdout callback, no colour, pipelining, no retry files, yaml/ini inventory, C.UTF-8, a private
          HOME, TMPDIR and control path dir) but without Baton's event callback, its sandbox or its priority.
Prints the totals and their ratio (target 1.05), how many runs started in the launch the executor keeps ahead, and
for Baton, p50 per step: submit → spawn (the executor's \`ansible-playbook started\` log line; within it the
POST's answer, submit → lease, the claim, the bundle, and run directory → spawn, which includes the hop to the
executor process), spawn → playbook_on_start (ansible's start-up with the callback), the playbook
(playbook_on_start → playbook_on_stats, event times), stats → finished (ansible's exit, the final status event's
time; the run's clean-up comes after it) and finished → stream end (ingest, store, publish, SSE). --warmup runs of
each are not counted. Each timed run starts --pause ms after the one before ended, so neither meets the other's
leftovers (the executor starts the next run's launch as a run ends, and it loads Python libraries ahead).
--idle-baseline runs the direct playbook under \`chrt --idle 0\` like the executor does (SCHED_IDLE: on a busy
machine this alone makes ansible slower; on a quiet one it costs nothing).
`,
  { runs: '20', tasks: '5', warmup: '2', pause: '500', 'idle-baseline': false, database: undefined },
);
const RUNS = Number(opts.runs);
const WARMUP = Number(opts.warmup);
const playbook = debugPlaybook(Number(opts.tasks), 'overhead');

const database = freshDatabase(opts.database, 'overhead');
const serve = await startServe({ bench: 'overhead', database: database.url, env: { BATON_EXECUTORS: '1' } });
const spawned = new Map(); // run id → epoch ms of the executor's spawn
const tail = tailJsonLog(serve.logFile, (e) => {
  if (e.message === 'ansible-playbook started') spawned.set(e.run_id, e);
});

// The direct run's private directory, like the executor's run directory.
const directDir = path.join(serve.dataDir, 'direct');
for (const d of ['home', 'cp', 'tmp']) fs.mkdirSync(path.join(directDir, d), { recursive: true, mode: 0o700 });
fs.writeFileSync(path.join(directDir, 'ansible.cfg'), '');
fs.writeFileSync(path.join(directDir, 'inventory.ini'), 'localhost ansible_connection=local\n');
fs.writeFileSync(path.join(directDir, 'playbook.yml'), playbook);
const directEnv = {
  PATH: process.env.PATH,
  HOME: path.join(directDir, 'home'),
  TMPDIR: path.join(directDir, 'tmp'),
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  ANSIBLE_CONFIG: path.join(directDir, 'ansible.cfg'),
  ANSIBLE_STDOUT_CALLBACK: 'default',
  ANSIBLE_NOCOLOR: 'True',
  ANSIBLE_PIPELINING: 'True',
  ANSIBLE_SSH_CONTROL_PATH_DIR: path.join(directDir, 'cp'),
  ANSIBLE_LOCAL_TEMP: path.join(directDir, 'tmp'),
  ANSIBLE_RETRY_FILES_ENABLED: 'False',
  ANSIBLE_INVENTORY_UNPARSED_FAILED: 'True',
  ANSIBLE_INVENTORY_ENABLED: 'yaml,ini',
  ANSIBLE_PYTHON_INTERPRETER: 'auto_silent',
  PYTHONUNBUFFERED: '1',
};

function direct() {
  const argv = ['-i', 'inventory.ini', '--', 'playbook.yml'];
  const [command, args] = opts['idle-baseline']
    ? ['chrt', ['--idle', '0', 'ansible-playbook', ...argv]]
    : ['ansible-playbook', argv];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: directDir, env: directEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.resume(); // read like the executor reads it
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`ansible-playbook exited with ${code}`)),
    );
  });
}

/** CPU used so far, ms: the server, its executor process (a child running executor-process.js), this process. */
function cpuNow(serverPid) {
  const executor = processTree(serverPid).find((pid) => commandLine(pid).includes('executor-process'));
  const own = process.cpuUsage();
  return {
    server: cpuMs(serverPid),
    executor: executor ? cpuMs(executor) : 0,
    client: (own.user + own.system) / 1000,
  };
}

async function viaBaton() {
  const started = performance.now();
  const t0 = Date.now();
  const run = await serve.client.call('POST', '/v1/runs', serve.token, {
    playbook,
    inventory_id: serve.inventory.id,
  });
  const answered = performance.now();
  const events = await followRun(serve.baseUrl, serve.token, run.id);
  const wall = performance.now() - started;
  const endAt = Date.now();
  const last = events[events.length - 1];
  if (last?.data?.conclusion !== 'succeeded') throw new Error(`run ${run.id} ended ${JSON.stringify(last?.data)}`);
  tail.poll();
  const at = (kind) => events.find((e) => e.kind === kind)?.ts;
  const spawnLine = spawned.get(run.id);
  const spawnAt = Date.parse(spawnLine.at);
  const leasedAt = Date.parse(spawnLine.leased_at);
  return {
    wall,
    warm: spawnLine.warm === true,
    steps: {
      'submit → spawn': spawnAt - t0,
      '  POST /v1/runs answered': answered - started,
      '  submit → lease': leasedAt - t0,
      '  claim': spawnLine.claim_ms,
      '  bundle': spawnLine.bundle_ms,
      '  run directory → spawn': spawnAt - leasedAt - spawnLine.claim_ms - spawnLine.bundle_ms,
      'spawn → playbook_on_start': at('playbook_on_start') - spawnAt,
      'playbook (start → stats)': at('playbook_on_stats') - at('playbook_on_start'),
      'stats → finished status': last.ts - at('playbook_on_stats'),
      'finished → stream end': endAt - last.ts,
    },
  };
}

/** A pause before each timed run: what the last one left running (the next run's launch loading ahead) is done. */
const settle = () => new Promise((resolve) => setTimeout(resolve, Number(opts.pause)));

let exitCode = 0;
try {
  const baton = [];
  const plain = [];
  const steps = {};
  let warm = 0;
  // CPU of the server and its executor process over the counted runs (the launch ahead and ansible are their
  // children, not counted), and of this client's own process.
  const serverPid = serve.child.pid;
  let cpuAtStart;
  for (let i = 0; i < WARMUP + RUNS; i++) {
    if (i === WARMUP) cpuAtStart = cpuNow(serverPid);
    await settle();
    const b = await viaBaton();
    await settle();
    const d = await direct();
    if (i < WARMUP) continue;
    baton.push(b.wall);
    if (b.warm) warm++;
    plain.push(d);
    for (const [step, value] of Object.entries(b.steps)) (steps[step] ??= []).push(value);
  }
  const sum = (v) => v.reduce((s, x) => s + x, 0);
  console.log(
    `overhead: ${RUNS} runs of a ${opts.tasks}-task local playbook, ${database.label}` +
      `${opts['idle-baseline'] ? ', direct runs under SCHED_IDLE' : ''}`,
  );
  console.log(
    `  baton  ${(sum(baton) / 1000).toFixed(2)} s (p50 ${ms(percentile(baton, 50))} ms per run)\n` +
      `  direct ${(sum(plain) / 1000).toFixed(2)} s (p50 ${ms(percentile(plain, 50))} ms per run)\n` +
      `  ratio ${(sum(baton) / sum(plain)).toFixed(3)} (target 1.05); ${ms((sum(baton) - sum(plain)) / RUNS)} ms more per run\n` +
      `  ${warm} of ${RUNS} runs started in the launch kept ahead (process chain and sandbox waiting)`,
  );
  const cpu = cpuNow(serverPid);
  const perRun = (key) => ms((cpu[key] - cpuAtStart[key]) / RUNS);
  console.log(
    `  CPU a run (over both halves of each pair): server ${perRun('server')} ms, executor process ${perRun('executor')} ms, ` +
      `this client ${perRun('client')} ms`,
  );
  console.log(
    `  baton's steps, p50 ms:\n${Object.entries(steps)
      .map(([step, v]) => `    ${step} ${ms(percentile(v, 50))}`)
      .join('\n')}`,
  );
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  tail.stop();
  await serve.stop();
  database.drop();
}
process.exit(exitCode);
