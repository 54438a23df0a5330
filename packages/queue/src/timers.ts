/**
 * The clock and timers a seam reads, injected so tests can move time by hand instead of waiting for it.
 * The handle is opaque: the real one is a Node `Timeout`, a test clock may use anything.
 */
export interface Timers {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * `work`, or `timedOut()`'s error once `ms` have passed first. The work itself goes on: for calls to Redis that
 * would otherwise wait through reconnects, where the caller must answer (or give up starting) in time.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
