// bench/ingest: persisted events per second for one run emitting 20,000 events (issue 4's target: > 10,000/s).
// Pushes a realistic stream (log chunks, task starts, per-host results with `res` payloads, item results, the
// final stats) through the real ingester into a fresh database, waits for the flush, checks every event is
// stored and was published, and prints the rate.
//
//   node --import ./scripts/ts/register.mjs bench/ingest/ingest.bench.ts [--postgres] [--events N]
import type { RunEvent } from '@baton/contracts';
import { createRunIngester, newId } from '@baton/core';
import { createTestDatabase, testRunRow } from '@baton/db/testing';
import { createInProcessEventBus } from '@baton/queue';

const args = process.argv.slice(2);
const dialect = args.includes('--postgres') ? 'postgres' : 'sqlite';
const eventsArg = args.indexOf('--events');
const TOTAL = eventsArg >= 0 ? Number(args[eventsArg + 1]) : 20_000;
if (!Number.isInteger(TOTAL) || TOTAL < 10) throw new Error('--events needs an integer of at least 10');

const HOSTS = Array.from({ length: 20 }, (_, i) => `web${String(i + 1).padStart(2, '0')}.example.com`);

/** A playbook's worth of events for one run, seq gap-free from 1, ending with playbook_on_stats and the finished status. */
function realisticEvents(runId: string, total: number): RunEvent[] {
  const events: RunEvent[] = [];
  const t0 = Date.now();
  let line = 1;
  const at = () => new Date(t0 + events.length * 3).toISOString();
  const emit = (kind: string, data: Record<string, unknown>) =>
    events.push({ run_id: runId, seq: events.length + 1, ts: at(), kind, data });
  const log = (text: string) => {
    const lines = text.split('\n').length - 1;
    emit('log', { text, start_line: line, end_line: line + lines });
    line += lines;
  };
  const stats = Object.fromEntries(
    HOSTS.map((h) => [h, { ok: 0, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 }]),
  );
  emit('status', { status: 'running' });
  emit('playbook_on_start', { playbook: 'site.yml', uuid: crypto.randomUUID(), counter: 1 });
  log('\nPLAY [webservers] **************************************************************\n');
  emit('playbook_on_play_start', { play: 'webservers', play_uuid: crypto.randomUUID(), pattern: 'webservers' });
  for (let task = 0; events.length < total - 2; task++) {
    const taskUuid = crypto.randomUUID();
    const name = `configure nginx site ${task} — prüfen ✓`;
    log(`\nTASK [${name}] ${'*'.repeat(60)}\n`);
    emit('playbook_on_task_start', {
      task: name,
      task_uuid: taskUuid,
      task_path: `roles/web/tasks/main.yml:${task * 7 + 1}`,
    });
    for (const [i, host] of HOSTS.entries()) {
      const start = new Date(t0 + events.length * 3).toISOString();
      const kind =
        task % 9 === 4 ? 'runner_on_skipped' : i === 7 && task % 13 === 0 ? 'runner_on_failed' : 'runner_on_ok';
      const changed = kind === 'runner_on_ok' && (task + i) % 5 === 0;
      if (task % 6 === 2 && kind === 'runner_on_ok')
        emit('runner_item_on_ok', {
          host,
          task: name,
          task_uuid: taskUuid,
          item: `pkg-${i}`,
          res: { changed, item: `pkg-${i}` },
        });
      emit(kind, {
        host,
        task: name,
        task_uuid: taskUuid,
        task_path: `roles/web/tasks/main.yml:${task * 7 + 1}`,
        changed,
        start,
        end: at(),
        duration: 0.25 + (i % 7) / 10,
        res: {
          changed,
          msg: kind === 'runner_on_failed' ? 'non-zero return code' : '',
          rc: kind === 'runner_on_failed' ? 1 : 0,
          stdout: `nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file test is successful (${host})`,
          stdout_lines: [
            'nginx: the configuration file /etc/nginx/nginx.conf syntax is ok',
            'nginx: configuration file test is successful',
          ],
          invocation: { module_args: { name: 'nginx', state: 'present', update_cache: true, cache_valid_time: 3600 } },
          diff: changed
            ? [
                {
                  before: 'worker_processes 2;\n',
                  after: 'worker_processes auto;\n',
                  before_header: '/etc/nginx/nginx.conf',
                },
              ]
            : [],
        },
      });
      const counts = stats[host]!;
      if (kind === 'runner_on_skipped') counts.skipped += 1;
      else if (kind === 'runner_on_failed') counts.failed += 1;
      else counts.ok += 1;
      if (changed) counts.changed += 1;
      log(
        `${kind === 'runner_on_ok' ? (changed ? 'changed' : 'ok') : kind === 'runner_on_skipped' ? 'skipping' : 'fatal'}: [${host}]\n`,
      );
    }
  }
  // The last task is cut short so the run has exactly `total` events.
  events.length = total - 2;
  emit('playbook_on_stats', { stats });
  emit('status', { status: 'finished', conclusion: 'failed', exit_code: 2, stats });
  return events;
}

const tdb = await createTestDatabase(dialect);
try {
  const runId = newId('run');
  await tdb.db.repos.runs.insert(testRunRow(runId, { inventory_content: HOSTS.join('\n') }));
  const events = realisticEvents(runId, TOTAL);
  if (events.length !== TOTAL) throw new Error(`generated ${events.length} events, wanted ${TOTAL}`);

  const bus = createInProcessEventBus();
  let received = 0;
  await bus.subscribe(runId, () => void (received += 1));
  const errors: unknown[] = [];
  const ingester = createRunIngester({
    transaction: tdb.db.transaction,
    publish: (e) => bus.publish(e),
    clock: () => new Date(),
    onError: (e) => errors.push(e),
  });

  const started = performance.now();
  for (const e of events) ingester.push(e);
  await ingester.flush();
  const ms = performance.now() - started;
  await ingester.close();
  await bus.close();

  const stored = await tdb.db.kysely
    .selectFrom('run_events')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  const run = await tdb.db.repos.runs.findById(runId);
  const problems = [
    Number(stored.n) !== TOTAL && `${stored.n} events stored`,
    received !== TOTAL && `${received} events published`,
    run?.last_seq !== TOTAL && `last_seq ${run?.last_seq}`,
    run?.status !== 'finished' && `run is ${run?.status}`,
    errors.length > 0 && `errors: ${errors.map(String).join('; ')}`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`ingest bench failed its check: ${problems.join(', ')}`);
  console.log(
    `ingest: ${TOTAL} events in ${Math.round(ms)} ms = ${Math.round((TOTAL / ms) * 1000)} events/s (${dialect})`,
  );
} finally {
  await tdb.drop();
}
