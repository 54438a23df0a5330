import type { RunQueueContext } from './redis-run-queue-context.js';

export interface LeaseWatch {
  stop(): Promise<void>;
}

/**
 * API replicas' side of leases: about every leaseMs / 3, finds active jobs whose lock expired (their worker died
 * or lost Redis) and reports each once across all instances (`claimLost`), so the runs domain can finish the run
 * `error` / `worker_lost`. A worker that is still alive may notice the same loss itself; the claim picks one.
 */
export function startLeaseWatch(ctx: RunQueueContext): LeaseWatch {
  const everyMs = Math.max(1, Math.floor(ctx.leaseMs / 3));
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let stopped = false;

  const sweepQueue = async (queueName: string): Promise<void> => {
    const unlocked = await ctx.bullmq.activeWithoutLock(queueName);
    for (const runId of unlocked) {
      if (stopped) return;
      // Read before the claim: moving the job to failed removes its hash and the holder's name with it.
      const worker = await ctx.bullmq.holderOf(queueName, runId);
      const job = await ctx.queue(queueName).getJob(runId);
      if (job && (await ctx.claimLost(queueName, job))) ctx.onLost(runId, worker ?? 'unknown', 'expired');
    }
  };

  const sweep = async (): Promise<void> => {
    try {
      const labelSets = await ctx.refreshLabelSets();
      for (const queueName of labelSets.keys()) {
        if (stopped) return;
        await sweepQueue(queueName);
      }
    } catch (error) {
      ctx.onError(error);
    }
  };

  const schedule = (): void => {
    timer = setTimeout(() => {
      sweeping = sweep().finally(() => {
        sweeping = undefined;
        if (!stopped) schedule();
      });
    }, everyMs);
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await sweeping;
    },
  };
}
