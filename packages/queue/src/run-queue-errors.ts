// Errors of the RunQueue seam, the same classes from both implementations (in-process and Redis), so callers
// match them with instanceof: a worker tells a lost lease from a cancel by the class of its signal's reason.

export class RunQueueClosedError extends Error {
  override readonly name = 'RunQueueClosedError';
  constructor() {
    super('run queue is closed');
  }
}

export class InvalidRunJobError extends Error {
  override readonly name = 'InvalidRunJobError';
  constructor(detail: string) {
    super(`invalid run job: ${detail}`);
  }
}

export class InvalidWorkerSpecError extends Error {
  override readonly name = 'InvalidWorkerSpecError';
  constructor(detail: string) {
    super(`invalid worker spec: ${detail}`);
  }
}

/** The reason a lease's signal carries when the queue no longer holds the lease (its lock ran out). */
export class LeaseExpiredError extends Error {
  override readonly name = 'LeaseExpiredError';
  constructor(runId: string) {
    super(`lease of run ${runId} expired`);
  }
}

/** The reason a lease's signal carries when its run was canceled. */
export class RunCanceledError extends Error {
  override readonly name = 'RunCanceledError';
  constructor(runId: string) {
    super(`run ${runId} canceled`);
  }
}
