import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Keyring, masterKeyFrom } from '@baton/core';
import { ConfigError, loadConfig } from './config.js';
import { loadKeyring, MASTER_KEY_FILE, NEXT_MASTER_KEY_FILE } from './master-key.js';

/** The ConfigError thrown by fn (fails the test when fn does not throw one). */
function configError(fn: () => unknown): ConfigError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return caught as ConfigError;
}

const WORKER_KEY = 'a'.repeat(64);

describe('loadConfig', () => {
  it('has sensible defaults: 127.0.0.1:8080, SQLite in ./data', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.databaseUrl).toBe(`sqlite:${path.join(path.resolve('./data'), 'baton.db')}`);
    expect(c.redisUrl).toBeUndefined();
    expect(c.masterKey).toBeUndefined();
    expect(c.adminPassword).toBeUndefined();
    expect(c.bodyLimitBytes).toBe(1024 * 1024);
    expect(c.trustProxy).toBe(false);
    expect(c.logLevel).toBe('info');
    expect(c.tokenTtlSeconds).toBe(12 * 3600);
    expect(c.shutdownGraceSeconds).toBe(10);
    expect(c.executors).toBe(2);
    expect(c.workDir).toBe(path.resolve(os.tmpdir()));
    expect(c.sandbox).toBe('auto');
    expect(c.runPriority).toBe('idle');
    expect(c.runGraceSeconds).toBe(60);
    expect(c.publicUrl).toBe('http://127.0.0.1:8080');
  });

  it('takes BATON_PUBLIC_URL without its trailing slash, else builds it from host and port', () => {
    expect(loadConfig({ BATON_PUBLIC_URL: 'https://baton.example.com/' }).publicUrl).toBe('https://baton.example.com');
    expect(loadConfig({ BATON_PUBLIC_URL: 'https://example.com/baton//' }).publicUrl).toBe('https://example.com/baton');
    expect(loadConfig({ BATON_HOST: '0.0.0.0', BATON_PORT: '9000' }).publicUrl).toBe('http://0.0.0.0:9000');
    expect(loadConfig({ BATON_HOST: '::1' }).publicUrl).toBe('http://[::1]:8080');
    for (const bad of [
      'ftp://baton.example.com',
      'baton.example.com',
      'https://x.example/?a=1',
      'https://x.example/#f',
    ])
      expect(configError(() => loadConfig({ BATON_PUBLIC_URL: bad })).message).toContain('BATON_PUBLIC_URL');
  });

  it('puts the SQLite database in the data directory, made absolute', () => {
    const c = loadConfig({ BATON_DATA_DIR: 'some/rel/dir' });
    expect(c.dataDir).toBe(path.resolve('some/rel/dir'));
    expect(c.databaseUrl).toBe(`sqlite:${path.resolve('some/rel/dir', 'baton.db')}`);
  });

  it('reads every variable it documents', () => {
    const c = loadConfig({
      BATON_PORT: '9090',
      BATON_HOST: '0.0.0.0',
      BATON_DATABASE_URL: 'postgres://u@h:5432/db',
      BATON_REDIS_URL: 'redis://r:6379',
      BATON_ADMIN_PASSWORD: 'twelve chars!',
      BATON_TOKEN_TTL_SECONDS: '60',
      BATON_BODY_LIMIT_BYTES: '2048',
      BATON_LOG_LEVEL: 'debug',
      BATON_TRUST_PROXY: 'true',
      BATON_SHUTDOWN_GRACE_SECONDS: '3',
      BATON_UI_DIR: '/srv/ui',
      BATON_EXECUTORS: '0',
      BATON_WORK_DIR: '/srv/runs',
      BATON_SANDBOX: 'off',
      BATON_RUN_PRIORITY: 'low',
      BATON_RUN_PRELOAD: 'false',
      BATON_RUN_GRACE_SECONDS: '5',
      BATON_EXECUTOR_IDLE_SECONDS: '0',
      BATON_WORKER_KEY: WORKER_KEY,
      BATON_QUEUE_PREFIX: 'baton-eu.1',
    });
    expect(c).toMatchObject({
      workerKey: WORKER_KEY,
      queuePrefix: 'baton-eu.1',
      port: 9090,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@h:5432/db',
      redisUrl: 'redis://r:6379',
      adminPassword: 'twelve chars!',
      tokenTtlSeconds: 60,
      bodyLimitBytes: 2048,
      logLevel: 'debug',
      trustProxy: true,
      shutdownGraceSeconds: 3,
      uiDir: '/srv/ui',
      executors: 0,
      workDir: '/srv/runs',
      sandbox: 'off',
      runPriority: 'low',
      runPreload: false,
      runGraceSeconds: 5,
      executorIdleSeconds: 0,
    });
  });

  it('runs ansible-playbook in a Python loaded ahead unless BATON_RUN_PRELOAD is false', () => {
    expect(loadConfig({}).runPreload).toBe(true);
    expect(loadConfig({ BATON_RUN_PRELOAD: 'true' }).runPreload).toBe(true);
    for (const bad of ['yes', '0', 'False'])
      expect(configError(() => loadConfig({ BATON_RUN_PRELOAD: bad })).message).toMatch(/BATON_RUN_PRELOAD/);
  });

  it('lets the executor process go after 60 s without runs unless BATON_EXECUTOR_IDLE_SECONDS says', () => {
    expect(loadConfig({}).executorIdleSeconds).toBe(60);
    expect(loadConfig({ BATON_EXECUTOR_IDLE_SECONDS: '86400' }).executorIdleSeconds).toBe(86_400);
    for (const bad of ['-1', '86401', '1.5', 'soon'])
      expect(configError(() => loadConfig({ BATON_EXECUTOR_IDLE_SECONDS: bad })).message).toMatch(
        /BATON_EXECUTOR_IDLE_SECONDS/,
      );
  });

  it('runs 2 executors in embedded mode and none in queue mode unless BATON_EXECUTORS says', () => {
    expect(loadConfig({}).executors).toBe(2);
    expect(loadConfig({}).queuePrefix).toBe('baton');
    expect(loadConfig({ BATON_REDIS_URL: 'redis://r', BATON_WORKER_KEY: WORKER_KEY }).executors).toBe(0);
    expect(
      loadConfig({ BATON_REDIS_URL: 'redis://r', BATON_WORKER_KEY: WORKER_KEY, BATON_EXECUTORS: '3' }).executors,
    ).toBe(3);
  });

  it('needs a 32-byte BATON_WORKER_KEY in queue mode, without echoing it', () => {
    expect(configError(() => loadConfig({ BATON_REDIS_URL: 'redis://r' })).message).toMatch(
      /BATON_WORKER_KEY: must be set in queue mode/,
    );
    const err = configError(() => loadConfig({ BATON_REDIS_URL: 'redis://r', BATON_WORKER_KEY: 'abcdef-short' }));
    expect(err.message).toMatch(/BATON_WORKER_KEY: must be 32 bytes/);
    expect(err.message).not.toContain('abcdef-short');
  });

  describe('keys from files (BATON_MASTER_KEY_FILE, BATON_WORKER_KEY_FILE)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-keyfile-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    const keyFile = (name: string, text: string, mode = 0o600) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text, { mode });
      fs.chmodSync(file, mode);
      return file;
    };

    it('reads each key once from its file, the final newline dropped, as if it were set inline', () => {
      const master = crypto.randomBytes(32).toString('hex');
      const c = loadConfig({
        BATON_MASTER_KEY_FILE: keyFile('master', `${master}\n`),
        BATON_REDIS_URL: 'redis://r',
        BATON_WORKER_KEY_FILE: keyFile('worker', WORKER_KEY),
      });
      expect(c.masterKey).toBe(master);
      expect(c.workerKey).toBe(WORKER_KEY);
    });

    it('refuses a file others may read, one that is missing or empty, and both forms at once, never echoing the key', () => {
      const secret = crypto.randomBytes(32).toString('hex');
      const open = configError(() => loadConfig({ BATON_MASTER_KEY_FILE: keyFile('open', secret, 0o644) }));
      expect(open.message).toMatch(/BATON_MASTER_KEY_FILE: .*mode 0644\): chmod 600 it/);
      expect(open.message).not.toContain(secret);
      expect(configError(() => loadConfig({ BATON_MASTER_KEY_FILE: path.join(dir, 'none') })).message).toMatch(
        /BATON_MASTER_KEY_FILE: cannot read .*ENOENT/,
      );
      expect(configError(() => loadConfig({ BATON_MASTER_KEY_FILE: keyFile('empty', '\n') })).message).toMatch(
        /BATON_MASTER_KEY_FILE: .* is empty/,
      );
      expect(configError(() => loadConfig({ BATON_MASTER_KEY_FILE: dir })).message).toMatch(/not a regular file/);
      const both = configError(() =>
        loadConfig({ BATON_WORKER_KEY: WORKER_KEY, BATON_WORKER_KEY_FILE: keyFile('w2', WORKER_KEY) }),
      );
      expect(both.message).toMatch(/BATON_WORKER_KEY_FILE: give either BATON_WORKER_KEY or BATON_WORKER_KEY_FILE/);
      // A key from a file is checked like an inline one.
      const short = configError(() =>
        loadConfig({ BATON_REDIS_URL: 'redis://r', BATON_WORKER_KEY_FILE: keyFile('short', 'abcdef-short') }),
      );
      expect(short.message).toMatch(/BATON_WORKER_KEY: must be 32 bytes/);
      expect(short.message).not.toContain('abcdef-short');
    });
  });

  it.each(['a b', 'x'.repeat(65), 'pre:fix'])('rejects BATON_QUEUE_PREFIX=%j naming the variable', (value) => {
    expect(configError(() => loadConfig({ BATON_QUEUE_PREFIX: value })).message).toContain('BATON_QUEUE_PREFIX');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ BATON_PORT: '', BATON_DATABASE_URL: '' }).port).toBe(8080);
  });

  it.each(['abc', '70000', '-1', '80.5', '8080x', ' ', '0x1F90', '1e3'])(
    'rejects BATON_PORT=%j naming the variable',
    (value) => {
      const err = configError(() => loadConfig({ BATON_PORT: value }));
      expect(err.message).toContain('BATON_PORT');
    },
  );

  it.each([
    ['BATON_EXECUTORS', '-1'],
    ['BATON_EXECUTORS', '257'],
    ['BATON_EXECUTORS', 'two'],
    ['BATON_SANDBOX', 'docker'],
    ['BATON_RUN_PRIORITY', 'high'],
    ['BATON_RUN_PRIORITY', 'IDLE'],
    ['BATON_RUN_GRACE_SECONDS', '0'],
    ['BATON_RUN_GRACE_SECONDS', '86401'],
    ['BATON_SHUTDOWN_GRACE_SECONDS', '3000000'],
  ])('rejects %s=%j naming the variable', (name, value) => {
    expect(configError(() => loadConfig({ [name]: value })).message).toContain(name);
  });

  it.each(['mysql://u@h/db', 'baton.db', 'http://x', 'postgres:/nohost', 'sqlite:', 'sqlite://'])(
    'rejects BATON_DATABASE_URL=%j naming the variable',
    (value) => {
      const err = configError(() => loadConfig({ BATON_DATABASE_URL: value }));
      expect(err.message).toContain('BATON_DATABASE_URL');
    },
  );

  it.each([
    'sqlite:/var/lib/baton/baton.db',
    'sqlite:rel/baton.db',
    'postgres://u@h/db',
    'postgresql://u:p@h:5433/db?sslmode=require',
  ])('accepts BATON_DATABASE_URL=%j as given', (value) => {
    expect(loadConfig({ BATON_DATABASE_URL: value }).databaseUrl).toBe(value);
  });

  it('rejects a short BATON_ADMIN_PASSWORD naming the variable, without echoing the password', () => {
    const err = configError(() => loadConfig({ BATON_ADMIN_PASSWORD: 'short-pw' }));
    expect(err.message).toContain('BATON_ADMIN_PASSWORD');
    expect(err.message).not.toContain('short-pw');
  });

  it('names every bad variable at once', () => {
    const err = configError(() =>
      loadConfig({ BATON_PORT: 'x', BATON_LOG_LEVEL: 'loud', BATON_REDIS_URL: 'http://r', BATON_TRUST_PROXY: 'yes' }),
    );
    for (const v of ['BATON_PORT', 'BATON_LOG_LEVEL', 'BATON_REDIS_URL', 'BATON_TRUST_PROXY'])
      expect(err.message).toContain(v);
  });

  it.each([
    ['BATON_BODY_LIMIT_BYTES', '0'],
    ['BATON_BODY_LIMIT_BYTES', '1kb'],
    ['BATON_TOKEN_TTL_SECONDS', '-5'],
    ['BATON_TOKEN_TTL_SECONDS', ' '],
    ['BATON_SHUTDOWN_GRACE_SECONDS', '0x10'],
  ])('rejects %s=%j', (name, value) => {
    expect(configError(() => loadConfig({ [name]: value })).message).toContain(name);
  });

  it('ignores variables that are not Baton’s', () => {
    expect(loadConfig({ PORT: 'nonsense', HOME: '/x' }).port).toBe(8080);
  });
});

describe('loadKeyring', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-key-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates <data>/master.key with mode 0600 on first use and reuses it afterwards', () => {
    const data = path.join(dir, 'data');
    const first = loadKeyring({ dataDir: data, create: true });
    const file = path.join(data, MASTER_KEY_FILE);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const content = fs.readFileSync(file, 'utf8');
    const second = loadKeyring({ dataDir: data, create: true });
    expect(second.current.kid).toBe(first.current.kid);
    expect(fs.readFileSync(file, 'utf8')).toBe(content);
    // A value sealed by the first start opens after a restart.
    expect(second.decrypt(first.encrypt('secret')).toString()).toBe('secret');
    // No temporary files are left behind.
    expect(fs.readdirSync(data)).toEqual([MASTER_KEY_FILE]);
  });

  it('refuses to invent a key when asked not to create one', () => {
    const err = configError(() => loadKeyring({ dataDir: dir, create: false }));
    expect(err.message).toContain('BATON_MASTER_KEY');
    expect(fs.existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
  });

  it('rejects a corrupt master.key file naming the file', () => {
    fs.writeFileSync(path.join(dir, MASTER_KEY_FILE), 'not a key\n', { mode: 0o600 });
    expect(configError(() => loadKeyring({ dataDir: dir, create: true })).message).toContain(MASTER_KEY_FILE);
  });

  it('also holds a pending master.key.next (a rotation that stopped half-way)', () => {
    const current = loadKeyring({ dataDir: dir, create: true });
    const next = masterKeyFrom(crypto.randomBytes(32));
    fs.writeFileSync(path.join(dir, NEXT_MASTER_KEY_FILE), next.key.toString('base64'));
    const ring = loadKeyring({ dataDir: dir, create: true });
    expect(ring.current.kid).toBe(current.current.kid);
    expect(ring.decrypt(new Keyring(next).encrypt('under next')).toString()).toBe('under next');
  });

  it.each([
    'nope',
    'abcd',
    'zz'.repeat(32),
    crypto.randomBytes(16).toString('hex'),
    crypto.randomBytes(31).toString('base64'),
  ])('rejects a malformed BATON_MASTER_KEY (%j) naming the variable, without echoing it', (value) => {
    const err = configError(() => loadKeyring({ masterKey: value, dataDir: dir, create: true }));
    expect(err.message).toContain('BATON_MASTER_KEY');
    expect(err.message).not.toContain(value);
    expect(fs.existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
  });

  it('accepts 64 hex digits and base64 of the same 32 bytes alike, and writes no file', () => {
    const bytes = crypto.randomBytes(32);
    const hex = loadKeyring({ masterKey: bytes.toString('hex'), dataDir: dir, create: true });
    const b64 = loadKeyring({ masterKey: bytes.toString('base64'), dataDir: dir, create: true });
    const b64url = loadKeyring({ masterKey: bytes.toString('base64url'), dataDir: dir, create: true });
    expect(hex.current.key.equals(bytes)).toBe(true);
    expect(b64.current.kid).toBe(hex.current.kid);
    expect(b64url.current.kid).toBe(hex.current.kid);
    expect(b64.decrypt(hex.encrypt('same key')).toString()).toBe('same key');
    expect(fs.existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
  });

  it('accepts comma-separated older keys: the first seals, all open', () => {
    const newer = crypto.randomBytes(32);
    const older = crypto.randomBytes(32);
    const oldRing = new Keyring(masterKeyFrom(older));
    const sealedOld = oldRing.encrypt('sealed under the old key');
    const ring = loadKeyring({
      masterKey: `${newer.toString('hex')}, ${older.toString('base64')}`,
      dataDir: dir,
      create: true,
    });
    expect(ring.current.key.equals(newer)).toBe(true);
    expect(ring.keys().map((k) => k.kid)).toEqual([masterKeyFrom(newer).kid, masterKeyFrom(older).kid]);
    expect(ring.decrypt(sealedOld).toString()).toBe('sealed under the old key');
    expect(ring.encrypt('x').split('.')[1]).toBe(masterKeyFrom(newer).kid);
  });

  it('names which of several keys is malformed', () => {
    const good = crypto.randomBytes(32).toString('hex');
    const err = configError(() => loadKeyring({ masterKey: `${good},bad`, dataDir: dir, create: true }));
    expect(err.message).toContain('BATON_MASTER_KEY (key 2)');
    expect(err.message).not.toContain(good);
  });
});
