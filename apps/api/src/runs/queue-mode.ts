// What `baton serve` runs beside the HTTP API in queue mode (ARCHITECTURE.md, "Processes", "A run's path"): the
// replica announces itself (a SQLite-backed one must be alone on its prefix), persists the worker daemons' events
// from the Redis stream, mirrors their heartbeats into the workers table, and, while it leads, runs the recovery
// sweep. Executors of its own are optional (BATON_EXECUTORS).
import os from 'node:os';
import { withTimeout } from '@baton/queue';
import {
  closeRedis,
  createLeaderLease,
  createReplicaRegistry,
  createRunEventConsumer,
  createWorkerRegistry,
  openRedis,
  removeDeadConsumers,
  ReplicaConflictError,
} from '@baton/queue/redis';
import { ConfigError } from '../config/config.js';
import type { Services } from '../wiring.js';
import {
  type EmbeddedMode,
  type EmbeddedModeOptions,
  startEmbeddedMode,
  SWEEP_INTERVAL_MS,
  sweepOnce,
} from './embedded-mode.js';
import { processAlive } from './process-alive.js';

/** How often a replica beats, renews its leadership and mirrors the daemons' heartbeats. */
export const REPLICA_BEAT_MS = 5_000;
/** A leader silent this long is replaced. */
const LEADER_TTL_MS = 15_000;
/** How long start-up waits for Redis before giving up with a message. */
const CONNECT_TIMEOUT_MS = 10_000;

export interface QueueModeOptions extends Omit<EmbeddedModeOptions, 'recovery'> {
  redisUrl: string;
  prefix: string;
  database: 'sqlite' | 'postgres';
  /** this replica's name in Redis (consumer, leader, announcement); default `<hostname>/<pid>` */
  replicaName?: string | undefined;
  beatMs?: number | undefined;
  /** entries another replica has held this long unacknowledged are taken over (it died) */
  claimIdleMs?: number | undefined;
}

type QueueServices = Pick<Services, 'runQueue' | 'runIngest' | 'runBundles' | 'runRecovery' | 'workers' | 'closeRuns'>;

export async function startQueueMode(services: QueueServices, opts: QueueModeOptions): Promise<EmbeddedMode> {
  const { logger } = opts;
  const name = opts.replicaName ?? `${os.hostname()}/${process.pid}`;
  const reportError = (what: string) => (err: unknown) =>
    logger.warn(what, { error: (err as Error)?.message ?? String(err) });
  const redis = openRedis(opts.redisUrl, `baton-serve:${name}`, { onError: reportError('redis connection') });
  // A replica of this host whose process is gone (killed, then restarted at once) is no rival, however fresh its last beat.
  const isGone = ({ name: other }: { name: string }) => {
    const match = /^(.*)\/([0-9]+)$/.exec(other);
    return match !== null && match[1] === os.hostname() && !processAlive(Number(match[2]));
  };
  const replicas = createReplicaRegistry({ redis, prefix: opts.prefix, name, database: opts.database, isGone });
  try {
    await withTimeout(
      replicas.join(),
      CONNECT_TIMEOUT_MS,
      () => new ConfigError(`BATON_REDIS_URL: Redis did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`),
    );
  } catch (err) {
    await closeRedis(redis);
    if (err instanceof ReplicaConflictError) throw new ConfigError(err.message);
    throw err;
  }

  const consumer = createRunEventConsumer({
    redisUrl: opts.redisUrl,
    prefix: opts.prefix,
    consumer: name,
    persist: (events, options) => services.runIngest.ingestBatch(events, options),
    onError: reportError('event stream'),
    ...(opts.claimIdleMs !== undefined ? { claimIdleMs: opts.claimIdleMs } : {}),
  });
  const daemons = createWorkerRegistry({
    redisUrl: opts.redisUrl,
    prefix: opts.prefix,
    onError: reportError('worker registry'),
  });
  const leader = createLeaderLease({
    redis,
    prefix: opts.prefix,
    holder: name,
    ttlMs: LEADER_TTL_MS,
    onError: reportError('leader lease'),
  });
  // Stream consumers of replicas that died, once the living have claimed their entries (ingest-consumers.ts).
  const removeGoneConsumers = async (): Promise<void> => {
    try {
      const { removed } = await removeDeadConsumers({ redis, prefix: opts.prefix, live: await replicas.liveNames() });
      if (removed.length > 0)
        logger.info('removed the event stream consumers of gone replicas', { consumers: removed });
    } catch (err) {
      reportError('removing gone event stream consumers')(err);
    }
  };
  let executors: EmbeddedMode | undefined;
  let beat: NodeJS.Timeout | undefined;
  let leading = false;
  try {
    await consumer.start();
    const mirror = async () =>
      services.workers.mirror(await daemons.list()).catch(reportError('mirroring worker heartbeats'));
    await mirror();
    // The first leader reconciles at once: pending runs a dead Redis forgot are queued again, lost runs finished.
    leading = await leader.tryLead();
    if (leading) await sweepOnce(services, logger);
    executors = await startEmbeddedMode(services, { ...opts, recovery: false });

    let lastSweep = Date.now();
    const sweepEvery = opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
    let beating = false;
    beat = setInterval(() => {
      if (beating) return;
      beating = true;
      void (async () => {
        await replicas.beat().catch(reportError('replica heartbeat'));
        await mirror();
        leading = await leader.tryLead();
        if (leading && Date.now() - lastSweep >= sweepEvery) {
          lastSweep = Date.now();
          await sweepOnce(services, logger);
          await removeGoneConsumers();
        }
      })().finally(() => {
        beating = false;
      });
    }, opts.beatMs ?? REPLICA_BEAT_MS);
    beat.unref();
  } catch (err) {
    await consumer.close().catch(() => {});
    await daemons.close().catch(() => {});
    await replicas.leave().catch(() => {});
    await closeRedis(redis);
    throw err;
  }
  const started = executors;

  return {
    executors: started.executors,
    leads: () => leading,
    // /readyz: a replica that cannot reach Redis cannot dispatch or ingest.
    async ping() {
      await withTimeout(redis.ping(), 2_000, () => new Error('Redis did not answer within 2 s'));
    },
    async stop(graceMs) {
      clearInterval(beat);
      // The stream reader first, while the ingester is open: what it has not acknowledged, another replica (or this
      // one restarted) reads again. This replica's own executors push to the ingester directly; their stop closes it.
      await consumer.close().catch(reportError('closing the event stream'));
      await started.stop(graceMs).catch(reportError('stopping executors'));
      await daemons.close().catch(() => {});
      await leader.resign();
      await replicas.leave().catch(() => {});
      await closeRedis(redis);
    },
  };
}
