// The real launcher (bin/baton → the built apps) in child processes, configured by environment: shared by the
// end-to-end tests that start, stop and kill `baton serve`.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Run } from '@baton/contracts';
import type { DialectName } from '@baton/db';
import { createTestDatabase, type TestDatabase } from '@baton/db/testing';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BATON = path.join(ROOT, 'bin', 'baton');
export const ADMIN_PASSWORD = 'admin password for tests';
const CMD_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 45_000;

for (const entry of ['apps/api/dist/bundle/cli.js', 'apps/worker/dist/bundle/main.js']) {
  if (!fs.existsSync(path.join(ROOT, entry)))
    throw new Error(`${entry} is missing: run "pnpm build" before the CLI tests`);
}

/**
 * The parent's environment without any BATON_* variable, so the tests configure every run themselves. Playbooks run at
 * normal CPU priority: three test files run beside each other on two cores, and at SCHED_IDLE (the default) a
 * playbook gets the CPU only when none of them wants it (a run of seconds took minutes). The default is checked by
 * the executor's and the config's own tests.
 */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BATON_') && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, BATON_LOG_LEVEL: 'info', BATON_RUN_PRIORITY: 'normal', ...extra };
}

const live = new Set<ChildProcess>();
const tempDirs: string[] = [];
const databases: TestDatabase[] = [];

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Runs happen next to the data directory (which may not exist yet), never in the repository. */
export function cwdFor(env: Record<string, string>): string {
  return env.BATON_DATA_DIR ? path.dirname(env.BATON_DATA_DIR) : os.tmpdir();
}

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/baton ARGS` to completion (killed if it outlives the timeout). */
export function run(args: string[], env: Record<string, string>, input = ''): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(BATON, args, { env: cleanEnv(env), cwd: cwdFor(env), stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), CMD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export interface Server {
  base: string;
  /** the server's process id (bin/baton execs node) */
  pid: number;
  output(): string;
  /** SIGTERM, then the exit. */
  stop(): Promise<Result>;
  /** SIGKILL (a crash: nothing is cleaned up), then the exit. */
  kill(): Promise<Result>;
}

/**
 * Starts `baton serve` on a free port (or `port`) and waits until /readyz answers 200. `ownProcessGroup`: its pid is
 * its group id.
 */
export async function serve(
  env: Record<string, string>,
  opts: { ownProcessGroup?: boolean; port?: number } = {},
): Promise<Server> {
  const port = opts.port ?? (await freePort());
  const p = keep(
    ['serve'],
    { ...env, BATON_HOST: '127.0.0.1', BATON_PORT: String(port) },
    {
      // A group of its own, so a test can signal the server's whole group the way a terminal's Ctrl-C does.
      detached: opts.ownProcessGroup ?? false,
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  let ready = false;
  while (!ready) {
    const spawnError = p.spawnError();
    if (spawnError) throw spawnError;
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      const r = await p.exited;
      throw new Error(`baton serve exited (${r.code ?? r.signal}) before it was ready:\n${r.stdout}\n${r.stderr}`);
    }
    if (Date.now() > deadline) {
      p.child.kill('SIGKILL');
      throw new Error(`baton serve was not ready within ${START_TIMEOUT_MS} ms:\n${p.output()}`);
    }
    ready = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  return { base, pid: p.child.pid!, output: p.output, stop: p.stop, kill: p.kill };
}

/** A long-running `bin/baton <args>` (e.g. `worker`): its output kept, killed by cleanupProcesses if still running. */
export interface Daemon {
  output(): string;
  /** SIGTERM, then the exit (SIGKILL after the command timeout). */
  stop(): Promise<Result>;
}

export function daemon(args: string[], env: Record<string, string>): Daemon {
  const p = keep(args, env);
  return { output: p.output, stop: p.stop };
}

/** Starts `bin/baton <args>` and keeps its output; cleanupProcesses kills it if a test leaves it running. */
function keep(args: string[], env: Record<string, string>, spawnOpts: { detached?: boolean } = {}) {
  const child = spawn(BATON, args, {
    env: cleanEnv(env),
    cwd: cwdFor(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...spawnOpts,
  });
  live.add(child);
  let spawnError: Error | undefined;
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Result>((resolve) => {
    child.on('error', (err) => {
      spawnError = err;
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}\n${err.message}` });
    });
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    exited,
    spawnError: () => spawnError,
    output: () => stdout + stderr,
    /** SIGTERM, then the exit (SIGKILL after the command timeout). */
    async stop(): Promise<Result> {
      const timer = setTimeout(() => child.kill('SIGKILL'), CMD_TIMEOUT_MS);
      child.kill('SIGTERM');
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
    /** SIGKILL (a crash: nothing is cleaned up), then the exit. */
    async kill(): Promise<Result> {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

/** Runs fn against a started server and always stops it; returns the server's exit. */
export async function withServer(env: Record<string, string>, fn: (s: Server) => Promise<void>): Promise<Result> {
  const s = await serve(env);
  let failure: unknown;
  try {
    await fn(s);
  } catch (err) {
    failure = err;
  }
  const exit = await s.stop();
  if (failure !== undefined) throw failure;
  return exit;
}

export async function login(
  base: string,
  username: string,
  password: string,
): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const body = (await res.json()) as { token?: string };
  return { status: res.status, ...(body.token ? { token: body.token } : {}) };
}

/** One API call to a server at `s.base`; the body is typed by the caller (a run unless it says otherwise). */
export async function call<T = Run>(
  s: { base: string },
  token: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${s.base}${url}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as T };
}

/** Polls `probe` until it returns a value; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Process ids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => {
      try {
        return (
          Number(
            fs
              .readFileSync(`/proc/${p}/stat`, 'utf8')
              .replace(/^.*\) /s, '')
              .split(' ')[1],
          ) === pid
        );
      } catch {
        return false;
      }
    });
}

export async function getJson<T = Record<string, unknown>>(
  base: string,
  url: string,
  token: string,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${url}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as T };
}

/** A fresh data directory and, for PostgreSQL, a fresh database, as the environment of a run. */
export async function freshEnv(dialect: DialectName): Promise<Record<string, string>> {
  const env: Record<string, string> = { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data') };
  if (dialect === 'postgres') {
    const tdb = await createTestDatabase('postgres');
    databases.push(tdb);
    await tdb.db.close();
    env.BATON_DATABASE_URL = tdb.url;
  }
  return env;
}

/** Kills what is still running and removes what the tests made; call it from afterAll. */
export async function cleanupProcesses(): Promise<void> {
  for (const child of live) child.kill('SIGKILL');
  for (const tdb of databases) await tdb.drop();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
}
