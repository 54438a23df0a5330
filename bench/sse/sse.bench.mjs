#!/usr/bin/env node
// bench/sse: S subscribers on one run's event stream; delivery p99 from the event's time to the client (issue 19's
// target: under 250 ms) and the server's RSS.
import {
  eventsComplete,
  followRun,
  freshDatabase,
  mib,
  ms,
  options,
  percentile,
  startServe,
  treeMemory,
} from '../load/baton-bench.mjs';

const opts = options(
  `
Usage: pnpm build && node bench/sse/sse.bench.mjs [--subscribers 1000] [--hold 15] [--tasks 40] [--database postgres://…]

Starts a real \`baton serve\` (embedded mode, SQLite in a temp dir unless --database) and submits one run whose first
task sleeps --hold seconds, then runs --tasks debug tasks (each a task start, a result and a log chunk). While it
sleeps, --subscribers clients open GET /v1/runs/{id}/stream; every event stamped after the last of them opened is a
live delivery. Delivery time = the client's arrival time − the event's \`ts\`.

\`ts\` is the run's own event time: the executor stamps it when it turns ansible's output into an event, before
the event crosses to the server, is stored by the ingester and published to the streams. So the figure covers the
whole ingest path (IPC, batch insert, publish, SSE write, the client's parse), an upper bound of
"from ingest to client". Both clocks are this machine's. All subscribers run in this one Node process, which
competes with the server for the cores: the figure includes the client's own delay.
Prints delivery p50/p99/max over all subscribers × live events, checks every subscriber got every event in
order, and the server's RSS (all its processes) before, at the peak while streaming, and after.
`,
  { subscribers: '1000', hold: '15', tasks: '40', database: undefined },
);
const SUBSCRIBERS = Number(opts.subscribers);

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
  let opened = 0;
  let allOpenAt;
  let allOpen;
  const openAll = new Promise((resolve) => (allOpen = resolve));
  const onOpened = () => {
    opened += 1;
    if (opened < SUBSCRIBERS) return;
    allOpenAt = Date.now();
    allOpen();
  };
  const began = Date.now();
  const streams = Array.from({ length: SUBSCRIBERS }, () =>
    followRun(baseUrl, token, run.id, undefined, { onOpen: onOpened }),
  );
  await openAll;
  console.log(`sse: ${SUBSCRIBERS} subscribers open in ${Date.now() - began} ms on run ${run.id} (${database.label})`);
  const results = await Promise.allSettled(streams);
  clearInterval(sampler);
  const after = treeMemory(serve.child.pid).rss;

  const done = await client.call('GET', `/v1/runs/${run.id}`, token);
  const failedStreams = results.filter((r) => r.status === 'rejected');
  const delays = [];
  let incomplete = 0;
  let expected;
  for (const r of results) {
    if (r.status !== 'fulfilled') continue;
    const events = r.value;
    if (eventsComplete(events).length > 0) incomplete += 1;
    expected ??= events.length;
    if (events.length !== expected) incomplete += 1;
    for (const e of events) if (e.ts > allOpenAt) delays.push(e.receivedAt - e.ts);
  }
  const liveEvents = SUBSCRIBERS ? delays.length / SUBSCRIBERS : 0;
  console.log(
    `  delivery (event ts → client), ${delays.length} deliveries (${liveEvents.toFixed(0)} live events × ${SUBSCRIBERS}): ` +
      `p50 ${ms(percentile(delays, 50))} ms, p99 ${ms(percentile(delays, 99))} ms, max ${ms(percentile(delays, 100))} ms (target p99 < 250 ms)`,
  );
  console.log(
    `  streams: ${results.length - failedStreams.length} complete reads of ${expected ?? 0} events each, ${incomplete} with a gap or a missing end, ` +
      `${failedStreams.length} failed${failedStreams.length ? ` (${failedStreams[0].reason.message})` : ''}; run ${done.conclusion}`,
  );
  console.log(`  server RSS (all processes): before ${mib(before)}, peak ${mib(peak)}, after ${mib(after)}`);
  if (liveEvents === 0) console.log('  no live event: the subscribers opened after the run ended; raise --hold');
  if (failedStreams.length || incomplete || done.conclusion !== 'succeeded') exitCode = 1;
} finally {
  await serve.stop();
  database.drop();
}
process.exit(exitCode);
