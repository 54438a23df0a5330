// BATON_RETENTION_DAYS on a worker host: its own Galaxy requirements cache (`<work dir>/baton-requirements`) loses
// the entries no run has used for that many days, at start and then hourly, as `baton serve` prunes its own cache.
import { pruneRequirementsCache } from '@baton/executor';
import type { Logger } from 'winston';

export const REQUIREMENTS_RETENTION_INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface RequirementsRetention {
  /** Stops the loop; resolves once a pass in flight has finished. */
  stop(): Promise<void>;
}

export function startRequirementsRetention(opts: {
  cacheDir: string;
  days: number;
  logger: Logger;
  intervalMs?: number;
  now?: () => number;
}): RequirementsRetention {
  const now = opts.now ?? Date.now;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  async function pass(): Promise<void> {
    const cutoff = new Date(now() - opts.days * DAY_MS);
    const pruned = await pruneRequirementsCache(opts.cacheDir, cutoff, false);
    if (pruned.entries > 0)
      opts.logger.info('retention: pruned the requirements cache', {
        cutoff: cutoff.toISOString(),
        cache_entries: pruned.entries,
        bytes: pruned.bytes,
      });
  }

  function run(): void {
    timer = undefined;
    if (stopped) return;
    inFlight = pass()
      .catch((err: unknown) => {
        opts.logger.warn('retention: pruning the requirements cache failed', {
          error: (err as Error)?.message ?? String(err),
        });
      })
      .finally(() => {
        inFlight = undefined;
        if (stopped) return;
        // Timed from the end of the last pass, so passes never overlap; the timer never keeps the process alive.
        timer = setTimeout(run, opts.intervalMs ?? REQUIREMENTS_RETENTION_INTERVAL_MS);
        timer.unref();
      });
  }

  run();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
  };
}
