import crypto from 'node:crypto';
import net from 'node:net';
import type { Redis } from 'ioredis';
import type { RunEvent } from '@baton/contracts';

/** Helpers for the Redis tests in src/redis; startRedisProxy is also for other packages' tests (testing/index.ts). */

export const TEST_REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other suite uses, so tests can share one Redis and clean up only their own keys. */
export const testPrefix = (): string => `baton_t_${Date.now()}_${crypto.randomBytes(4).toString('hex')}`;

/** Deletes every key under `prefix` (SCAN + DEL, never FLUSHDB: other suites share this Redis). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** Connections whose CLIENT SETNAME starts with `namePrefix`, as `{ id, name }`. */
export async function clientsNamed(redis: Redis, namePrefix: string): Promise<Array<{ id: string; name: string }>> {
  const list = (await redis.call('CLIENT', 'LIST')) as string;
  return list
    .split('\n')
    .map((line) => ({ id: /\bid=(\d+)/.exec(line)?.[1] ?? '', name: /\bname=(\S*)/.exec(line)?.[1] ?? '' }))
    .filter((client) => client.id !== '' && client.name.startsWith(namePrefix));
}

export const testEvent = (runId: string, seq: number): RunEvent => ({
  run_id: runId,
  seq,
  ts: '2024-01-01T00:00:00.000Z',
  kind: 'log',
  data: { text: `line ${seq}\n`, start_line: seq, end_line: seq + 1 },
});

/** Resolves after `ms`: only for letting a background loop take a turn, never as a measure of speed. */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds, failing with `what` after `ms` (a safety net, not a speed threshold). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
}

/**
 * A TCP hop in front of Redis that a test can take down and bring back on the same port, so a client sees Redis
 * become unreachable (connections refused) and then return, without touching the Redis other suites share.
 */
export interface RedisOutage {
  url: string;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startRedisProxy(target = TEST_REDIS_URL): Promise<RedisOutage> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let listenPort = 0;

  const up = async (): Promise<void> => {
    if (server) return;
    const next = net.createServer((client) => {
      const upstream = net.connect(Number(port || 6379), hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(listenPort, '127.0.0.1', () => resolve());
    });
    listenPort = (next.address() as net.AddressInfo).port;
    server = next;
  };

  const down = async (): Promise<void> => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await up();
  return { url: `redis://127.0.0.1:${listenPort}`, down, up, close: down };
}
