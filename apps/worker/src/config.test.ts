import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { HELP, loadWorkerConfig, type WorkerConfig, WorkerConfigError } from './config.js';

const KEY_HEX = 'ab'.repeat(32);
const KEY = Buffer.from(KEY_HEX, 'hex');

const baseEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  BATON_REDIS_URL: 'redis://127.0.0.1:6379',
  BATON_WORKER_KEY: KEY_HEX,
  ...extra,
});

function configOf(argv: string[], env: NodeJS.ProcessEnv): WorkerConfig {
  const command = loadWorkerConfig(argv, env);
  if (command.kind !== 'run') throw new Error('expected a run command');
  return command.config;
}

function problemOf(argv: string[], env: NodeJS.ProcessEnv): string {
  try {
    loadWorkerConfig(argv, env);
  } catch (err) {
    expect(err).toBeInstanceOf(WorkerConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a WorkerConfigError');
}

describe('loadWorkerConfig', () => {
  it('gives the documented defaults', () => {
    expect(configOf([], baseEnv())).toEqual({
      redisUrl: 'redis://127.0.0.1:6379',
      workerKey: KEY,
      prefix: 'baton',
      concurrency: 2,
      labels: [],
      name: os.hostname(),
      workDir: path.resolve(os.tmpdir()),
      sandbox: 'auto',
      runPriority: 'idle',
      runPreload: true,
      fetchDenyPrivate: false,
      runGraceSeconds: 60,
      runOutputLimitBytes: 100 * 1024 * 1024,
      bufferMb: 64,
      retentionDays: undefined,
      logLevel: 'info',
    });
  });

  it('reads every variable', () => {
    const config = configOf(
      [],
      baseEnv({
        BATON_REDIS_URL: 'rediss://user:pw@redis.example:6380/2',
        BATON_WORKER_KEY: KEY.toString('base64'),
        BATON_QUEUE_PREFIX: 'baton_t.1-x',
        BATON_WORKER_CONCURRENCY: ' 16 ',
        BATON_WORKER_LABELS: 'linux, gpu,linux,dc:eu-1,',
        BATON_WORKER_NAME: 'worker one',
        BATON_WORK_DIR: 'relative/work',
        BATON_SANDBOX: 'off',
        BATON_RUN_PRIORITY: 'normal',
        BATON_RUN_PRELOAD: 'false',
        BATON_FETCH_DENY_PRIVATE: 'true',
        BATON_RUN_GRACE_SECONDS: '5',
        BATON_RUN_OUTPUT_LIMIT_MB: '7',
        BATON_WORKER_BUFFER_MB: '8',
        BATON_RETENTION_DAYS: '30',
        BATON_LOG_LEVEL: 'debug',
      }),
    );
    expect(config).toEqual({
      redisUrl: 'rediss://user:pw@redis.example:6380/2',
      workerKey: KEY,
      prefix: 'baton_t.1-x',
      concurrency: 16,
      labels: ['linux', 'gpu', 'dc:eu-1'],
      name: 'worker one',
      workDir: path.resolve('relative/work'),
      sandbox: 'off',
      runPriority: 'normal',
      runPreload: false,
      fetchDenyPrivate: true,
      runGraceSeconds: 5,
      runOutputLimitBytes: 7 * 1024 * 1024,
      bufferMb: 8,
      retentionDays: 30,
      logLevel: 'debug',
    });
  });

  it('reads BATON_WORKER_KEY_FILE (mode 0600 or stricter) instead of the variable, and refuses one others may read', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-worker-keyfile-'));
    try {
      const file = path.join(dir, 'worker.key');
      fs.writeFileSync(file, `${KEY.toString('base64')}\n`, { mode: 0o600 });
      const env: NodeJS.ProcessEnv = { BATON_REDIS_URL: 'redis://127.0.0.1:6379', BATON_WORKER_KEY_FILE: file };
      expect(configOf([], env).workerKey).toEqual(KEY);
      fs.chmodSync(file, 0o640);
      expect(problemOf([], { BATON_REDIS_URL: 'redis://127.0.0.1:6379', BATON_WORKER_KEY_FILE: file })).toMatch(
        /BATON_WORKER_KEY_FILE: .*mode 0640\): chmod 600 it/,
      );
      expect(problemOf([], baseEnv({ BATON_WORKER_KEY_FILE: file }))).toMatch(/give either BATON_WORKER_KEY or/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets flags win over the environment', () => {
    const config = configOf(
      ['--concurrency', '7', '--labels', 'a,b', '--name', 'from-flag'],
      baseEnv({ BATON_WORKER_CONCURRENCY: '3', BATON_WORKER_LABELS: 'c', BATON_WORKER_NAME: 'from-env' }),
    );
    expect(config).toMatchObject({ concurrency: 7, labels: ['a', 'b'], name: 'from-flag' });
    expect(configOf(['--labels='], baseEnv({ BATON_WORKER_LABELS: 'c' })).labels).toEqual([]);
  });

  it('treats an empty variable as unset, as `baton serve` does', () => {
    expect(
      configOf([], baseEnv({ BATON_QUEUE_PREFIX: '', BATON_WORKER_CONCURRENCY: '', BATON_LOG_LEVEL: '' })),
    ).toMatchObject({ prefix: 'baton', concurrency: 2, logLevel: 'info' });
  });

  it('removes BATON_WORKER_KEY from the environment it read, valid or not, even when it fails or prints help', () => {
    const env = baseEnv();
    configOf([], env);
    expect(env).not.toHaveProperty('BATON_WORKER_KEY');

    const bad = baseEnv({ BATON_WORKER_KEY: 'short' });
    problemOf([], bad);
    expect(bad).not.toHaveProperty('BATON_WORKER_KEY');

    const help = baseEnv();
    expect(loadWorkerConfig(['--help'], help)).toEqual({ kind: 'help', text: HELP });
    expect(help).not.toHaveProperty('BATON_WORKER_KEY');
  });

  it('removes the key from process.env itself by default', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, baseEnv());
      expect(loadWorkerConfig([]).kind).toBe('run');
      expect(process.env.BATON_WORKER_KEY).toBeUndefined();
    } finally {
      for (const name of ['BATON_REDIS_URL', 'BATON_WORKER_KEY']) delete process.env[name];
      Object.assign(process.env, saved);
      if (saved.BATON_WORKER_KEY === undefined) delete process.env.BATON_WORKER_KEY;
    }
  });

  it.each([
    ['BATON_REDIS_URL', undefined, /BATON_REDIS_URL: must be set/],
    ['BATON_REDIS_URL', 'http://127.0.0.1:6379', /BATON_REDIS_URL: must start with redis:\/\/ or rediss:\/\//],
    ['BATON_REDIS_URL', 'redis://', /BATON_REDIS_URL/],
    ['BATON_WORKER_KEY', undefined, /BATON_WORKER_KEY: must be set/],
    ['BATON_WORKER_KEY', 'ab'.repeat(31), /BATON_WORKER_KEY: must be 32 bytes/],
    ['BATON_WORKER_KEY', 'not a key at all', /BATON_WORKER_KEY: must be 32 bytes/],
    ['BATON_QUEUE_PREFIX', 'has space', /BATON_QUEUE_PREFIX/],
    ['BATON_QUEUE_PREFIX', 'a:b', /BATON_QUEUE_PREFIX/],
    ['BATON_QUEUE_PREFIX', 'x'.repeat(65), /BATON_QUEUE_PREFIX/],
    ['BATON_WORKER_CONCURRENCY', '0', /BATON_WORKER_CONCURRENCY: must be between 1 and 256/],
    ['BATON_WORKER_CONCURRENCY', '257', /BATON_WORKER_CONCURRENCY: must be between 1 and 256/],
    ['BATON_WORKER_CONCURRENCY', '0x10', /BATON_WORKER_CONCURRENCY: must be a whole number/],
    ['BATON_WORKER_CONCURRENCY', '2.5', /BATON_WORKER_CONCURRENCY: must be a whole number/],
    ['BATON_WORKER_CONCURRENCY', '-1', /BATON_WORKER_CONCURRENCY: must be a whole number/],
    ['BATON_WORKER_LABELS', 'ok,-bad', /BATON_WORKER_LABELS: "-bad" is not a label/],
    ['BATON_WORKER_LABELS', 'with space', /BATON_WORKER_LABELS/],
    ['BATON_WORKER_LABELS', 'x'.repeat(65), /BATON_WORKER_LABELS/],
    ['BATON_WORKER_NAME', 'tab\there', /BATON_WORKER_NAME: must be 1 to 200 printable characters/],
    ['BATON_WORKER_NAME', 'n'.repeat(201), /BATON_WORKER_NAME/],
    ['BATON_SANDBOX', 'on', /BATON_SANDBOX: must be one of auto, bwrap, off/],
    ['BATON_RUN_PRIORITY', 'nice', /BATON_RUN_PRIORITY: must be one of idle, low, normal/],
    ['BATON_FETCH_DENY_PRIVATE', 'yes', /BATON_FETCH_DENY_PRIVATE: must be true or false/],
    ['BATON_RUN_PRELOAD', 'no', /BATON_RUN_PRELOAD: must be true or false/],
    ['BATON_RUN_GRACE_SECONDS', '0', /BATON_RUN_GRACE_SECONDS: must be between 1 and 86400/],
    ['BATON_RUN_GRACE_SECONDS', 'soon', /BATON_RUN_GRACE_SECONDS: must be a whole number/],
    ['BATON_RUN_OUTPUT_LIMIT_MB', '0', /BATON_RUN_OUTPUT_LIMIT_MB: must be between 1 and 2047/],
    ['BATON_RUN_OUTPUT_LIMIT_MB', '2048', /BATON_RUN_OUTPUT_LIMIT_MB: must be between 1 and 2047/],
    ['BATON_RUN_OUTPUT_LIMIT_MB', '1.5', /BATON_RUN_OUTPUT_LIMIT_MB: must be a whole number/],
    ['BATON_WORKER_BUFFER_MB', '0', /BATON_WORKER_BUFFER_MB: must be between 1 and 65536/],
    ['BATON_WORKER_BUFFER_MB', '1.5', /BATON_WORKER_BUFFER_MB: must be a whole number/],
    ['BATON_RETENTION_DAYS', '0', /BATON_RETENTION_DAYS: must be between 1 and 36500/],
    ['BATON_RETENTION_DAYS', '7d', /BATON_RETENTION_DAYS: must be a whole number/],
    ['BATON_LOG_LEVEL', 'verbose', /BATON_LOG_LEVEL: must be one of error, warn, info, debug/],
  ])('names %s when it is %p', (name, value, message) => {
    const env = baseEnv();
    if (value === undefined) delete env[name];
    else env[name] = value;
    expect(problemOf([], env)).toMatch(message);
  });

  it.each([
    [['--concurrency', '300'], /--concurrency: must be between 1 and 256/],
    [['--concurrency', 'many'], /--concurrency: must be a whole number/],
    [['--labels', 'good,b@d'], /--labels: "b@d" is not a label/],
    [['--name', ''], /--name: must be 1 to 200 printable characters/],
    [['--name', 'line\nbreak'], /--name/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['stray'], /stray/],
  ])('names the flag in %p', (argv, message) => {
    expect(problemOf(argv, baseEnv())).toMatch(message);
  });

  it('reports every bad value at once', () => {
    const message = problemOf([], { BATON_QUEUE_PREFIX: '!', BATON_LOG_LEVEL: 'loud' });
    for (const name of ['BATON_REDIS_URL', 'BATON_WORKER_KEY', 'BATON_QUEUE_PREFIX', 'BATON_LOG_LEVEL'])
      expect(message).toContain(name);
  });

  it('never puts the key in an error message', () => {
    const secret = 'zz'.repeat(40);
    expect(problemOf([], baseEnv({ BATON_WORKER_KEY: secret }))).not.toContain(secret);
  });
});
