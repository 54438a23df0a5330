// Redis servers of a test's own on spare loopback ports: a plain or TLS server, replicas, and Sentinels watching a
// master. The shared Redis on 6379 is never touched. Each process is a child of the test and is killed by its pid.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './baton-process.js';

export interface RedisProcess {
  port: number;
  /** a plain connection to it (TLS options given at start are used) */
  connect(options?: RedisOptions): Redis;
  stop(): Promise<void>;
}

/** Running servers and their directories. */
const started = new Map<ChildProcess, string>();

/** Polls until `port` answers PING, failing after `ms` (a safety net for a process that did not start). */
async function answering(port: number, options: RedisOptions, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, ...options });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not yet
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis on port ${port} did not start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts `redis-server` with `args` (plus a port, loopback only, no persistence). `tls`: the port speaks TLS only
 * and `clientTls` is what the readiness probe uses.
 */
export async function startRedis(
  args: string[] = [],
  opts: { tls?: boolean; clientTls?: RedisOptions['tls']; sentinelConfig?: string } = {},
): Promise<RedisProcess> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-redis-'));
  let argv: string[];
  if (opts.sentinelConfig !== undefined) {
    // A Sentinel rewrites its configuration file: it must be a file of its own.
    const conf = path.join(dir, 'sentinel.conf');
    fs.writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\n${opts.sentinelConfig}`);
    argv = [conf, '--sentinel'];
  } else {
    const portArgs = opts.tls ? ['--port', '0', '--tls-port', String(port)] : ['--port', String(port)];
    argv = [...portArgs, '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', ...args];
  }
  const child = spawn('redis-server', argv, { stdio: 'ignore' });
  started.set(child, dir);
  const clientOptions: RedisOptions = opts.tls ? { tls: opts.clientTls ?? {} } : {};
  await answering(port, clientOptions);
  return {
    port,
    connect: (options = {}) => new Redis({ host: '127.0.0.1', port, ...clientOptions, ...options }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      started.delete(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Kills every server this module started and that is still running (for afterAll). */
export async function stopAllRedis(): Promise<void> {
  for (const [child, dir] of started) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  started.clear();
}

/** A Sentinel watching master `name` at 127.0.0.1:`masterPort` with `quorum`. */
export function startSentinel(name: string, masterPort: number, quorum: number): Promise<RedisProcess> {
  return startRedis([], {
    sentinelConfig: [
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} ${quorum}`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 10000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  });
}
