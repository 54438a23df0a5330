#!/usr/bin/env node
// `baton worker`: the queue-mode daemon (ARCHITECTURE.md, "Processes"). It needs only Redis and
// BATON_WORKER_KEY and never opens the database. Exit codes: 0 after a graceful stop, 1 on a second signal or
// an unexpected failure, 2 for a bad configuration (the message names the variable or flag).
import { loadWorkerConfig, WorkerConfigError } from './config.js';
import { createWorkerLogger } from './logger.js';

async function main(argv: string[]): Promise<number> {
  // First of all: reading the configuration removes BATON_WORKER_KEY from the environment.
  const command = loadWorkerConfig(argv);
  if (command.kind === 'help') {
    console.log(command.text);
    return 0;
  }
  const { config } = command;
  const logger = createWorkerLogger(config.logLevel);
  // Loaded only now: a bad configuration is reported without loading the Redis clients.
  const { startWorker } = await import('./start-worker.js');
  const worker = await startWorker(config, logger);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        // The operator does not want to wait: cancel the runs (their ansible dies with this process) and go.
        logger.warn('second signal: canceling the runs and exiting now', { signal, running: worker.daemon.running() });
        worker.abortNow();
        resolve(1);
        return;
      }
      stopping = true;
      logger.info('stopping: no new runs; running ones may go on for the grace period', {
        signal,
        grace_seconds: config.runGraceSeconds,
        running: worker.daemon.running(),
      });
      worker.stop(config.runGraceSeconds * 1000).then(
        () => {
          logger.info('worker stopped');
          resolve(0);
        },
        (err: unknown) => {
          logger.error('worker stop failed', { error: (err as Error)?.message ?? String(err) });
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`baton worker: ${(err as Error)?.message ?? String(err)}`);
    process.exit(err instanceof WorkerConfigError ? 2 : 1);
  },
);
