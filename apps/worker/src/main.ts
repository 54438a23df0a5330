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
  // Signals are taken from here on, before the worker starts: its first beat and "worker started" line go out
  // before startWorker returns, and a SIGTERM that came in between must stop it gracefully, not kill it.
  // A second signal while it is still starting (Redis slow to answer) exits at once, as a second signal does later.
  let signaled: NodeJS.Signals | undefined;
  let onSignal: (signal: NodeJS.Signals) => void = (signal) => {
    if (signaled) process.exit(1);
    signaled = signal;
  };
  const dispatch = (signal: NodeJS.Signals) => onSignal(signal);
  process.on('SIGTERM', dispatch);
  process.on('SIGINT', dispatch);

  // Loaded only now: a bad configuration is reported without loading the Redis clients.
  const { startWorker } = await import('./start-worker.js');
  const started = await startWorker(config, logger);

  return new Promise<number>((resolve) => {
    let stopping = false;
    onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        // The operator does not want to wait: cancel the runs (their ansible dies with this process) and go.
        logger.warn('second signal: canceling the runs and exiting now', { signal, running: started.daemon.running() });
        started.abortNow();
        resolve(1);
        return;
      }
      stopping = true;
      logger.info('stopping: no new runs; running ones may go on for the grace period', {
        signal,
        grace_seconds: config.runGraceSeconds,
        running: started.daemon.running(),
      });
      started.stop(config.runGraceSeconds * 1000).then(
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
    if (signaled) onSignal(signaled);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`baton worker: ${(err as Error)?.message ?? String(err)}`);
    process.exit(err instanceof WorkerConfigError ? 2 : 1);
  },
);
