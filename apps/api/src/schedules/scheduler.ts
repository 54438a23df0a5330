import type { Logger } from 'winston';
import type { Services } from '../wiring.js';

/** How often a replica looks for due schedules (6-field crons can be due every second). */
export const SCHEDULER_TICK_MS = 1000;

export interface SchedulerHandle {
  /** Stops ticking; resolves once the tick in flight (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * The scheduler loop every API replica runs: one tick at a time (the next is timed from the end of the last, so
 * ticks never overlap), on an unref'd timer (it never keeps the process alive). A failing tick is logged, never
 * thrown.
 */
export function startScheduler(
  services: Pick<Services, 'scheduler'>,
  opts: { logger: Logger; intervalMs?: number },
): SchedulerHandle {
  const intervalMs = opts.intervalMs ?? SCHEDULER_TICK_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  const report = (err: unknown) => {
    try {
      opts.logger.error('scheduler tick failed', { err: err instanceof Error ? err.message : String(err) });
    } catch {
      // a logger that throws must not stop the loop
    }
  };

  const arm = () => {
    if (stopped) return;
    timer = setTimeout(run, intervalMs);
    timer.unref();
  };

  function run(): void {
    timer = undefined;
    if (stopped) return;
    inFlight = (async () => {
      try {
        const results = await services.scheduler.tick();
        for (const r of results) {
          if (r.claimed && r.error !== null)
            opts.logger.warn('schedule could not fire', { schedule_id: r.scheduleId, due_at: r.dueAt, error: r.error });
        }
      } catch (err) {
        report(err);
      }
    })().finally(() => {
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
