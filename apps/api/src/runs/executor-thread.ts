// runPlaybook on a thread of its own: forking ansible-playbook copies the server's page tables, and under load
// each spawn held the event loop for tens of milliseconds; parsing ansible's output is work too. On this thread
// neither delays the API. The main thread keeps the database, the queue and the ingester; it sends a bundle and
// gets the run's events back in order.
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { runPlaybook, type RunOutcome, type RunPlaybookOptions } from '@baton/executor';

/** What the main thread sends. */
type ToThread =
  | { type: 'run'; runId: string; bundle: RunBundle; options: ThreadRunOptions }
  | { type: 'cancel'; runId: string; reason: { name: string; message: string } };

/** What the executor thread sends back, per run, in order. */
type FromThread =
  | { type: 'event'; runId: string; event: RunEvent }
  | { type: 'spawn'; runId: string; pid: number }
  | { type: 'done'; runId: string; outcome: RunOutcome }
  | { type: 'failed'; runId: string; message: string };

/** The options that can cross a thread boundary (no functions, no signal). */
export type ThreadRunOptions = Omit<RunPlaybookOptions, 'onEvent' | 'signal' | 'onSpawn' | 'now'>;

/** An Error with the same name on the executor thread, so runPlaybook can tell a shutdown from a user's cancel. */
function revive(reason: { name: string; message: string }): Error {
  const error = new Error(reason.message);
  error.name = reason.name;
  return error;
}

function serveRuns(port: NonNullable<typeof parentPort>): void {
  const controllers = new Map<string, AbortController>();
  const post = (message: FromThread) => port.postMessage(message);
  port.on('message', (message: ToThread) => {
    if (message.type === 'cancel') {
      controllers.get(message.runId)?.abort(revive(message.reason));
      return;
    }
    const { runId } = message;
    const controller = new AbortController();
    controllers.set(runId, controller);
    runPlaybook(message.bundle, {
      ...message.options,
      signal: controller.signal,
      onEvent: (event) => post({ type: 'event', runId, event }),
      onSpawn: (pid) => post({ type: 'spawn', runId, pid }),
    }).then(
      (outcome) => post({ type: 'done', runId, outcome }),
      (err: unknown) => post({ type: 'failed', runId, message: (err as Error).message }),
    ).finally(() => controllers.delete(runId));
  });
}

if (!isMainThread && parentPort) serveRuns(parentPort);

interface PendingRun {
  opts: RunPlaybookOptions;
  resolve(outcome: RunOutcome): void;
  reject(err: Error): void;
  /** a throwing onEvent ends the run as runPlaybook would: stop ansible */
  onAbort: () => void;
}

export interface ThreadedRunner {
  /** Same contract as runPlaybook, run on the executor thread. */
  runPlaybook(bundle: RunBundle, opts: RunPlaybookOptions): Promise<RunOutcome>;
  close(): Promise<void>;
}

/** Starts the executor thread. Only from the built server: the thread loads this module's compiled JavaScript. */
export function startExecutorThread(): ThreadedRunner {
  const worker = new Worker(new URL(import.meta.url));
  const runs = new Map<string, PendingRun>();
  let broken: Error | undefined;
  const failAll = (err: Error) => {
    broken = err;
    for (const [runId, run] of runs) {
      runs.delete(runId);
      run.reject(err);
    }
  };
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the executor thread exited (${code})`)));
  worker.on('message', (message: FromThread) => {
    const run = runs.get(message.runId);
    if (!run) return;
    switch (message.type) {
      case 'event':
        try {
          run.opts.onEvent(message.event);
        } catch (err) {
          // As in runPlaybook: a consumer that cannot take the run's events ends the run.
          worker.postMessage({ type: 'cancel', runId: message.runId, reason: { name: 'ConsumerFailed', message: (err as Error).message } } satisfies ToThread);
        }
        break;
      case 'spawn':
        run.opts.onSpawn?.(message.pid);
        break;
      case 'done':
      case 'failed':
        runs.delete(message.runId);
        run.opts.signal?.removeEventListener('abort', run.onAbort);
        if (message.type === 'done') run.resolve(message.outcome);
        else run.reject(new Error(message.message));
        break;
    }
  });
  worker.unref();

  return {
    runPlaybook(bundle, opts) {
      if (broken) return Promise.reject(broken);
      const runId = bundle.run_id;
      return new Promise<RunOutcome>((resolve, reject) => {
        const onAbort = () => {
          const reason = opts.signal?.reason as Error | undefined;
          worker.postMessage({ type: 'cancel', runId, reason: { name: reason?.name ?? 'AbortError', message: reason?.message ?? 'canceled' } } satisfies ToThread);
        };
        runs.set(runId, { opts, resolve, reject, onAbort });
        const { onEvent: _e, signal, onSpawn: _s, now: _n, ...options } = opts;
        worker.postMessage({ type: 'run', runId, bundle, options } satisfies ToThread);
        signal?.addEventListener('abort', onAbort, { once: true });
        if (signal?.aborted) onAbort();
      });
    },
    async close() {
      await worker.terminate();
    },
  };
}
