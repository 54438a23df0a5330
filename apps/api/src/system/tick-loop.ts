import type { Logger } from 'winston';

export interface TickLoopHandle {
  /** Stops ticking; resolves once the tick in flight (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * A background loop every API replica runs (the scheduler, the notification sender): one tick at a time (the next is
 * timed from the end of the last, so ticks never overlap), on an unref'd timer (it never keeps the process alive).
 * A failing tick is logged as `<what> tick failed`, never thrown.
 */
export function startTickLoop(
  tick: () => Promise<void>,
  opts: { logger: Logger; intervalMs: number; what: string },
): TickLoopHandle {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  const report = (err: unknown) => {
    try {
      opts.logger.error(`${opts.what} tick failed`, { err: err instanceof Error ? err.message : String(err) });
    } catch {
      // a logger that throws must not stop the loop
    }
  };

  const arm = () => {
    if (stopped) return;
    timer = setTimeout(run, opts.intervalMs);
    timer.unref();
  };

  function run(): void {
    timer = undefined;
    if (stopped) return;
    inFlight = tick()
      .catch(report)
      .finally(() => {
        inFlight = undefined;
        arm();
      });
  }

  arm();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await inFlight;
    },
  };
}
