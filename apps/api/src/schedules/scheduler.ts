import type { Logger } from 'winston';
import { startTickLoop, type TickLoopHandle } from '../system/tick-loop.js';
import type { Services } from '../wiring.js';

/** How often a replica looks for due schedules (6-field crons can be due every second). */
export const SCHEDULER_TICK_MS = 1000;

export type SchedulerHandle = TickLoopHandle;

/** The scheduler loop every API replica runs (see startTickLoop); a schedule that cannot fire is logged. */
export function startScheduler(
  services: Pick<Services, 'scheduler'>,
  opts: { logger: Logger; intervalMs?: number },
): SchedulerHandle {
  return startTickLoop(
    async () => {
      const results = await services.scheduler.tick();
      for (const r of results) {
        if (r.claimed && r.error !== null)
          opts.logger.warn('schedule could not fire', { schedule_id: r.scheduleId, due_at: r.dueAt, error: r.error });
      }
    },
    { logger: opts.logger, intervalMs: opts.intervalMs ?? SCHEDULER_TICK_MS, what: 'scheduler' },
  );
}
