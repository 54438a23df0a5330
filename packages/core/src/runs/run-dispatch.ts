// The dispatch decision (ARCHITECTURE.md, "A run's path" steps 1–3): what becomes of a run whose bundle cannot be
// built when it is handed to an executor. Every path that dispatches a run asks this one function: queue mode when
// it seals the bundle at enqueue, embedded executors when they build it after their claim, and, with launching,
// every origin. Pure: it only looks at the error.
import { BatonError, RunInputMissingError, UnavailableError } from '../common/errors.js';

/** The run is finished `error` with this reason now. */
export interface FinishRun {
  finish: 'missing_input' | 'executor_error';
}

/** The run is left as it is: the recovery sweep (ARCHITECTURE.md, "A run's path") takes it up again later. */
export interface RetryLater {
  retryLater: true;
}

export type BundleFailureVerdict = FinishRun | RetryLater;

/**
 * Why a bundle could not be built decides the run's fate:
 * - something the run references (project, inventory, credential) is gone: `missing_input`;
 * - a rule of ours refuses the run as stored (a credential of a type a run cannot use, an unknown inventory format,
 *   a split handed to an executor…): `executor_error`, since trying again cannot help;
 * - anything else (the database or another dependency away, an error we do not know): left to the sweep. Only our
 *   own named errors may end a run, so a database outage never finishes one; a pending run is enqueued again by
 *   the next sweep, a claimed one is found without an executor and ended by the sweep's own rule.
 */
export function classifyBundleFailure(err: unknown): BundleFailureVerdict {
  if (err instanceof RunInputMissingError) return { finish: 'missing_input' };
  if (err instanceof UnavailableError) return { retryLater: true };
  if (err instanceof BatonError) return { finish: 'executor_error' };
  return { retryLater: true };
}
