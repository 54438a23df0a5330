import type { Logger } from 'winston';
import type { Services } from '../wiring.js';
import { startTickLoop, type TickLoopHandle } from './tick-loop.js';

/** How often `baton serve` prunes with BATON_RETENTION_DAYS set (an hour's worth of runs is one short pass). */
export const RETENTION_INTERVAL_MS = 3_600_000;

/**
 * The periodic retention pass of `baton serve`. In queue mode only the leader replica prunes (`leads`), as with the
 * recovery sweep: replicas pruning together would only wait on each other's locks.
 */
export function startRetentionLoop(
  services: Pick<Services, 'retention'>,
  opts: { days: number; logger: Logger; leads: () => boolean; intervalMs?: number | undefined },
): TickLoopHandle {
  return startTickLoop(
    async () => {
      if (!opts.leads()) return;
      const r = await services.retention.prune({ days: opts.days, actor: 'system' });
      if (r.runs > 0 || (r.cache?.entries ?? 0) > 0)
        opts.logger.info('retention: pruned', {
          cutoff: r.cutoff,
          runs: r.runs,
          events: r.events,
          bytes: r.bytes,
          cache_entries: r.cache?.entries ?? 0,
        });
    },
    { logger: opts.logger, intervalMs: opts.intervalMs ?? RETENTION_INTERVAL_MS, what: 'retention' },
  );
}
