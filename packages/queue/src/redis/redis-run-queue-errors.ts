/** Named errors of the Redis RunQueue, so callers (routes, the worker daemon) can tell bad input from an outage. */

export class RunQueueClosedError extends Error {
  constructor() {
    super('run queue is closed');
    this.name = 'RunQueueClosedError';
  }
}

/** Redis cannot be reached right now: the caller may retry later (the recovery sweep re-enqueues pending runs). */
export class RedisUnavailableError extends Error {
  constructor(detail: string) {
    super(`Redis is unavailable: ${detail}`);
    this.name = 'RedisUnavailableError';
  }
}

export class InvalidRunJobError extends Error {
  constructor(detail: string) {
    super(`invalid run job: ${detail}`);
    this.name = 'InvalidRunJobError';
  }
}

export class InvalidWorkerSpecError extends Error {
  constructor(detail: string) {
    super(`invalid worker spec: ${detail}`);
    this.name = 'InvalidWorkerSpecError';
  }
}

/** The reason a lease's signal carries when Redis no longer holds its lock. */
export class LeaseExpiredError extends Error {
  constructor(runId: string) {
    super(`lease of run ${runId} expired`);
    this.name = 'LeaseExpiredError';
  }
}

export class RunCanceledError extends Error {
  constructor(runId: string) {
    super(`run ${runId} canceled`);
    this.name = 'RunCanceledError';
  }
}

export class InvalidRunQueueOptionsError extends Error {
  constructor(detail: string) {
    super(`invalid run queue options: ${detail}`);
    this.name = 'InvalidRunQueueOptionsError';
  }
}
