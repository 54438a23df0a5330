// A queue-mode installation on loopback for end-to-end tests (ARCHITECTURE.md, "Processes"): a PRIVATE
// redis-server on a free port (never the shared one on 6379, which this harness may kill and restart), a fresh
// PostgreSQL database (or SQLite for the one-replica deployment), `baton serve` replicas and `baton worker`
// daemons, all real processes started from bin/baton, with the means to SIGKILL, stop and restart each of them.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Run, RunEvent } from '@baton/contracts';
import { createTestDatabase, type TestDatabase } from '@baton/db/testing';
import { openSse, type SseStream } from '../../apps/api/src/testing/sse-client.js';
import {
  ADMIN_PASSWORD,
  BATON,
  call,
  childrenOf,
  cleanEnv,
  freePort,
  login,
  type Result,
  waitFor,
} from './baton-process.js';

const execFileAsync = promisify(execFile);
const START_TIMEOUT_MS = 45_000;
const STOP_TIMEOUT_MS = 30_000;

/** A long-running child whose output is kept; `exited` settles when it is gone. */
interface Spawned {
  /** for logs: `replica A`, `worker w1` */
  name: string;
  child: ChildProcess;
  pid: number;
  output(): string;
  alive(): boolean;
  exited: Promise<Result>;
}

function spawnKept(
  name: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  onLine?: (line: string) => void,
): Spawned {
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop()!;
    if (onLine) for (const line of lines) onLine(line);
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let gone = false;
  const exited = new Promise<Result>((resolve) => {
    child.on('error', (err) => {
      gone = true;
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}\n${err.message}` });
    });
    child.on('close', (code, signal) => {
      gone = true;
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { name, child, pid: child.pid ?? -1, output: () => `${stdout}${stderr}`, alive: () => !gone, exited };
}

async function killAndWait(p: Spawned, signal: NodeJS.Signals): Promise<Result> {
  if (!p.alive()) return p.exited;
  const timer = setTimeout(() => p.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  p.child.kill(signal);
  const r = await p.exited;
  clearTimeout(timer);
  return r;
}

/** Every process below `pid`, deepest last. */
function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  for (const c of childrenOf(pid)) out.push(c, ...descendantsOf(c));
  return out;
}

// ---------------------------------------------------------------------------------------------------------- Redis

export interface PrivateRedis {
  port: number;
  /** redis://127.0.0.1:<port> */
  url: string;
  /** the running server's pid; undefined while stopped */
  pid(): number | undefined;
  /** Stops it, losing everything (no persistence): SIGKILL, or `redis-cli shutdown nosave`. */
  stop(how?: 'kill' | 'shutdown'): Promise<void>;
  /** Starts it again on the same port, empty; resolves once it answers PING. */
  start(): Promise<void>;
  /** Runs `redis-cli -p <port> ARGS` and returns its output (raw, one value a line). */
  cli(...args: string[]): Promise<string>;
}

const redisCli = async (port: number, args: string[]): Promise<string> =>
  (await execFileAsync('redis-cli', ['-p', String(port), '--raw', ...args], { encoding: 'utf8', timeout: 10_000 }))
    .stdout;

/** Starts a private redis-server (a child of this process) on a free loopback port. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  let server: Spawned | undefined;
  const launch = async (port: number): Promise<void> => {
    const s = spawnKept(
      `redis ${port}`,
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      process.env,
      os.tmpdir(),
    );
    server = s;
    await waitFor(
      `redis-server on port ${port}`,
      async () => {
        if (!s.alive()) throw new Error(`redis-server on port ${port} exited: ${s.output()}`);
        const pong = await redisCli(port, ['ping']).catch(() => '');
        return pong.trim() === 'PONG' ? true : undefined;
      },
      15_000,
    );
  };
  // A free port can be taken between the probe and the start: try another one then.
  let port = await freePort();
  for (let attempt = 1; ; attempt++) {
    try {
      await launch(port);
      break;
    } catch (err) {
      if (server?.alive()) await killAndWait(server, 'SIGKILL');
      if (attempt === 3) throw err;
      port = await freePort();
    }
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => (server?.alive() ? server.pid : undefined),
    async stop(how = 'kill') {
      const s = server;
      if (!s?.alive()) return;
      if (how === 'shutdown') {
        await redisCli(port, ['shutdown', 'nosave']).catch(() => '');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([s.exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
        clearTimeout(timer);
      }
      await killAndWait(s, 'SIGKILL');
    },
    async start() {
      if (server?.alive()) throw new Error(`redis-server on port ${port} is still running`);
      await launch(port);
    },
    cli: (...args) => redisCli(port, args),
  };
}

// ------------------------------------------------------------------------------------------------ replicas, workers

export interface Replica {
  /** the test's own label for it (A, B, …) */
  label: string;
  /** http://127.0.0.1:<port>, from its 'listening' log line */
  base: string;
  pid: number;
  /** its consumer name in the event stream's group and its replica name: `<hostname>/<pid>` */
  consumer: string;
  dataDir: string;
  output(): string;
  alive(): boolean;
  /** SIGKILL (a crash: nothing is cleaned up), then the exit. */
  kill(): Promise<Result>;
  /** SIGTERM, then the exit. */
  stop(): Promise<Result>;
  /** SIGSTOP / SIGCONT: frozen, it keeps its connections (and whatever Redis hands them) but does nothing. */
  pause(): void;
  resume(): void;
}

export interface WorkerSpec {
  name: string;
  labels?: string[];
  concurrency?: number;
}

export interface WorkerProcess extends Required<WorkerSpec> {
  pid: number;
  workDir: string;
  output(): string;
  alive(): boolean;
  /** SIGKILL; `withPlaybooks` also kills every process below it at the same instant (a host that died). */
  kill(opts?: { withPlaybooks?: boolean }): Promise<Result>;
  /** SIGTERM, then the exit. */
  stop(): Promise<Result>;
}

export interface QueueClusterOptions {
  database: 'postgres' | 'sqlite';
  /** replicas started now (the first one alone, so only one creates the admin user) */
  replicas: number;
  workers: WorkerSpec[];
  /** extra environment for every replica and worker */
  env?: Record<string, string>;
}

export interface QueueCluster {
  /** BATON_QUEUE_PREFIX of this installation (random) */
  prefix: string;
  redis: PrivateRedis;
  /** live replicas, in start order */
  replicas: Replica[];
  /** live workers, in start order */
  workers: WorkerProcess[];
  /** The environment a replica gets, with its own data directory (e.g. for a start expected to fail). */
  replicaEnv(dataDir?: string): Record<string, string>;
  startReplica(opts?: { label?: string; dataDir?: string }): Promise<Replica>;
  /** Kills it if still alive and starts a replica on the same data directory (a new port and pid). */
  restartReplica(r: Replica): Promise<Replica>;
  startWorker(spec: WorkerSpec): Promise<WorkerProcess>;
  /** Kills it if still alive and starts it again with the same name, labels and concurrency (waiting until the name is free). */
  restartWorker(w: WorkerProcess): Promise<WorkerProcess>;
  /** An admin token (tokens live in the shared database: good on every replica). */
  token(): Promise<string>;
  call<T = Run>(r: Replica, method: string, url: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** POST /v1/inventories; returns its id. */
  inventory(r: Replica, content: string): Promise<string>;
  /** POST /v1/runs, expecting 201. */
  submit(r: Replica, body: Record<string, unknown>): Promise<Run>;
  /** Polls GET /v1/runs/{id} on `r` until `done` holds. */
  waitForRun(r: Replica, id: string, done: (run: Run) => boolean, what: string, timeoutMs?: number): Promise<Run>;
  finished(r: Replica, id: string, timeoutMs?: number): Promise<Run>;
  /** GET /v1/runs/{id}/events (query e.g. `?kind=status`), every page. */
  events(r: Replica, id: string, query?: string): Promise<RunEvent[]>;
  /** Opens the run's SSE stream on `r`. */
  sse(r: Replica, id: string, headers?: Record<string, string>): Promise<SseStream>;
  /** The last `lines` lines of output of every replica and worker started so far (dead ones too), for failure reports. */
  logTail(lines?: number): string;
  /** Kills every process, stops Redis, drops the database, removes the temp dirs. */
  close(): Promise<void>;
}

const key32 = (): string => crypto.randomBytes(32).toString('hex');

export async function startQueueCluster(opts: QueueClusterOptions): Promise<QueueCluster> {
  const prefix = `baton_t_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  const dirs: string[] = [];
  const tempDir = (stem: string): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), stem));
    dirs.push(dir);
    return dir;
  };
  const processes = new Set<Spawned>();
  let database: TestDatabase | undefined;
  let redis: PrivateRedis | undefined;
  let cachedToken: Promise<string> | undefined;
  let labelsUsed = 0;

  const close = async (): Promise<void> => {
    // Playbooks a worker started (and a killed worker left behind) go too: collected before their parents die.
    const below = [...processes].filter((p) => p.alive()).flatMap((p) => descendantsOf(p.pid));
    await Promise.all([...processes].map((p) => killAndWait(p, 'SIGKILL')));
    for (const pid of below) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await redis?.stop().catch(() => {});
    await database?.drop().catch(() => {});
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    redis = await startPrivateRedis();
    if (opts.database === 'postgres') {
      database = await createTestDatabase('postgres');
      await database.db.close();
    }
  } catch (err) {
    await close();
    throw err;
  }
  const shared: Record<string, string> = {
    BATON_REDIS_URL: redis.url,
    BATON_WORKER_KEY: key32(),
    BATON_QUEUE_PREFIX: prefix,
    ...(opts.env ?? {}),
  };
  const serveEnv: Record<string, string> = {
    ...shared,
    BATON_MASTER_KEY: key32(),
    BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
    BATON_HOST: '127.0.0.1',
    BATON_PORT: '0',
    ...(database ? { BATON_DATABASE_URL: database.url } : {}),
  };

  const cluster: QueueCluster = {
    prefix,
    redis,
    replicas: [],
    workers: [],
    replicaEnv: (dataDir) => ({ ...serveEnv, BATON_DATA_DIR: dataDir ?? path.join(tempDir('baton-replica-'), 'data') }),

    async startReplica(o = {}) {
      const env = cluster.replicaEnv(o.dataDir);
      const label = o.label ?? String.fromCharCode(65 + labelsUsed++);
      let url: string | undefined;
      const p = spawnKept(
        `replica ${label}`,
        BATON,
        ['serve'],
        cleanEnv(env),
        path.dirname(env.BATON_DATA_DIR!),
        (line) => {
          try {
            const entry = JSON.parse(line) as { message?: string; url?: string };
            if (entry.message === 'listening' && entry.url) url = entry.url.replace(/\/$/, '');
          } catch {
            // not a log line (the admin password notice)
          }
        },
      );
      processes.add(p);
      try {
        url = await waitFor(
          `replica ${label} to listen`,
          async () => {
            if (!p.alive()) throw new Error(`replica ${label} exited before it listened:\n${p.output()}`);
            return url;
          },
          START_TIMEOUT_MS,
        );
      } catch (err) {
        await killAndWait(p, 'SIGKILL');
        processes.delete(p);
        throw err;
      }
      const replica: Replica = {
        label,
        base: url,
        pid: p.pid,
        consumer: `${os.hostname()}/${p.pid}`,
        dataDir: env.BATON_DATA_DIR!,
        output: p.output,
        alive: p.alive,
        kill: () => killAndWait(p, 'SIGKILL'),
        stop: () => killAndWait(p, 'SIGTERM'),
        pause: () => void p.child.kill('SIGSTOP'),
        resume: () => void p.child.kill('SIGCONT'),
      };
      void p.exited.then(() => {
        cluster.replicas = cluster.replicas.filter((r) => r !== replica);
      });
      cluster.replicas.push(replica);
      return replica;
    },

    async restartReplica(r) {
      if (r.alive()) await r.kill();
      return cluster.startReplica({ label: r.label, dataDir: r.dataDir });
    },

    async startWorker(spec) {
      const full = { name: spec.name, labels: spec.labels ?? [], concurrency: spec.concurrency ?? 1 };
      const workDir = tempDir('baton-worker-');
      const env = { ...shared, BATON_WORK_DIR: workDir, BATON_SANDBOX: 'off', BATON_RUN_GRACE_SECONDS: '2' };
      const args = [
        'worker',
        '--name',
        full.name,
        '--concurrency',
        String(full.concurrency),
        ...(full.labels.length ? ['--labels', full.labels.join(',')] : []),
      ];
      const p = spawnKept(`worker ${full.name}`, BATON, args, cleanEnv(env), workDir);
      processes.add(p);
      // Started = its first heartbeat is in the registry (the daemon beats before it reports itself started).
      try {
        await waitFor(
          `worker ${full.name} to beat`,
          async () => {
            if (!p.alive()) throw new Error(`worker ${full.name} exited before its first heartbeat:\n${p.output()}`);
            const raw = await redisCli(redis!.port, ['hget', `${prefix}:workers`, full.name]).catch(() => '');
            try {
              return (JSON.parse(raw) as { pid?: number }).pid === p.pid ? true : undefined;
            } catch {
              return undefined;
            }
          },
          START_TIMEOUT_MS,
        );
      } catch (err) {
        await killAndWait(p, 'SIGKILL');
        processes.delete(p);
        throw err;
      }
      const worker: WorkerProcess = {
        ...full,
        pid: p.pid,
        workDir,
        output: p.output,
        alive: p.alive,
        async kill(o = {}) {
          const below = o.withPlaybooks ? descendantsOf(p.pid) : [];
          const exit = killAndWait(p, 'SIGKILL');
          for (const d of below) {
            try {
              process.kill(d, 'SIGKILL');
            } catch {
              // already gone
            }
          }
          return exit;
        },
        stop: () => killAndWait(p, 'SIGTERM'),
      };
      void p.exited.then(() => {
        cluster.workers = cluster.workers.filter((w) => w !== worker);
      });
      cluster.workers.push(worker);
      return worker;
    },

    async restartWorker(w) {
      if (w.alive()) await w.kill();
      // A killed worker's last heartbeat keeps its name taken for a while (15 s): until then the start is refused.
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          return await cluster.startWorker({ name: w.name, labels: w.labels, concurrency: w.concurrency });
        } catch (err) {
          if (!/looks alive/.test((err as Error).message) || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 1_000));
        }
      }
    },

    token() {
      cachedToken ??= (async () => {
        const r = cluster.replicas[0];
        if (!r) throw new Error('no replica to log in to');
        const res = await login(r.base, 'admin', ADMIN_PASSWORD);
        if (!res.token) throw new Error(`login on replica ${r.label}: ${res.status}`);
        return res.token;
      })();
      return cachedToken;
    },

    async call<T = Run>(r: Replica, method: string, url: string, body?: unknown) {
      return call<T>(r, await cluster.token(), method, url, body);
    },

    async inventory(r, content) {
      const res = await cluster.call<{ id: string }>(r, 'POST', '/v1/inventories', {
        name: `inv ${crypto.randomBytes(4).toString('hex')}`,
        content,
      });
      if (res.status !== 201) throw new Error(`inventory: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id;
    },

    async submit(r, body) {
      const res = await cluster.call(r, 'POST', '/v1/runs', body);
      if (res.status !== 201)
        throw new Error(`submit on replica ${r.label}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },

    waitForRun(r, id, done, what, timeoutMs = 60_000) {
      let last: Run | undefined;
      return waitFor(
        `run ${id} ${what} (replica ${r.label})`,
        async () => {
          const res = await cluster.call(r, 'GET', `/v1/runs/${id}`);
          if (res.status === 200) last = res.body;
          return res.status === 200 && done(res.body) ? res.body : undefined;
        },
        timeoutMs,
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}; last seen: ${JSON.stringify(last && { status: last.status, conclusion: last.conclusion, reason: last.reason, worker: last.worker })}`,
        );
      });
    },

    finished: (r, id, timeoutMs) =>
      cluster.waitForRun(r, id, (run) => run.status === 'finished', 'to finish', timeoutMs),

    async events(r, id, query = '') {
      const all: RunEvent[] = [];
      const sep = query ? '&' : '?';
      for (;;) {
        const after = all.length ? `${sep}after_seq=${all[all.length - 1]!.seq}` : '';
        const res = await cluster.call<RunEvent[]>(r, 'GET', `/v1/runs/${id}/events${query}${after}`);
        if (res.status !== 200) throw new Error(`events of ${id}: ${res.status} ${JSON.stringify(res.body)}`);
        all.push(...res.body);
        if (res.body.length < 1000) return all;
      }
    },

    async sse(r, id, headers = {}) {
      return openSse(`${r.base}/v1/runs/${id}/stream`, {
        Authorization: `Bearer ${await cluster.token()}`,
        ...headers,
      });
    },

    logTail: (lines = 25) =>
      [...processes]
        .map((p) => {
          // Successful requests are the tests' own polling: noise in a failure report.
          const kept = p
            .output()
            .trimEnd()
            .split('\n')
            .filter((l) => !/"message":"request".*"status":[23]\d\d/.test(l));
          return `--- ${p.name} (pid ${p.pid}${p.alive() ? '' : ', exited'}):\n${kept.slice(-lines).join('\n')}`;
        })
        .join('\n'),

    close,
  };

  try {
    // The first replica alone: it creates the admin user; the others then start side by side with the workers.
    if (opts.replicas > 0) await cluster.startReplica();
    await Promise.all([
      ...Array.from({ length: opts.replicas - 1 }, () => cluster.startReplica()),
      ...opts.workers.map((w) => cluster.startWorker(w)),
    ]);
  } catch (err) {
    await close();
    throw err;
  }
  return cluster;
}
