// The `baton worker` process itself, run from the sources with the workspace's TypeScript loader.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { RunEvent } from '@baton/contracts';
import { cleanupLeftoverRuns, sealBundle } from '@baton/executor';
import { inlineBundle, play } from '@baton/executor/testing';
import { createRedisRunQueue, EVENT_FIELD, runEventStreamKey } from '@baton/queue/redis';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const REGISTER = path.join(REPO_ROOT, 'scripts/ts/register.mjs');
const MAIN = path.join(REPO_ROOT, 'apps/worker/src/main.ts');
const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_HEX = crypto.randomBytes(32).toString('hex');

interface Worker {
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout: () => string;
  stderr: () => string;
  kill(signal: NodeJS.Signals): void;
}

/** Starts the worker with only the given BATON_* variables (nothing of this test process's). */
function startWorker(env: Record<string, string>, args: string[] = []): Worker {
  const child = spawn(process.execPath, ['--import', REGISTER, MAIN, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { exited, stdout: () => stdout, stderr: () => stderr, kill: (signal) => void child.kill(signal) };
}

async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 45_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('baton worker (process): configuration errors', () => {
  it('exits 2 naming BATON_REDIS_URL when it is missing', async () => {
    const worker = startWorker({ BATON_WORKER_KEY: KEY_HEX });
    expect((await worker.exited).code).toBe(2);
    expect(worker.stderr()).toMatch(/^baton worker: invalid configuration:\n {2}BATON_REDIS_URL: must be set/);
  });

  it('exits 2 naming BATON_WORKER_KEY when it is not a key, without printing it', async () => {
    const badKey = 'c0ffee'.repeat(5);
    const worker = startWorker({ BATON_REDIS_URL: REDIS_URL, BATON_WORKER_KEY: badKey });
    expect((await worker.exited).code).toBe(2);
    expect(worker.stderr()).toContain('BATON_WORKER_KEY: must be 32 bytes');
    expect(worker.stderr() + worker.stdout()).not.toContain(badKey);
  });

  it('exits 2 naming the flag on a bad --concurrency', async () => {
    const worker = startWorker({ BATON_REDIS_URL: REDIS_URL, BATON_WORKER_KEY: KEY_HEX }, ['--concurrency', '0']);
    expect((await worker.exited).code).toBe(2);
    expect(worker.stderr()).toContain('--concurrency: must be between 1 and 256');
  });

  it('prints its usage with --help and exits 0', async () => {
    const worker = startWorker({}, ['--help']);
    expect((await worker.exited).code).toBe(0);
    expect(worker.stdout()).toContain('Usage: baton worker');
  });
});

describe('baton worker (process) on real Redis', () => {
  const admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  let prefix: string;
  let workDir: string;
  let running: Worker | undefined;

  const envOf = (extra: Record<string, string> = {}) => ({
    BATON_REDIS_URL: REDIS_URL,
    BATON_WORKER_KEY: KEY_HEX,
    BATON_QUEUE_PREFIX: prefix,
    BATON_WORK_DIR: workDir,
    BATON_SANDBOX: 'off',
    ...extra,
  });
  const beatOf = async (name: string) => {
    const raw = await admin.hget(`${prefix}:workers`, name);
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
  };

  beforeEach(() => {
    prefix = `baton_t_${Date.now()}_${crypto.randomBytes(4).toString('hex')}`;
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-worker-main-'));
    running = undefined;
  });

  afterEach(async () => {
    if (running) {
      running.kill('SIGKILL');
      await running.exited;
    }
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await admin.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  afterAll(async () => {
    await admin.quit();
  });

  it('beats into the registry, and on SIGTERM stops with a last `stopped` beat and exit code 0', async () => {
    running = startWorker(envOf({ BATON_WORKER_LABELS: 'linux,gpu' }), ['--name', 'proc-w1', '--concurrency', '3']);
    await eventually(async () => (await beatOf('proc-w1')) !== undefined || running!.stderr() !== '', 'the first beat');
    expect(running.stderr()).toBe('');
    expect(await beatOf('proc-w1')).toMatchObject({
      name: 'proc-w1',
      labels: ['linux', 'gpu'],
      capacity: 3,
      running: [],
      host: os.hostname(),
    });
    // The start line may reach the pipe after the first beat reaches Redis: wait for it rather than race it.
    await eventually(() => running!.stdout().includes('"message":"worker started"'), 'the start log line');

    running.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(await beatOf('proc-w1')).toMatchObject({ stopped: true, running: [] });
    expect(running.stdout()).toContain('"message":"worker stopped"');
    expect(running.stdout()).not.toContain(KEY_HEX);
    running = undefined;
  });

  it('with BATON_RETENTION_DAYS, removes the requirements cache entries no run used for that long, keeps the rest', async () => {
    const cache = path.join(workDir, 'baton-requirements', 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    const entry = (name: string, daysAgo: number) => {
      const dir = path.join(cache, name);
      fs.mkdirSync(path.join(dir, 'collections'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'collections', 'x.txt'), 'installed');
      fs.writeFileSync(path.join(dir, '.complete'), '');
      const at = new Date(Date.now() - daysAgo * 86_400_000);
      fs.utimesSync(path.join(dir, '.complete'), at, at);
      return dir;
    };
    const stale = entry('a'.repeat(64), 10);
    const recent = entry('b'.repeat(64), 2);
    running = startWorker(envOf({ BATON_RETENTION_DAYS: '7' }), ['--name', 'proc-retention']);
    await eventually(() => running!.stdout().includes('retention: pruned the requirements cache'), 'the prune');
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(path.join(recent, 'collections', 'x.txt'))).toBe(true);
    expect(running.stdout()).toContain('"cache_entries":1');
    running.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    running = undefined;
  });

  it('runs a sealed job from the Redis queue and streams its events, gap-free from seq 1 to a finished status', async () => {
    running = startWorker(envOf(), ['--name', 'proc-run']);
    await eventually(
      async () => (await beatOf('proc-run')) !== undefined || running!.stderr() !== '',
      'the first beat',
    );
    const queue = createRedisRunQueue({ redisUrl: REDIS_URL, prefix });
    const events = async (): Promise<RunEvent[]> =>
      (await admin.xrange(runEventStreamKey(prefix), '-', '+')).map(
        ([, fields]) => JSON.parse(fields[fields.indexOf(EVENT_FIELD) + 1]!) as RunEvent,
      );
    try {
      const bundle = inlineBundle(play('    - debug: msg=from-the-worker\n'), { run_id: 'run_proc' });
      await queue.enqueue({ runId: 'run_proc', bundle: sealBundle(bundle, Buffer.from(KEY_HEX, 'hex')) });
      await eventually(
        async () => (await events()).some((e) => e.kind === 'status' && e.data.status === 'finished'),
        'the run to finish',
      );
    } finally {
      await queue.close();
    }
    const stream = await events();
    expect(stream.map((e) => e.seq)).toEqual(stream.map((_, i) => i + 1));
    expect(stream[0]).toMatchObject({
      run_id: 'run_proc',
      kind: 'status',
      data: { status: 'running', worker: 'proc-run' },
    });
    expect(stream.at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
    expect(running.stdout()).toContain('"message":"ansible-playbook started"');
    running.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
    running = undefined;
  });

  it('exits 1 at once on a second signal, leaving a run that was still in its grace period', async () => {
    running = startWorker(envOf({ BATON_RUN_GRACE_SECONDS: '3600' }), ['--name', 'proc-twice']);
    await eventually(
      async () => (await beatOf('proc-twice')) !== undefined || running!.stderr() !== '',
      'the first beat',
    );
    const queue = createRedisRunQueue({ redisUrl: REDIS_URL, prefix });
    try {
      const bundle = inlineBundle(play('    - command: sleep 30\n'), { run_id: 'run_twice' });
      await queue.enqueue({ runId: 'run_twice', bundle: sealBundle(bundle, Buffer.from(KEY_HEX, 'hex')) });
      await eventually(() => running!.stdout().includes('"message":"ansible-playbook started"'), 'ansible to start');
    } finally {
      await queue.close();
    }
    running.kill('SIGTERM');
    await eventually(
      () => running!.stdout().includes('"message":"stopping: no new runs'),
      'the graceful stop to begin',
    );
    running.kill('SIGINT');
    expect((await running.exited).code).toBe(1);
    expect(running.stdout()).toContain('"message":"second signal: canceling the runs and exiting now"');
    running = undefined;
    // What the next start would clear: the run directory and anything ansible left.
    await cleanupLeftoverRuns(workDir);
  });

  it('refuses a name that a live worker of another process beats under, and exits 2', async () => {
    const alive = {
      name: 'taken',
      host: 'elsewhere',
      pid: 1,
      labels: [],
      capacity: 1,
      running: [],
      last_heartbeat: new Date().toISOString(),
      lease_expires_at: null,
      started_at: new Date().toISOString(),
    };
    await admin.hset(`${prefix}:workers`, 'taken', JSON.stringify(alive));
    const worker = startWorker(envOf(), ['--name', 'taken']);
    expect((await worker.exited).code).toBe(2);
    expect(worker.stderr()).toMatch(/a worker named "taken" .* give this one another name with --name/);

    // A stopped worker's name is free at once.
    await admin.hset(`${prefix}:workers`, 'taken', JSON.stringify({ ...alive, stopped: true }));
    running = startWorker(envOf(), ['--name', 'taken']);
    await eventually(
      async () => (await beatOf('taken'))?.pid !== 1 || running!.stderr() !== '',
      'the new worker to beat',
    );
    expect(running.stderr()).toBe('');
    running.kill('SIGINT');
    expect((await running.exited).code).toBe(0);
    running = undefined;
  });
});
