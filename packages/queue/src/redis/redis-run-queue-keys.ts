import type { RunJob, WorkerSpec } from '../run-queue.js';
import { InvalidRunJobError, InvalidWorkerSpecError } from '../run-queue-errors.js';

/** One day: long enough for any run to notice a cancel or a lost lease, short enough that Redis stays small. */
export const MARKER_TTL_SECONDS = 86_400;

/** The Redis names the run queue uses besides BullMQ's own `${prefix}:${queueName}:*` keys (bullmq-internals.ts). */
export function runQueueKeys(prefix: string) {
  return {
    /** Hash: BullMQ queue name → JSON of its sorted label set, so workers find every queue they may serve. */
    labelSets: `${prefix}:label-sets`,
    /** Set when a leased run is canceled: closes the race of a cancel sent between fetch and hold. */
    canceled: (runId: string) => `${prefix}:canceled:${runId}`,
    /** Holds the enqueue timestamp of the job whose lost lease was reported: the one instance that sets it reports. */
    lost: (runId: string) => `${prefix}:lost:${runId}`,
    cancelChannel: `${prefix}:cancel`,
    /** Carries `{queue, labels}` on every enqueue, so idle workers fetch at once instead of at the next poll. */
    enqueuedChannel: `${prefix}:enqueued`,
  };
}

export type RunQueueKeys = ReturnType<typeof runQueueKeys>;

/** Sorted and deduplicated, so `['b','a']` and `['a','b','a']` share one BullMQ queue. */
export function normalizeLabels(labels: readonly string[] | undefined): string[] {
  return [...new Set(labels ?? [])].sort();
}

/**
 * One BullMQ queue per label set. BullMQ names may not contain ':'; encodeURIComponent escapes it and ','
 * so the name stays readable and two label sets never share a name.
 */
export function queueNameFor(labels: readonly string[]): string {
  return labels.length === 0 ? 'runs' : `runs.${labels.map((label) => encodeURIComponent(label)).join(',')}`;
}

/** BullMQ refuses integer-like and ':'-containing job ids; a run id is the job id, so check it up front. */
export function assertRunId(runId: unknown): asserts runId is string {
  if (typeof runId !== 'string' || runId.length === 0) throw new InvalidRunJobError('runId must be a non-empty string');
  if (runId.includes(':')) throw new InvalidRunJobError(`runId ${JSON.stringify(runId)} must not contain ':'`);
  if (/^\d+$/.test(runId)) throw new InvalidRunJobError(`runId ${JSON.stringify(runId)} must not be an integer`);
}

export function assertRunJob(job: unknown): asserts job is RunJob {
  if (typeof job !== 'object' || job === null) throw new InvalidRunJobError('job must be an object');
  const { runId, labels, bundle } = job as Record<string, unknown>;
  assertRunId(runId);
  if (
    labels !== undefined &&
    !(Array.isArray(labels) && labels.every((label) => typeof label === 'string' && label.length > 0))
  ) {
    throw new InvalidRunJobError('labels must be an array of non-empty strings');
  }
  if (bundle !== undefined && typeof bundle !== 'string') throw new InvalidRunJobError('bundle must be a string');
}

export function assertWorkerSpec(spec: unknown): asserts spec is WorkerSpec {
  if (typeof spec !== 'object' || spec === null) throw new InvalidWorkerSpecError('spec must be an object');
  const { name, labels, capacity } = spec as Record<string, unknown>;
  if (typeof name !== 'string' || name.length === 0)
    throw new InvalidWorkerSpecError('name must be a non-empty string');
  if (!Array.isArray(labels) || !labels.every((label) => typeof label === 'string')) {
    throw new InvalidWorkerSpecError('labels must be an array of strings');
  }
  if (typeof capacity !== 'number' || !Number.isInteger(capacity) || capacity < 1) {
    throw new InvalidWorkerSpecError('capacity must be a positive integer');
  }
}
