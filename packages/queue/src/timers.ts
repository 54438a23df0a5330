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
