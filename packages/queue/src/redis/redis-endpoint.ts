// Where Redis is and how to reach it, as ONE connection string: every Baton connection (BullMQ's, the event stream's,
// pub/sub, registries) is opened from the same `redisUrl`, so TLS and Sentinel reach all of them without each
// factory knowing about either. The string is a redis:// or rediss:// URL; Baton's own query parameters below carry
// the Sentinel list, the master's name and the CA file, and openRedis turns them into ioredis options.
import fs from 'node:fs';
import type { RedisOptions } from 'ioredis';

/** A bad BATON_REDIS_* value; the message names the variable. */
export class RedisSettingsError extends Error {
  override readonly name = 'RedisSettingsError';
}

/** The Redis variables of `baton serve` and `baton worker`, as read from the environment. */
export interface RedisSettings {
  /** BATON_REDIS_URL: redis:// or rediss://; with Sentinels only its scheme, credentials and database count */
  url?: string | undefined;
  /** BATON_REDIS_SENTINELS: host:port,host:port */
  sentinels?: string | undefined;
  /** BATON_REDIS_SENTINEL_NAME: the master group the Sentinels watch */
  sentinelName?: string | undefined;
  /** BATON_REDIS_CA_FILE: PEM certificates a rediss:// server's certificate must chain to */
  caFile?: string | undefined;
}

const SENTINELS_PARAM = 'sentinels';
const SENTINEL_NAME_PARAM = 'sentinel_name';
const CA_FILE_PARAM = 'ca_file';
const URL_PATTERN = /^rediss?:\/\/\S*$/;
/** Sentinel master names as redis.conf takes them: no spaces, nothing a URL would mangle. */
const SENTINEL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

interface HostPort {
  host: string;
  port: number;
}

/** `host:port,host:port` (IPv6 in brackets); every entry must have a port. */
function parseSentinels(text: string): HostPort[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new RedisSettingsError('BATON_REDIS_SENTINELS: must list host:port entries');
  return entries.map((entry) => {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$/.exec(entry);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535)
      throw new RedisSettingsError(
        `BATON_REDIS_SENTINELS: ${JSON.stringify(entry.slice(0, 80))} is not host:port (e.g. 10.0.0.5:26379)`,
      );
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function readCa(file: string, variable: string): Buffer {
  let pem: Buffer;
  try {
    pem = fs.readFileSync(file);
  } catch (err) {
    throw new RedisSettingsError(
      `${variable}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new RedisSettingsError(`${variable}: ${file} holds no PEM certificate`);
  return pem;
}

/**
 * The connection string for the settings, or undefined when Redis is not configured (embedded mode). Checks every
 * value (the CA file is read once here to fail at start, not at the first connection).
 */
export function redisConnectionString(settings: RedisSettings): string | undefined {
  const { url, sentinels, sentinelName, caFile } = settings;
  if (url === undefined && sentinels === undefined) {
    if (sentinelName !== undefined || caFile !== undefined)
      throw new RedisSettingsError(
        'BATON_REDIS_URL: must be set (or BATON_REDIS_SENTINELS) for the other BATON_REDIS_*',
      );
    return undefined;
  }
  if (url !== undefined && !URL_PATTERN.test(url))
    throw new RedisSettingsError('BATON_REDIS_URL: must start with redis:// or rediss://');
  let parsed: URL;
  try {
    parsed = new URL(url ?? 'redis://localhost');
  } catch {
    throw new RedisSettingsError('BATON_REDIS_URL: is not a URL (redis://[user:password@]host:port[/db])');
  }
  for (const param of [SENTINELS_PARAM, SENTINEL_NAME_PARAM, CA_FILE_PARAM])
    if (parsed.searchParams.has(param))
      throw new RedisSettingsError(`BATON_REDIS_URL: must not carry ?${param}= (use its BATON_REDIS_* variable)`);
  // A plain URL stays as it was written.
  if (sentinels === undefined && sentinelName === undefined && caFile === undefined) return url;
  if (sentinels !== undefined) {
    parseSentinels(sentinels);
    if (sentinelName === undefined)
      throw new RedisSettingsError('BATON_REDIS_SENTINEL_NAME: must be set with BATON_REDIS_SENTINELS');
    if (!SENTINEL_NAME_PATTERN.test(sentinelName))
      throw new RedisSettingsError('BATON_REDIS_SENTINEL_NAME: must be 1 to 64 letters, digits, _ . or -');
    // The master's address comes from the Sentinels: the URL's host says nothing, so it shows the group's name.
    parsed.hostname = sentinelName;
    parsed.port = '';
    parsed.searchParams.set(SENTINELS_PARAM, sentinels.replace(/\s+/g, ''));
    parsed.searchParams.set(SENTINEL_NAME_PARAM, sentinelName);
  } else if (sentinelName !== undefined) {
    throw new RedisSettingsError('BATON_REDIS_SENTINEL_NAME: is only used with BATON_REDIS_SENTINELS');
  }
  if (caFile !== undefined) {
    if (parsed.protocol !== 'rediss:')
      throw new RedisSettingsError('BATON_REDIS_CA_FILE: needs a rediss:// BATON_REDIS_URL (TLS)');
    readCa(caFile, 'BATON_REDIS_CA_FILE');
    parsed.searchParams.set(CA_FILE_PARAM, caFile);
  }
  return parsed.toString();
}

/**
 * What ioredis needs for a connection string: the plain URL (Baton's parameters removed: ioredis would take any
 * query parameter as an option of its own) and the options for Sentinel and TLS.
 */
export function redisOptionsFor(connectionString: string): { url: string; options: RedisOptions } {
  const parsed = new URL(connectionString);
  const sentinels = parsed.searchParams.get(SENTINELS_PARAM);
  const sentinelName = parsed.searchParams.get(SENTINEL_NAME_PARAM);
  const caFile = parsed.searchParams.get(CA_FILE_PARAM);
  for (const param of [SENTINELS_PARAM, SENTINEL_NAME_PARAM, CA_FILE_PARAM]) parsed.searchParams.delete(param);
  const options: RedisOptions = {};
  const tls = parsed.protocol === 'rediss:';
  if (tls) options.tls = caFile ? { ca: readCa(caFile, 'BATON_REDIS_CA_FILE') } : {};
  if (sentinels !== null) {
    options.sentinels = parseSentinels(sentinels);
    options.name = sentinelName ?? undefined;
    // rediss:// means TLS to the master and to the Sentinels alike.
    if (tls) {
      options.enableTLSForSentinelMode = true;
      options.sentinelTLS = options.tls;
    }
    // After a failover, drop connections at once on the Sentinels' +switch-master instead of when the old master
    // refuses a write, and treat a READONLY answer (a demoted master) as a reason to reconnect and resend.
    options.failoverDetector = true;
    options.reconnectOnError = (err) => (err.message.startsWith('READONLY') ? 2 : false);
  }
  return { url: parsed.toString(), options };
}
