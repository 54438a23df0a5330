// Redis over TLS and through Sentinel (issue 19, "Deployment"), with real processes of the test's own on loopback:
// the settings go through `baton serve`'s and `baton worker`'s own config loaders, and the run queue the API
// enqueues into and the workers lease from works through them, before and after a Sentinel failover.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Redis } from 'ioredis';
import { RedisUnavailableError, type RunQueue } from '@baton/queue';
import { closeRedis, createRedisRunQueue, openRedis, whenFirstReady } from '@baton/queue/redis';
import { loadConfig } from '../apps/api/src/config/config.js';
import { loadWorkerConfig } from '../apps/worker/src/config.js';
import { type RedisProcess, startRedis, startSentinel, stopAllRedis } from './support/redis-servers.js';
import { selfSignedCertificate } from './support/tls-files.js';

const WORKER_KEY = 'ab'.repeat(32);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-redis-tls-'));

afterAll(async () => {
  await stopAllRedis();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The connection string `baton serve` builds from these variables. */
function serveRedisUrl(env: Record<string, string>): string {
  const config = loadConfig({ BATON_DATA_DIR: dir, BATON_WORKER_KEY: WORKER_KEY, ...env });
  if (!config.redisUrl) throw new Error('not in queue mode');
  return config.redisUrl;
}

/** The connection string `baton worker` builds from these variables. */
function workerRedisUrl(env: Record<string, string>): string {
  const command = loadWorkerConfig([], { BATON_WORKER_KEY: WORKER_KEY, ...env });
  if (command.kind !== 'run') throw new Error('help');
  return command.config.redisUrl;
}

/**
 * Enqueues a job on the API's queue and resolves with the run id the worker's queue leases. `retryUnavailable`: an
 * enqueue that meets a connection being switched fails fast with RedisUnavailableError (the API answers 503 and the
 * recovery sweep re-enqueues); try again until Redis is back, as the sweep would.
 */
async function roundTrip(api: RunQueue, worker: RunQueue, runId: string, retryUnavailable = false): Promise<string> {
  await enqueue(api, runId, retryUnavailable);
  return leaseOne(worker);
}

async function enqueue(api: RunQueue, runId: string, retryUnavailable: boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await api.enqueue({ runId });
      return;
    } catch (err) {
      if (!retryUnavailable || !(err instanceof RedisUnavailableError) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The run id of the first job the worker's queue leases. */
function leaseOne(worker: RunQueue): Promise<string> {
  return new Promise<string>((resolve) => {
    const subscription = worker.lease({ name: 'w1', labels: [], capacity: 1 }, async (job) => {
      resolve(job.runId);
      void subscription.close();
    });
  });
}

describe('Redis over TLS (rediss:// with BATON_REDIS_CA_FILE)', () => {
  let server: RedisProcess;
  let trusted: string;
  let other: string;
  beforeAll(async () => {
    const serverCert = selfSignedCertificate(dir, 'redis');
    trusted = serverCert.cert;
    other = selfSignedCertificate(dir, 'other').cert;
    server = await startRedis(
      ['--tls-cert-file', serverCert.cert, '--tls-key-file', serverCert.key, '--tls-auth-clients', 'no'],
      { tls: true, clientTls: { ca: fs.readFileSync(trusted) } },
    );
  });

  it('connects when the server certificate chains to the CA file, and the queue works over it', async () => {
    const env = { BATON_REDIS_URL: `rediss://127.0.0.1:${server.port}`, BATON_REDIS_CA_FILE: trusted };
    const redis = openRedis(serveRedisUrl(env), 'tls-probe');
    await whenFirstReady(redis, 10_000);
    expect(await redis.ping()).toBe('PONG');
    await closeRedis(redis);
    const api = createRedisRunQueue({ redisUrl: serveRedisUrl(env), prefix: 'tlsq' });
    const worker = createRedisRunQueue({ redisUrl: workerRedisUrl(env), prefix: 'tlsq' });
    try {
      expect(await roundTrip(api, worker, 'run_tls1')).toBe('run_tls1');
    } finally {
      await Promise.all([api.close(), worker.close()]);
    }
  });

  it('refuses a server whose certificate does not chain to the CA file', async () => {
    const url = serveRedisUrl({ BATON_REDIS_URL: `rediss://127.0.0.1:${server.port}`, BATON_REDIS_CA_FILE: other });
    const redis = openRedis(url, 'tls-wrong-ca');
    try {
      await expect(whenFirstReady(redis, 10_000)).rejects.toThrow(/certificate/i);
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a plain redis:// connection to the TLS port', async () => {
    const redis = openRedis(serveRedisUrl({ BATON_REDIS_URL: `redis://127.0.0.1:${server.port}` }), 'tls-plain', {
      overrides: { retryStrategy: () => null },
    });
    try {
      await expect(whenFirstReady(redis, 10_000)).rejects.toThrow();
    } finally {
      redis.disconnect();
    }
  });
});

describe('Redis Sentinel (BATON_REDIS_SENTINELS, BATON_REDIS_SENTINEL_NAME)', () => {
  const NAME = 'batonmaster';
  let master: RedisProcess;
  let replica: RedisProcess;
  let sentinels: RedisProcess[];
  let env: Record<string, string>;
  let api: RunQueue;
  let worker: RunQueue;
  let sentinel: Redis;

  const masterPort = async () =>
    Number(((await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as string[])[1]);
  const until = async (check: () => Promise<boolean>, what: string) => {
    // A safety net for a failover that never happens, not a measure of speed.
    const deadline = Date.now() + 45_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    master = await startRedis();
    replica = await startRedis();
    const replicaClient = replica.connect();
    await replicaClient.call('REPLICAOF', '127.0.0.1', String(master.port));
    await until(async () => /master_link_status:up/.test(await replicaClient.info('replication')), 'replication');
    replicaClient.disconnect();
    sentinels = await Promise.all([0, 1, 2].map(() => startSentinel(NAME, master.port, 2)));
    sentinel = sentinels[0]!.connect();
    // A Sentinel learns of replicas from the master's INFO; SENTINEL FAILOVER needs one it knows.
    await until(async () => {
      const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
      return replicas.some(
        (r) => r[r.indexOf('port') + 1] === String(replica.port) && r[r.indexOf('flags') + 1] === 'slave',
      );
    }, 'the Sentinel to know the replica');
    env = {
      BATON_REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      BATON_REDIS_SENTINEL_NAME: NAME,
    };
    api = createRedisRunQueue({ redisUrl: serveRedisUrl(env), prefix: 'sentq' });
    worker = createRedisRunQueue({ redisUrl: workerRedisUrl(env), prefix: 'sentq' });
  });
  afterAll(async () => {
    await Promise.all([api?.close(), worker?.close()]);
    sentinel?.disconnect();
  });

  it('reaches the master the Sentinels name: the API enqueues, a worker leases, the keys are on that master', async () => {
    expect(await masterPort()).toBe(master.port);
    expect(await roundTrip(api, worker, 'run_sent1')).toBe('run_sent1');
    const direct = master.connect();
    expect((await direct.keys('sentq:*')).length).toBeGreaterThan(0);
    direct.disconnect();
  });

  it('keeps working after a failover to the replica', async () => {
    await sentinel.call('SENTINEL', 'FAILOVER', NAME);
    await until(async () => (await masterPort()) === replica.port, 'the Sentinels to name the replica as master');
    const promoted = replica.connect();
    await until(async () => /role:master/.test(await promoted.info('replication')), 'the replica to be promoted');
    // Until the Sentinels turn the old master into a replica it still takes writes, which its resync then drops (Redis
    // replication is asynchronous): the clients must have moved by then, or answer READONLY and move.
    const demoted = master.connect();
    await until(async () => /role:slave/.test(await demoted.info('replication')), 'the old master to be demoted');
    demoted.disconnect();
    await enqueue(api, 'run_sent2', true);
    // The second job lives on the new master: the queue follows the Sentinels, not the old address. (Looked for
    // before a worker takes it: a finished job's keys are removed.)
    expect((await promoted.keys('sentq:*')).some((k) => k.includes('run_sent2'))).toBe(true);
    promoted.disconnect();
    expect(await leaseOne(worker)).toBe('run_sent2');
  });
});

describe("baton worker's Redis settings", () => {
  it('runs on Sentinels without BATON_REDIS_URL and refuses bad values naming the variable', () => {
    expect(workerRedisUrl({ BATON_REDIS_SENTINELS: '127.0.0.1:26379', BATON_REDIS_SENTINEL_NAME: 'm' })).toMatch(
      /^redis:\/\/m\?sentinels=/,
    );
    expect(() => workerRedisUrl({ BATON_REDIS_SENTINELS: 'nohost', BATON_REDIS_SENTINEL_NAME: 'm' })).toThrow(
      /BATON_REDIS_SENTINELS: "nohost" is not host:port/,
    );
    expect(() => workerRedisUrl({ BATON_REDIS_URL: 'redis://h', BATON_REDIS_CA_FILE: '/x' })).toThrow(
      /BATON_REDIS_CA_FILE: needs a rediss:\/\//,
    );
  });
});
