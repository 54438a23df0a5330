// How a run ends, decided from facts alone (what ansible-playbook exited with, the stats it printed, why Baton
// stopped it, what refused it before it started): pure rules, testable without ansible.
import type { HostStats } from './run-event-stream.js';
import type { AnsibleResult } from './run-process.js';

export type RunConclusion = 'succeeded' | 'failed' | 'canceled' | 'error';
/** Why a run ended the way it did, where the conclusion alone does not say. */
export type RunReason =
  | 'timeout'
  | 'canceled'
  | 'shutdown'
  | 'bad_playbook'
  | 'checkout_failed'
  | 'requirements'
  | 'bad_credential'
  | 'ansible_error'
  | 'executor_error'
  | 'worker_lost';

export interface RunVerdict {
  conclusion: RunConclusion;
  reason?: RunReason | undefined;
}

/**
 * Abort a run's signal with this (`controller.abort(new ShutdownAbort())`) when the server is shutting down: the
 * run then ends `canceled` with reason `shutdown` rather than looking like a user's cancel.
 */
export class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
  constructor(message = 'the server is shutting down') {
    super(message);
  }
}

/**
 * Abort a run's signal with this when the worker running it lost its lease (queue mode: the lease expired, so
 * the queue may already count the run lost): the run then ends `error` with reason `worker_lost`, not `canceled`.
 */
export class WorkerLostAbort extends Error {
  override readonly name = 'WorkerLostAbort';
  constructor(message = 'this worker lost the lease of the run') {
    super(message);
  }
}

/** Something about the bundle that stops the run before ansible starts; `message` goes into the run's log. */
export class RunRefused extends Error {
  constructor(
    readonly conclusion: RunConclusion,
    readonly reason: RunReason,
    message: string,
  ) {
    super(message);
  }
}

/** By name, not instanceof: the reason may come from another realm (a test runner's, a worker thread's). */
const isAbortNamed = (reason: unknown, name: string): boolean =>
  typeof reason === 'object' && reason !== null && (reason as Error).name === name;
const isShutdownAbort = (reason: unknown): boolean => isAbortNamed(reason, 'ShutdownAbort');
const isWorkerLostAbort = (reason: unknown): boolean => isAbortNamed(reason, 'WorkerLostAbort');

/** Exit code of ansible-playbook for AnsibleParserError (also used for unreachable hosts, hence the stats check). */
const ANSIBLE_PARSER_ERROR_EXIT = 4;

/**
 * A cancel, the server's shutdown (ShutdownAbort) or a lost lease (WorkerLostAbort), told apart by the abort
 * signal's reason: neither of the last two may look like a user's cancel.
 */
export const canceledFor = (abortReason: unknown): RunVerdict =>
  isWorkerLostAbort(abortReason)
    ? { conclusion: 'error', reason: 'worker_lost' }
    : { conclusion: 'canceled', reason: isShutdownAbort(abortReason) ? 'shutdown' : 'canceled' };

/**
 * The verdict on a run ansible-playbook ran to its end (or was stopped in): per-host outcome comes from the final
 * `playbook_on_stats` when there is one, never from the exit code alone.
 */
export function concludeFrom(
  result: AnsibleResult,
  stats: Record<string, HostStats> | undefined,
  abortReason: unknown,
): RunVerdict {
  if (result.stoppedFor === 'canceled') return canceledFor(abortReason);
  if (result.stoppedFor === 'timeout') return { conclusion: 'error', reason: 'timeout' };
  if (stats) {
    const hostFailed = Object.values(stats).some((s) => s.failed > 0 || s.unreachable > 0);
    return { conclusion: result.exitCode === 0 && !hostFailed ? 'succeeded' : 'failed' };
  }
  if (result.exitCode === 0) return { conclusion: 'succeeded' };
  // No stats means ansible stopped before running any play: a parser error, or ansible itself broke.
  if (result.exitCode === ANSIBLE_PARSER_ERROR_EXIT) return { conclusion: 'failed', reason: 'bad_playbook' };
  return { conclusion: 'error', reason: 'ansible_error' };
}

/** The verdict on a run that threw before it concluded: a refusal carries its own, anything else is Baton's fault. */
export const concludeThrown = (err: unknown): RunVerdict =>
  err instanceof RunRefused
    ? { conclusion: err.conclusion, reason: err.reason }
    : { conclusion: 'error', reason: 'executor_error' };

const STOPPED_LINES: Partial<Record<RunReason, string>> = {
  shutdown: 'baton: the run was stopped: the server is shutting down',
  worker_lost: 'baton: the run was stopped: this worker lost its lease on the run',
};

/** The run log's last line of Baton's own when Baton stopped ansible, saying why; undefined when it did not. */
export function stoppedLine(
  stoppedFor: AnsibleResult['stoppedFor'],
  verdict: RunVerdict,
  timeoutS: number | undefined,
): string | undefined {
  if (stoppedFor === 'timeout') return `baton: the run exceeded its timeout of ${timeoutS} s and was stopped`;
  if (stoppedFor) return (verdict.reason && STOPPED_LINES[verdict.reason]) ?? 'baton: the run was canceled';
  return undefined;
}
