// BATON_DATABASE_POOL, BATON_DATABASE_CA_FILE and the BATON_REDIS_* variables as `baton serve` reads them: defaults,
// queue mode through Sentinel alone, and each bad value refused at start with the variable's name.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-conn-config-'));
const ca = path.join(dir, 'ca.pem');
fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const WORKER_KEY = 'cd'.repeat(32);
const load = (env: Record<string, string>) => loadConfig({ BATON_DATA_DIR: dir, ...env });

describe('connection settings of baton serve', () => {
  it('defaults: a pool of 10, no CA, embedded mode', () => {
    const config = load({});
    expect(config.databasePool).toBe(10);
    expect(config.databaseCaFile).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.executors).toBe(2);
  });

  it('is in queue mode with Sentinels alone, and wants the worker key then', () => {
    const env = { BATON_REDIS_SENTINELS: '127.0.0.1:26379', BATON_REDIS_SENTINEL_NAME: 'mymaster' };
    expect(() => load(env)).toThrow(/BATON_WORKER_KEY: must be set in queue mode/);
    const config = load({ ...env, BATON_WORKER_KEY: WORKER_KEY });
    expect(config.redisUrl).toMatch(/^redis:\/\/mymaster\?sentinels=/);
    expect(config.executors).toBe(0);
  });

  it('takes a CA file for PostgreSQL', () => {
    expect(load({ BATON_DATABASE_URL: 'postgres://u@db/baton', BATON_DATABASE_CA_FILE: ca }).databaseCaFile).toBe(ca);
  });

  it.each([
    [{ BATON_DATABASE_POOL: '0' }, 'BATON_DATABASE_POOL: must be a whole number from 1 to 1000'],
    [{ BATON_DATABASE_POOL: '1e3' }, 'BATON_DATABASE_POOL: must be a whole number'],
    [{ BATON_DATABASE_POOL: '1001' }, 'BATON_DATABASE_POOL: must be a whole number'],
    [{ BATON_DATABASE_CA_FILE: ca }, 'BATON_DATABASE_CA_FILE: is for PostgreSQL'],
    [
      { BATON_DATABASE_URL: 'postgres://u@db/baton', BATON_DATABASE_CA_FILE: path.join(dir, 'none.pem') },
      'BATON_DATABASE_CA_FILE: cannot read',
    ],
    [{ BATON_REDIS_SENTINELS: 'h:1', BATON_WORKER_KEY: WORKER_KEY }, 'BATON_REDIS_SENTINEL_NAME: must be set'],
    [{ BATON_REDIS_URL: 'redis://h', BATON_REDIS_CA_FILE: ca }, 'BATON_REDIS_CA_FILE: needs a rediss://'],
  ])('refuses %j', (env, message) => {
    expect(() => load(env)).toThrow(ConfigError);
    expect(() => load(env)).toThrow(message);
  });
});
