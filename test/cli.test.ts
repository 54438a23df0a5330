// End to end: the real launcher (bin/baton → the built apps) in child processes, configured by environment.
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { DialectName } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BATON = path.join(ROOT, 'bin', 'baton');
const ADMIN_PASSWORD = 'admin password for tests';
const CMD_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 45_000;

for (const entry of ['apps/api/dist/cli.js', 'apps/worker/dist/main.js']) {
  if (!fs.existsSync(path.join(ROOT, entry))) throw new Error(`${entry} is missing: run "pnpm build" before the CLI tests`);
}

/** The parent's environment without any BATON_* variable, so the tests configure every run themselves. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('BATON_') && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, BATON_LOG_LEVEL: 'info', ...extra };
}

const live = new Set<ChildProcess>();
const tempDirs: string[] = [];
const databases: TestDatabase[] = [];

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Runs happen next to the data directory (which may not exist yet), never in the repository. */
function cwdFor(env: Record<string, string>): string {
  return env.BATON_DATA_DIR ? path.dirname(env.BATON_DATA_DIR) : os.tmpdir();
}

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/baton ARGS` to completion (killed if it outlives the timeout). */
function run(args: string[], env: Record<string, string>, input = ''): Promise<Result> {
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

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

interface Server {
  base: string;
  output(): string;
  /** SIGTERM, then the exit. */
  stop(): Promise<Result>;
}

/** Starts `baton serve` on a free port and waits until /readyz answers 200. */
async function serve(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(BATON, ['serve'], {
    env: cleanEnv({ ...env, BATON_HOST: '127.0.0.1', BATON_PORT: String(port) }), cwd: cwdFor(env), stdio: ['ignore', 'pipe', 'pipe'],
  });
  let spawnError: Error | undefined;
  child.on('error', (err) => (spawnError = err));
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Result>((resolve) => {
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  let ready = false;
  while (!ready) {
    if (spawnError) throw spawnError;
    if (child.exitCode !== null || child.signalCode !== null) {
      const r = await exited;
      throw new Error(`baton serve exited (${r.code ?? r.signal}) before it was ready:\n${r.stdout}\n${r.stderr}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`baton serve was not ready within ${START_TIMEOUT_MS} ms:\n${stdout}\n${stderr}`);
    }
    ready = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false);
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    output: () => stdout + stderr,
    async stop() {
      const timer = setTimeout(() => child.kill('SIGKILL'), CMD_TIMEOUT_MS);
      child.kill('SIGTERM');
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
}

/** Runs fn against a started server and always stops it; returns the server's exit. */
async function withServer(env: Record<string, string>, fn: (s: Server) => Promise<void>): Promise<Result> {
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

async function login(base: string, username: string, password: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password }) });
  const body = (await res.json()) as { token?: string };
  return { status: res.status, ...(body.token ? { token: body.token } : {}) };
}

async function getJson<T = Record<string, unknown>>(base: string, url: string, token: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${url}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as T };
}

/** A fresh data directory and, for PostgreSQL, a fresh database, as the environment of a run. */
async function freshEnv(dialect: DialectName): Promise<Record<string, string>> {
  const env: Record<string, string> = { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data') };
  if (dialect === 'postgres') {
    const tdb = await createTestDatabase('postgres');
    databases.push(tdb);
    await tdb.db.close();
    env.BATON_DATABASE_URL = tdb.url;
  }
  return env;
}

afterAll(async () => {
  for (const child of live) child.kill('SIGKILL');
  for (const tdb of databases) await tdb.drop();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('bin/baton without a database', () => {
  it('prints the usage with --help and with no command', async () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const r = await run(args, { BATON_DATA_DIR: tempDir('baton-cli-') });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      expect(r.stdout).toMatch(/^Usage: baton <command>/m);
      for (const c of ['serve', 'worker', 'migrate', 'user create', 'user set-password', 'user list', 'key rotate']) expect(r.stdout).toContain(c);
    }
  });

  it.each([
    ['serve'], ['worker'], ['migrate'], ['user create'], ['user set-password'], ['user list'], ['key rotate'], ['user'], ['key'],
  ])('prints the usage of "%s" with --help and exits 0, touching nothing', async (command) => {
    const data = path.join(tempDir('baton-cli-'), 'data');
    // Even a bad configuration does not stand in the way of --help.
    const r = await run([...command.split(' '), '--help'], { BATON_DATA_DIR: data, BATON_PORT: 'not-a-port' });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^Usage: baton ${command}\\b`, 'm'));
    expect(fs.existsSync(data)).toBe(false);
  });

  it.each([
    [['frobnicate']], [['user', 'frobnicate']], [['key', 'forget']], [['user']], [['serve', '--no-such-option']], [['serve', 'extra-argument']],
    [['user', 'create', '--username']],
  ])('exits 2 with a message for the wrong usage %j', async (args) => {
    const r = await run(args, { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data') });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^baton: /);
    expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it('exits 2 naming BATON_PORT when it is bad, before opening anything', async () => {
    const data = path.join(tempDir('baton-cli-'), 'data');
    for (const cmd of [['serve'], ['migrate'], ['user', 'list']]) {
      const r = await run(cmd, { BATON_DATA_DIR: data, BATON_PORT: '99999' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('BATON_PORT');
    }
    expect(fs.existsSync(data)).toBe(false);
  });

  it('exits 2 with a one-line message naming BATON_DATABASE_URL when the database cannot be reached', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const r = await run(['migrate'], { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'), BATON_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/baton' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^baton: BATON_DATABASE_URL: cannot open and migrate the postgres database: .*ECONNREFUSED/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 naming BATON_DATABASE_URL when it is bad', async () => {
    const r = await run(['migrate'], { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'), BATON_DATABASE_URL: 'mysql://localhost/baton' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BATON_DATABASE_URL');
  });

  it('serve exits 2 naming BATON_PORT when the port is taken, and when BATON_REDIS_URL asks for queue mode', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const r = await run(['serve'], { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'), BATON_PORT: String(port), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('BATON_PORT');
      expect(r.stderr).toContain('EADDRINUSE');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    const redis = await run(['serve'], { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'), BATON_REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(redis.code).toBe(2);
    expect(redis.stderr).toContain('BATON_REDIS_URL');
  });

  it('baton worker without Redis exits 2 naming the missing variables', async () => {
    const none = await run(['worker'], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('BATON_REDIS_URL');
    expect(none.stderr).toContain('BATON_WORKER_KEY');
    const keyOnly = await run(['worker'], { BATON_WORKER_KEY: 'k'.repeat(64) });
    expect(keyOnly.code).toBe(2);
    expect(keyOnly.stderr).toContain('BATON_REDIS_URL');
    expect(keyOnly.stderr).not.toContain('BATON_WORKER_KEY must');
  });
});

describe.each(DIALECTS)('bin/baton on %s', (dialect) => {
  it('migrate exits 0, and again on a migrated database', async () => {
    const env = await freshEnv(dialect);
    const first = await run(['migrate'], env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expect(first.stdout).toContain(`Database (${dialect})`);
    const second = await run(['migrate'], env);
    expect({ code: second.code, stderr: second.stderr }).toEqual({ code: 0, stderr: '' });
    if (dialect === 'sqlite') expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'baton.db'))).toBe(true);
    else expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'baton.db'))).toBe(false);
  });

  it('user create / list / set-password, then the new password signs in through serve', async () => {
    const env = await freshEnv(dialect);
    const created = await run(['user', 'create', '--username', 'x', '--role', 'operator', '--password-stdin'], env, 'first password 123\n');
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/Created x \(usr_\w+, role operator\)/);
    expect(created.stdout).not.toContain('first password 123');

    const list = await run(['user', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^usr_\w+\tx\toperator$/m);

    const generated = await run(['user', 'create', '--username', 'gen', '--role', 'viewer'], env);
    expect(generated.code).toBe(0);
    const genPassword = /Password, shown this once: (\S+)/.exec(generated.stdout)?.[1];
    expect(genPassword).toBeDefined();

    const short = await run(['user', 'create', '--username', 'y', '--role', 'viewer', '--password-stdin'], env, 'short\n');
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/password: must be at least 12 characters/);
    const badRole = await run(['user', 'create', '--username', 'z', '--role', 'overlord', '--password-stdin'], env, 'long enough password\n');
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role');
    const badEmail = await run(['user', 'create', '--username', 'e', '--role', 'viewer', '--email', 'not-an-address', '--password-stdin'], env, 'long enough password\n');
    expect(badEmail.code).toBe(2);
    expect(badEmail.stderr).toContain('--email');
    const withEmail = await run(['user', 'create', '--username', 'm', '--role', 'viewer', '--email', 'm@example.org', '--password-stdin'], env, 'long enough password\n');
    expect(withEmail.code).toBe(0);
    const duplicate = await run(['user', 'create', '--username', 'x', '--role', 'viewer', '--password-stdin'], env, 'another password 1\n');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    expect(duplicate.stderr).not.toMatch(/\n\s+at /);
    const after = await run(['user', 'list'], env);
    expect(after.stdout).not.toMatch(/\ty\t|\tz\t|\te\t/);
    expect(after.stdout).toMatch(/\tm\tviewer$/m);
    expect(after.stdout.match(/\tx\t/g)).toHaveLength(1);

    const setPw = await run(['user', 'set-password', '--username', 'x', '--password-stdin'], env, 'second password 456\n');
    expect({ code: setPw.code, stderr: setPw.stderr }).toEqual({ code: 0, stderr: '' });
    expect(setPw.stdout).toContain('Password of x changed');
    const unknown = await run(['user', 'set-password', '--username', 'nobody', '--password-stdin'], env, 'second password 456\n');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nobody');
    const shortSet = await run(['user', 'set-password', '--username', 'x', '--password-stdin'], env, 'tiny\n');
    expect(shortSet.code).toBe(2);

    const exit = await withServer({ ...env, BATON_ADMIN_PASSWORD: ADMIN_PASSWORD }, async (s) => {
      expect((await login(s.base, 'x', 'first password 123')).status).toBe(401);
      expect((await login(s.base, 'x', 'second password 456')).status).toBe(200);
      expect((await login(s.base, 'gen', genPassword!)).status).toBe(200);
    });
    expect(exit.code).toBe(0);
  }, 180_000);

  it('serve with BATON_ADMIN_PASSWORD: ready, admin signs in, SIGTERM stops it with exit 0', async () => {
    const env = await freshEnv(dialect);
    const s = await serve({ ...env, BATON_ADMIN_PASSWORD: ADMIN_PASSWORD });
    let exit: Result | undefined;
    try {
      expect(s.output()).toContain('with the password from BATON_ADMIN_PASSWORD');
      expect(s.output()).not.toContain(ADMIN_PASSWORD);
      const admin = await login(s.base, 'admin', ADMIN_PASSWORD);
      expect(admin.status).toBe(200);
      const me = await fetch(`${s.base}/v1/auth/check`, { method: 'POST', headers: { Authorization: `Bearer ${admin.token}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { role: string }).role).toBe('admin');
      expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
    } finally {
      exit = await s.stop();
    }
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    const lines = exit.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { message: string });
    expect(lines.map((l) => l.message)).toEqual(expect.arrayContaining(['listening', 'shutting down', 'stopped']));
    expect(exit.stdout + exit.stderr).not.toContain(ADMIN_PASSWORD);
  }, 120_000);

  it('first start without BATON_ADMIN_PASSWORD prints a generated password once, and it signs in', async () => {
    const env = await freshEnv(dialect);
    let password: string | undefined;
    const first = await withServer(env, async (s) => {
      password = /Its password, shown this once: (\S+)/.exec(s.output())?.[1];
      expect(password).toBeDefined();
      expect((await login(s.base, 'admin', password!)).status).toBe(200);
      expect((await login(s.base, 'admin', `${password!}x`)).status).toBe(401);
    });
    expect(first.code).toBe(0);
    expect(first.stdout.split(password!).length - 1).toBe(1);
    const second = await withServer(env, async (s) => {
      expect((await login(s.base, 'admin', password!)).status).toBe(200);
    });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toMatch(/password/i);
    expect(second.stdout).not.toContain(password!);
  }, 180_000);

  it('key rotate re-seals the audit signing key under a new master key', async () => {
    const env: Record<string, string> = { ...(await freshEnv(dialect)), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const keyFile = path.join(env.BATON_DATA_DIR!, 'master.key');

    let keyId: string | undefined;
    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const exp = await getJson(s.base, '/v1/audit/export', token!);
      expect(exp.status).toBe(200);
      keyId = exp.body.key_id as string;
      expect(keyId).toMatch(/^[0-9a-f]{64}$/);
    });
    const oldKey = fs.readFileSync(keyFile, 'utf8');

    const rotated = await run(['key', 'rotate'], env);
    expect({ code: rotated.code, stderr: rotated.stderr }).toEqual({ code: 0, stderr: '' });
    expect(rotated.stdout).toMatch(/Re-encrypted 1 secret value\(s\) under master key [0-9a-f]{16}/);
    const newKey = fs.readFileSync(keyFile, 'utf8');
    expect(newKey).not.toBe(oldKey);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'master.key.next'))).toBe(false);

    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const exp = await getJson(s.base, '/v1/audit/export', token!);
      expect(exp.status).toBe(200);
      expect(exp.body.key_id).toBe(keyId);
      const verify = await getJson(s.base, '/v1/audit/verify', token!);
      expect(verify.status).toBe(200);
      expect(verify.body.ok).toBe(true);
      const log = await getJson<Array<{ actor: string }>>(s.base, '/v1/audit?action=master_key.rotate', token!);
      expect(log.body.map((e) => e.actor)).toEqual(['cli']);
    });

    // The old key no longer opens the secret: it is sealed under the new one, and serve refuses to start
    // with a key that cannot open what is stored (instead of failing later, at the first export).
    fs.writeFileSync(keyFile, oldKey, { mode: 0o600 });
    const refused = await run(['serve'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/master key cannot open stored secrets \(server_keys\.private_key_enc: .*does not hold/);
    fs.writeFileSync(keyFile, newKey, { mode: 0o600 });
  }, 240_000);

  it('key rotate finishes a rotation that stopped half-way, and refuses to seal under any other key meanwhile', async () => {
    const env: Record<string, string> = { ...(await freshEnv(dialect)), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const keyFile = path.join(env.BATON_DATA_DIR!, 'master.key');
    const nextFile = path.join(env.BATON_DATA_DIR!, 'master.key.next');
    let keyId: string | undefined;
    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      keyId = (await getJson<{ key_id: string }>(s.base, '/v1/audit/export', token!)).body.key_id;
    });
    expect(keyId).toMatch(/^[0-9a-f]{64}$/);
    const before = fs.readFileSync(keyFile, 'utf8');

    const garbage = await run(['key', 'rotate', '--new-key-stdin'], env, 'not a key\n');
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain('new key');
    expect(garbage.stderr).not.toMatch(/\n\s+at /);

    // A rotation that wrote its next key and stopped (say the machine went down).
    const pending = crypto.randomBytes(32);
    fs.writeFileSync(nextFile, `${pending.toString('base64')}\n`, { mode: 0o600 });
    const other = await run(['key', 'rotate', '--new-key-stdin'], env, `${crypto.randomBytes(32).toString('hex')}\n`);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('pending');
    expect(fs.readFileSync(keyFile, 'utf8')).toBe(before);
    expect(Buffer.from(fs.readFileSync(nextFile, 'utf8').trim(), 'base64').equals(pending)).toBe(true);

    const finish = await run(['key', 'rotate'], env);
    expect({ code: finish.code, stderr: finish.stderr }).toEqual({ code: 0, stderr: '' });
    expect(Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'base64').equals(pending)).toBe(true);
    expect(fs.existsSync(nextFile)).toBe(false);

    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const exp = await getJson(s.base, '/v1/audit/export', token!);
      expect(exp.status).toBe(200);
      expect(exp.body.key_id).toBe(keyId);
    });
  }, 240_000);

  it('key rotate refuses to start without an existing master key', async () => {
    const env = await freshEnv(dialect);
    const r = await run(['key', 'rotate'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BATON_MASTER_KEY');
    expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'master.key'))).toBe(false);
  });
});
