/** `work`, or `timedOut()`'s error once `ms` have passed first (the work itself goes on; callers must not care). */
export function withTimeout<T>(work: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
