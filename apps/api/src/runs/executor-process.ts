// runPlaybook in a process of its own. Spawning ansible-playbook forks the spawning process; forked from the
// API's large heap, each spawn stalled the server's event loop (page-table copies, copy-on-write faults while the
// child had not exec'd yet). From this small process the forks are cheap and touch nothing of the API. It also
// runs without the server's BATON_* environment (the master key among it). The API keeps the database, the queue
// and the ingester; it sends a bundle and gets the run's events back in order over the IPC channel.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunBundle, RunEvent } from '@baton/contracts';
import {
  cleanupLeftoverRuns,
  createWarmLaunches,
  runPlaybook,
  type RunOutcome,
  type RunPlaybookOptions,
} from '@baton/executor';

/** Set in the executor process's environment: this module then serves runs instead of being a library. */
const ROLE_VARIABLE = 'BATON_EXECUTOR_PROCESS';

/** What the API sends. */
type ToExecutor =
  | { type: 'run'; runId: string; bundle: RunBundle; options: ExecutorRunOptions }
  | { type: 'cancel'; runId: string; reason: { name: string; message: string } };

/** What the executor process sends back, per run, in order. */
type FromExecutor =
  | { type: 'event'; runId: string; event: RunEvent }
  | { type: 'spawn'; runId: string; pid: number; at: number; warm: boolean }
  | { type: 'done'; runId: string; outcome: RunOutcome }
  | { type: 'failed'; runId: string; message: string };

/** The options that can cross a process boundary (no functions, no signal). */
export type ExecutorRunOptions = Omit<RunPlaybookOptions, 'onEvent' | 'signal' | 'onSpawn' | 'now' | 'launches'>;

/** An Error with the same name on the executor side, so runPlaybook can tell a shutdown from a user's cancel. */
function revive(reason: { name: string; message: string }): Error {
  const error = new Error(reason.message);
  error.name = reason.name;
  return error;
}

function serveRuns(): void {
  const controllers = new Map<string, AbortController>();
  const post = (message: FromExecutor) => process.send?.(message);
  // The next run's launch, started ahead in this process (it must be the launch's parent: parent-death signal).
  const launches = createWarmLaunches();
  process.on('message', (message: ToExecutor) => {
    if (message.type === 'cancel') {
      controllers.get(message.runId)?.abort(revive(message.reason));
      return;
    }
    const { runId } = message;
    const controller = new AbortController();
    controllers.set(runId, controller);
    runPlaybook(message.bundle, {
      ...message.options,
      launches,
      signal: controller.signal,
      onEvent: (event) => post({ type: 'event', runId, event }),
      onSpawn: (pid, at, warm) => post({ type: 'spawn', runId, pid, at: at.getTime(), warm }),
    })
      .then(
        (outcome) => post({ type: 'done', runId, outcome }),
        (err: unknown) => post({ type: 'failed', runId, message: (err as Error).message }),
      )
      .finally(() => controllers.delete(runId));
  });
  // The server is gone: nobody will store these runs' events. Exiting lets the kernel kill each run's launcher
  // and ssh-agent (they were started with a parent-death signal); the next start clears their directories.
  process.on('disconnect', () => {
    launches.close();
    process.exit(1);
  });
  // This process shares the server's process group: a Ctrl-C or a signal to the whole group must not end it
  // behind the server's back. The server drives its shutdown (cancel with a reason, then disconnect).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
}

if (process.env[ROLE_VARIABLE] === '1' && process.send) serveRuns();

interface PendingRun {
  opts: RunPlaybookOptions;
  resolve(outcome: RunOutcome): void;
  reject(err: Error): void;
  onAbort: () => void;
}

export interface ExecutorProcess {
  /** Same contract as runPlaybook, run in the executor process. */
  runPlaybook(bundle: RunBundle, opts: RunPlaybookOptions): Promise<RunOutcome>;
  close(): Promise<void>;
}

/** The server's environment without its own settings: nothing of BATON_* reaches the executor process. */
function executorEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('BATON_')) env[name] = value;
  return { ...env, [ROLE_VARIABLE]: '1' };
}

export interface ExecutorProcessOptions {
  /** where its run directories are: cleared of a dead executor process's leftovers at once, not at the next start */
  workDir?: string | undefined;
  onLost?: (message: string, cleaned: string[]) => void;
  /**
   * After this long without a run the process exits, and the next run starts another (BATON_EXECUTOR_IDLE_SECONDS):
   * an idle server then holds one Node process instead of two; a start costs the next run ~0.1 s. 0 or unset: it
   * stays.
   */
  idleExitMs?: number | undefined;
  /** told when an idle process exits */
  onRetired?: () => void;
}

/** Starts the executor process (again, if it died). Only from the built server: it loads this module's JavaScript. */
export function startExecutorProcess(opts: ExecutorProcessOptions = {}): ExecutorProcess {
  const runs = new Map<string, PendingRun>();
  let child: ChildProcess | undefined;
  let closing = false;
  // Processes sent away for being idle: their exit is not a loss (they had no runs; a new one may already serve).
  const retired = new WeakSet<ChildProcess>();
  let idleTimer: ReturnType<typeof setTimeout> | undefined;

  const retireWhenIdle = () => {
    clearTimeout(idleTimer);
    if (!opts.idleExitMs || closing || runs.size > 0 || !child) return;
    idleTimer = setTimeout(() => {
      const current = child;
      if (closing || runs.size > 0 || !current) return;
      child = undefined;
      retired.add(current);
      // It exits when its IPC channel closes (serveRuns), as at shutdown.
      current.disconnect();
      opts.onRetired?.();
    }, opts.idleExitMs);
    idleTimer.unref();
  };

  const failAll = (err: Error) => {
    for (const [runId, run] of runs) {
      runs.delete(runId);
      run.opts.signal?.removeEventListener('abort', run.onAbort);
      run.reject(err);
    }
  };

  const onMessage = (message: FromExecutor) => {
    const run = runs.get(message.runId);
    if (!run) return;
    switch (message.type) {
      case 'event':
        try {
          run.opts.onEvent(message.event);
        } catch (err) {
          // As in runPlaybook: a consumer that cannot take the run's events ends the run.
          send({
            type: 'cancel',
            runId: message.runId,
            reason: { name: 'ConsumerFailed', message: (err as Error).message },
          });
        }
        break;
      case 'spawn':
        run.opts.onSpawn?.(message.pid, new Date(message.at), message.warm);
        break;
      case 'done':
      case 'failed':
        runs.delete(message.runId);
        run.opts.signal?.removeEventListener('abort', run.onAbort);
        if (message.type === 'done') run.resolve(message.outcome);
        else run.reject(new Error(message.message));
        retireWhenIdle();
        break;
    }
  };

  const ensureChild = (): ChildProcess => {
    if (child && child.exitCode === null && child.signalCode === null && child.connected) return child;
    const started = fork(fileURLToPath(import.meta.url), [], {
      env: executorEnvironment(),
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    started.on('message', onMessage);
    started.on('exit', (code, signal) => {
      if (child === started) child = undefined;
      if (closing || retired.has(started)) return;
      const message = `the executor process exited (${signal ?? code})`;
      failAll(new Error(message));
      // Its runs' launchers and agents died with it (parent-death signal); their directories (inventories, extra
      // vars) are removed now, since the process that owned them is gone.
      if (opts.workDir)
        void cleanupLeftoverRuns(opts.workDir).then(
          (cleaned) => opts.onLost?.(message, cleaned),
          () => opts.onLost?.(message, []),
        );
      else opts.onLost?.(message, []);
    });
    started.on('error', (err) => {
      if (!retired.has(started)) failAll(err);
    });
    child = started;
    return started;
  };

  const send = (message: ToExecutor) => {
    child?.send(message);
  };

  // Started now, not with the first run: a Node start takes a few hundred milliseconds, which the first runs after
  // `baton serve` starts would otherwise wait for. After a crash the next run starts a new one.
  ensureChild();
  retireWhenIdle();

  return {
    runPlaybook(bundle, opts) {
      const runId = bundle.run_id;
      clearTimeout(idleTimer);
      const target = ensureChild();
      return new Promise<RunOutcome>((resolve, reject) => {
        const onAbort = () => {
          const reason = opts.signal?.reason as Error | undefined;
          send({
            type: 'cancel',
            runId,
            reason: { name: reason?.name ?? 'AbortError', message: reason?.message ?? 'canceled' },
          });
        };
        runs.set(runId, { opts, resolve, reject, onAbort });
        const { onEvent: _e, signal, onSpawn: _s, now: _n, launches: _l, ...options } = opts;
        target.send({ type: 'run', runId, bundle, options } satisfies ToExecutor);
        signal?.addEventListener('abort', onAbort, { once: true });
        if (signal?.aborted) onAbort();
      });
    },
    async close() {
      closing = true;
      clearTimeout(idleTimer);
      const current = child;
      if (!current || current.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
      current.disconnect();
      await exited;
    },
  };
}
