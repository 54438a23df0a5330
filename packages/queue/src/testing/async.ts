/** Small helpers for contract tests whose implementations deliver asynchronously (Redis) or at once (in-process). */

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Waits for `promise`, failing with `what` after `ms` instead of hanging until Jest's own timeout.
 * This is a safety net for an event that should come, never a measure of speed.
 */
export async function within<T>(promise: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts calls and lets a test wait until the count reaches a number. */
export class Counter {
  private count = 0;
  private waiters: Array<{ target: number; done: () => void }> = [];

  get value(): number {
    return this.count;
  }

  increment(): void {
    this.count += 1;
    this.waiters = this.waiters.filter((waiter) => {
      if (this.count < waiter.target) return true;
      waiter.done();
      return false;
    });
  }

  reach(target: number, what: string): Promise<void> {
    if (this.count >= target) return Promise.resolve();
    const reached = deferred();
    this.waiters.push({ target, done: () => reached.resolve() });
    return within(reached.promise, `${what} (wanted ${target})`);
  }
}
