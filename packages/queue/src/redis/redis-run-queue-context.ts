import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { OnLeaseLost, RunJob } from '../run-queue.js';
import { LeaseExpiredError } from '../run-queue-errors.js';
import { RedisUnavailableError } from './redis-run-queue-errors.js';
import { type BullmqInternals, createBullmqInternals } from './bullmq-internals.js';
import { MARKER_TTL_SECONDS, queueNameFor, type RunQueueKeys } from './redis-run-queue-keys.js';

/**
 * What the parts of one Redis RunQueue instance share: its command connection, the BullMQ objects opened on it
 * (one Queue and, on a worker, one manually fetching Worker per label set) and the label sets seen so far.
 */
export interface RunQueueContext {
  readonly prefix: string;
  readonly keys: RunQueueKeys;
  readonly leaseMs: number;
  readonly commands: Redis;
  /** BullMQ's own keys, on the command connection: read and written only through this. */
  readonly bullmq: BullmqInternals;
  readonly onLost: OnLeaseLost;
  readonly onError: (error: unknown) => void;
  /** Queue name → sorted labels, as last read from `${prefix}:label-sets` or heard on the enqueue channel. */
  readonly labelSets: Map<string, string[]>;
  isClosed(): boolean;
  queue(queueName: string): Queue<RunJob>;
  fetcher(queueName: string): Worker<RunJob>;
  /** Re-reads every label set any instance registered. */
  refreshLabelSets(): Promise<Map<string, string[]>>;
  /** Records a label set (in Redis too) and returns its queue name. */
  registerLabelSet(labels: string[]): Promise<string>;
  /** Resolves when the command connection is up; rejects with RedisUnavailableError while it is down. */
  ready(): Promise<void>;
  /**
   * Runs `operation` (commands on the command connection) and rejects with RedisUnavailableError as soon as that
   * connection drops meanwhile, instead of waiting in ioredis's offline queue for a reconnect (an API request must
   * answer 503, not hang). The commands already sent may still take effect after the reconnect.
   */
  whileConnected<T>(operation: () => Promise<T>): Promise<T>;
  /**
   * The one atomic step that makes a lost lease reported once across all instances (a marker per enqueue), then,
   * if this caller won, moving the job from active to failed without its lock (the lock being gone). Returns true
   * when the caller must report the loss.
   */
  claimLost(queueName: string, job: Job<RunJob>): Promise<boolean>;
  /** Closes the BullMQ objects; the connections are closed by their owner. */
  closeBullmq(): Promise<void>;
}

export interface RunQueueContextOptions {
  prefix: string;
  keys: RunQueueKeys;
  leaseMs: number;
  commands: Redis;
  onLost: OnLeaseLost;
  onError: (error: unknown) => void;
  isClosed(): boolean;
}

export function createRunQueueContext(options: RunQueueContextOptions): RunQueueContext {
  const { prefix, keys, leaseMs, commands, onError } = options;
  const queues = new Map<string, Queue<RunJob>>();
  const fetchers = new Map<string, Worker<RunJob>>();
  const bullmq = createBullmqInternals(commands, prefix);
  const labelSets = new Map<string, string[]>([[queueNameFor([]), []]]);
  let everReady = commands.status === 'ready';
  commands.on('ready', () => {
    everReady = true;
  });
  /** Rejecters of the whileConnected calls in flight: one 'close' listener for all of them. */
  const inFlight = new Set<(error: Error) => void>();
  commands.on('close', () => {
    for (const fail of [...inFlight]) fail(new RedisUnavailableError('connection lost during the call'));
  });

  const parseLabelSet = (queueName: string, json: string): void => {
    try {
      const labels: unknown = JSON.parse(json);
      if (Array.isArray(labels) && labels.every((label) => typeof label === 'string')) labelSets.set(queueName, labels);
    } catch (error) {
      onError(error);
    }
  };

  return {
    prefix,
    keys,
    leaseMs,
    commands,
    bullmq,
    onLost: options.onLost,
    onError,
    labelSets,
    isClosed: options.isClosed,

    queue(queueName) {
      let queue = queues.get(queueName);
      if (!queue) {
        // The shared connection: BullMQ leaves a caller's ioredis instance open on close, we close it ourselves.
        queue = new Queue<RunJob>(queueName, { connection: commands, prefix });
        queue.on('error', onError);
        queues.set(queueName, queue);
      }
      return queue;
    },

    fetcher(queueName) {
      let fetcher = fetchers.get(queueName);
      if (!fetcher) {
        // No processor and no run(): jobs are fetched by hand with getNextJob, so BullMQ neither renews locks
        // (the holder's heartbeat does) nor runs its stalled checker (a lost lease must be reported, not retried).
        fetcher = new Worker<RunJob>(queueName, null, {
          connection: commands,
          prefix,
          autorun: false,
          lockDuration: leaseMs,
          maxStalledCount: 0,
          skipLockRenewal: true,
          skipStalledCheck: true,
        });
        fetcher.on('error', onError);
        fetchers.set(queueName, fetcher);
      }
      return fetcher;
    },

    async refreshLabelSets() {
      const all = await commands.hgetall(keys.labelSets);
      for (const [queueName, json] of Object.entries(all)) parseLabelSet(queueName, json);
      return labelSets;
    },

    async registerLabelSet(labels) {
      const queueName = queueNameFor(labels);
      // Written on every enqueue, not only when new to this instance: after Redis restarts empty, the local cache
      // still knows the set while Redis does not, and a worker started afterwards would never look at its queue.
      await commands.hset(keys.labelSets, queueName, JSON.stringify(labels));
      labelSets.set(queueName, labels);
      return queueName;
    },

    ready() {
      if (commands.status === 'ready') return Promise.resolve();
      // Only the first connect is waited for; a connection that was up and dropped fails fast.
      if (everReady || !['wait', 'connecting', 'connect'].includes(commands.status)) {
        return Promise.reject(new RedisUnavailableError(`connection is ${commands.status}`));
      }
      return new Promise<void>((resolve, reject) => {
        const settle = (error?: unknown): void => {
          commands.off('ready', onReady);
          commands.off('error', onFailure);
          commands.off('end', onFailure);
          if (error === undefined) resolve();
          else reject(new RedisUnavailableError(error instanceof Error ? error.message : String(error)));
        };
        const onReady = (): void => settle();
        const onFailure = (error?: unknown): void => settle(error ?? new Error('connection ended'));
        commands.once('ready', onReady);
        commands.once('error', onFailure);
        commands.once('end', onFailure);
      });
    },

    whileConnected(operation) {
      return new Promise((resolve, reject) => {
        const fail = (error: Error): void => {
          inFlight.delete(fail);
          reject(error);
        };
        inFlight.add(fail);
        operation().then(
          (value) => {
            inFlight.delete(fail);
            resolve(value);
          },
          (error: unknown) => {
            inFlight.delete(fail);
            reject(error);
          },
        );
      });
    },

    async claimLost(queueName, job) {
      const runId = job.id!;
      if (!(await bullmq.claimLostReport(queueName, runId, keys.lost(runId), MARKER_TTL_SECONDS))) return false;
      try {
        await bullmq.failUnlocked(job, new LeaseExpiredError(runId));
      } catch (error) {
        // Still ours to report: the marker keeps every other instance from reporting it.
        onError(error);
      }
      return true;
    },

    async closeBullmq() {
      const closing = [...fetchers.values()]
        .map((fetcher) => fetcher.close(true))
        .concat([...queues.values()].map((queue) => queue.close()));
      fetchers.clear();
      queues.clear();
      for (const result of await Promise.allSettled(closing)) if (result.status === 'rejected') onError(result.reason);
    },
  };
}
