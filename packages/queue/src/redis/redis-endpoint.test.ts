// The one Redis connection string (redis-endpoint.ts): what BATON_REDIS_* become, what ioredis then gets, and every
// bad value refused with the variable's name. Real TLS and Sentinel connections: test/redis-sentinel-tls.test.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { redisConnectionString, redisOptionsFor, RedisSettingsError } from './redis-endpoint.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-redis-endpoint-'));
const ca = path.join(dir, 'ca.pem');
fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
const notPem = path.join(dir, 'not.pem');
fs.writeFileSync(notPem, 'hello');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('redisConnectionString', () => {
  it('is undefined without Redis (embedded mode) and a plain URL as written', () => {
    expect(redisConnectionString({})).toBeUndefined();
    expect(redisConnectionString({ url: 'redis://:pw@10.0.0.1:6380/2' })).toBe('redis://:pw@10.0.0.1:6380/2');
  });

  it('carries the Sentinels, the master name and the CA file, and ioredis gets them as options', () => {
    const text = redisConnectionString({
      url: 'rediss://:s%40cret@ignored:6379/3',
      sentinels: '10.0.0.1:26379, [fd00::2]:26380',
      sentinelName: 'mymaster',
      caFile: ca,
    })!;
    const { url, options } = redisOptionsFor(text);
    expect(url).toBe('rediss://:s%40cret@mymaster/3');
    expect(options.sentinels).toEqual([
      { host: '10.0.0.1', port: 26379 },
      { host: 'fd00::2', port: 26380 },
    ]);
    expect(options.name).toBe('mymaster');
    expect(options.enableTLSForSentinelMode).toBe(true);
    expect((options.tls as { ca: Buffer }).ca.toString()).toContain('BEGIN CERTIFICATE');
    expect(options.sentinelTLS).toBe(options.tls);
    expect(options.failoverDetector).toBe(true);
    expect((options.reconnectOnError as (e: Error) => unknown)(new Error('READONLY You can’t write'))).toBe(2);
    expect((options.reconnectOnError as (e: Error) => unknown)(new Error('ERR other'))).toBe(false);
  });

  it('needs no URL with Sentinels, and gives a plain rediss:// URL TLS without a CA (the system CAs)', () => {
    const { url, options } = redisOptionsFor(redisConnectionString({ sentinels: 'h:1', sentinelName: 'm' })!);
    expect(url).toBe('redis://m');
    expect(options.tls).toBeUndefined();
    expect(redisOptionsFor('rediss://h:6380').options).toEqual({ tls: {} });
  });

  it.each([
    [{ url: 'http://h' }, /^BATON_REDIS_URL: must start with redis:\/\//],
    [{ url: 'redis://h?ca_file=/x' }, /^BATON_REDIS_URL: must not carry \?ca_file=/],
    [{ sentinels: 'h:1' }, /^BATON_REDIS_SENTINEL_NAME: must be set/],
    [{ sentinels: 'h:1', sentinelName: 'a b' }, /^BATON_REDIS_SENTINEL_NAME: must be 1 to 64/],
    [{ sentinels: 'h', sentinelName: 'm' }, /^BATON_REDIS_SENTINELS: "h" is not host:port/],
    [{ sentinels: 'h:70000', sentinelName: 'm' }, /^BATON_REDIS_SENTINELS: "h:70000" is not host:port/],
    [{ sentinels: ' , ', sentinelName: 'm' }, /^BATON_REDIS_SENTINELS: must list host:port/],
    [{ url: 'redis://h', sentinelName: 'm' }, /^BATON_REDIS_SENTINEL_NAME: is only used with BATON_REDIS_SENTINELS/],
    [{ sentinelName: 'm' }, /^BATON_REDIS_URL: must be set/],
    [{ url: 'redis://h', caFile: ca }, /^BATON_REDIS_CA_FILE: needs a rediss:\/\//],
    [{ url: 'rediss://h', caFile: path.join(dir, 'missing.pem') }, /^BATON_REDIS_CA_FILE: cannot read .*ENOENT/],
    [{ url: 'rediss://h', caFile: notPem }, /^BATON_REDIS_CA_FILE: .* holds no PEM certificate/],
  ])('refuses %j', (settings, message) => {
    expect(() => redisConnectionString(settings)).toThrow(RedisSettingsError);
    expect(() => redisConnectionString(settings)).toThrow(message);
  });
});
