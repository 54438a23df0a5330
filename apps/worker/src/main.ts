#!/usr/bin/env node
// `baton worker`: the queue-mode daemon. It needs only Redis and BATON_WORKER_KEY and never opens the database.
import { parseArgs } from 'node:util';

const HELP = `Usage: baton worker [--concurrency N] [--labels a,b] [--name NAME]

Leases run jobs from Redis (BATON_REDIS_URL), runs ansible-playbook and publishes events.
Needs BATON_REDIS_URL and BATON_WORKER_KEY; never opens the database.
Also configurable with BATON_WORKER_CONCURRENCY, BATON_WORKER_LABELS, BATON_WORKER_NAME.`;

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: { help: { type: 'boolean', short: 'h' }, concurrency: { type: 'string' }, labels: { type: 'string' }, name: { type: 'string' } },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const missing = ['BATON_REDIS_URL', 'BATON_WORKER_KEY'].filter((v) => !process.env[v]);
  if (missing.length) {
    console.error(`baton worker: ${missing.join(' and ')} must be set`);
    return 2;
  }
  // The lease loop arrives with queue mode (the scale-out issue); until then say so instead of idling.
  console.error('baton worker: queue mode is not part of this build yet; run "baton serve" (embedded mode)');
  return 2;
}

try {
  process.exit(main(process.argv.slice(2)));
} catch (err) {
  console.error(`baton worker: ${(err as Error).message}`);
  process.exit(2);
}
