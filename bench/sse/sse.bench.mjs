#!/usr/bin/env node
// bench/sse: S subscribers on one run's event stream; delivery p99 from the event's time to the client (issue 19's
// target: under 250 ms) and the server's RSS.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freshDatabase, mib, ms, options, percentile, startServe, treeMemory } from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/sse/sse.bench.mjs [--subscribers 1000] [--client-processes 2] [--hold 15] [--tasks 40]
                                                 [--database postgres://…]

Starts a real \`baton serve\` (embedded mode, SQLite in a temp dir unless --database) and submits one run whose first
task sleeps --hold seconds, then runs --tasks debug tasks (each a task start, a result and a log chunk). While it
sleeps, --subscribers clients open GET /v1/runs/{id}/stream; every event stamped after the last of them opened is a
live delivery. Delivery time = the client's arrival time − the event's \`ts\`.

\`ts\` is the run's own event time: the executor stamps it when it turns ansible's output into an event, before
the event crosses to the server, is stored by the ingester and published to the streams. So the figure covers the
whole ingest path (IPC, batch insert, publish, SSE write), an upper bound of "from ingest to client". Both clocks are
this machine's. The subscribers are raw TCP clients spread over --client-processes forked processes
(bench/sse/sse-clients.mjs): while events flow each keeps only the chunk and its arrival time, and parses after the
stream ended, so the clients take as little of the two cores from the server as they can; they still share them.
Prints delivery p50/p99/max over all subscribers × live events, checks every subscriber got every event in
order, and the server's RSS (all its processes) before, at the peak while streaming, and after.
`,
  { subscribers: '1000', 'client-processes': '2', hold: '15', tasks: '40', database: undefined },
);
const SUBSCRIBERS = Number(opts.subscribers);
const PROCESSES = Math.max(1, Math.min(Number(opts['client-processes']), SUBSCRIBERS));
const CLIENTS = fileURLToPath(new URL('./sse-clients.mjs', import.meta.url));

/** Forks the client processes, opens every subscriber, and resolves once all have their headers. */
async function openSubscribers(baseUrl, token, runId) {
  const children = Array.from({ length: PROCESSES }, (_, i) => {
    const count = Math.floor(SUBSCRIBERS / PROCESSES) + (i < SUBSCRIBERS % PROCESSES ? 1 : 0);
    const child = fork(CLIENTS, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    // One promise per message a child sends once; a failure or an early exit rejects whichever is still waiting.
    const expected = {};
    const settle = {};
    for (const type of ['opened', 'result'])
      expected[type] = new Promise((resolve, reject) => (settle[type] = { resolve, reject }));
    expected.result.catch(() => {}); // rejected with 'opened' when opening fails: reported there
    child.on('message', (m) => {
      if (m.type === 'failed')
        for (const s of Object.values(settle)) s.reject(new Error(`a subscriber failed: ${m.message}`));
      else settle[m.type]?.resolve(m);
    });
    child.once('exit', (code) => {
      for (const s of Object.values(settle)) s.reject(new Error(`a client process exited (${code}) too early`));
    });
    child.send({ type: 'open', url: baseUrl, token, runId, count });
    return { child, expected };
  });
  const killAll = () => children.forEach((c) => c.child.kill());
  await Promise.all(children.map((c) => c.expected.opened)).catch((err) => {
    killAll();
    throw err;
  });
  return {
    async measure(since) {
      for (const c of children) c.child.send({ type: 'measure', since });
      return Promise.all(children.map((c) => c.expected.result)).finally(killAll);
    },
  };
}

const database = freshDatabase(opts.database, 'sse');
const serve = await startServe({ bench: 'sse', database: database.url });
let exitCode = 0;
try {
  const { client, token, baseUrl } = serve;
  const tasks = Array.from(
    { length: Number(opts.tasks) },
    (_, i) => `    - ansible.builtin.debug: { msg: "sse ${i + 1}" }\n`,
  );
  const playbook =
    `- hosts: all\n  gather_facts: false\n  tasks:\n` +
    `    - ansible.builtin.command: sleep ${Number(opts.hold)}\n` +
    tasks.join('');
  const before = treeMemory(serve.child.pid).rss;
  const run = await client.call('POST', '/v1/runs', token, { playbook, inventory_id: serve.inventory.id });

  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, treeMemory(serve.child.pid).rss)), 250);
  const began = Date.now();
  const subscribers = await openSubscribers(baseUrl, token, run.id);
  const allOpenAt = Date.now();
  console.log(
    `sse: ${SUBSCRIBERS} subscribers (${PROCESSES} client processes) open in ${allOpenAt - began} ms on run ${run.id} (${database.label})`,
  );
  const results = await subscribers.measure(allOpenAt);
  clearInterval(sampler);
  const after = treeMemory(serve.child.pid).rss;

  const done = await client.call('GET', `/v1/runs/${run.id}`, token);
  const delays = results.flatMap((r) => r.delays);
  const incomplete = results.reduce((n, r) => n + r.incomplete, 0);
  const complete = results.reduce((n, r) => n + r.complete, 0);
  const counts = [...new Set(results.flatMap((r) => r.events))];
  const liveEvents = SUBSCRIBERS ? delays.length / SUBSCRIBERS : 0;
  console.log(
    `  delivery (event ts → client), ${delays.length} deliveries (${liveEvents.toFixed(0)} live events × ${SUBSCRIBERS}): ` +
      `p50 ${ms(percentile(delays, 50))} ms, p99 ${ms(percentile(delays, 99))} ms, max ${ms(percentile(delays, 100))} ms (target p99 < 250 ms)`,
  );
  console.log(
    `  streams: ${complete} complete reads of ${counts.join(' or ')} events each, ${incomplete} with a gap or a missing end, ` +
      `run ${done.conclusion}`,
  );
  console.log(`  server RSS (all processes): before ${mib(before)}, peak ${mib(peak)}, after ${mib(after)}`);
  if (liveEvents === 0) console.log('  no live event: the subscribers opened after the run ended; raise --hold');
  if (incomplete || complete !== SUBSCRIBERS || counts.length !== 1 || done.conclusion !== 'succeeded') exitCode = 1;
} finally {
  await serve.stop();
  database.drop();
}
process.exit(exitCode);
