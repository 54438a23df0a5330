// How `baton serve` reaches its database and Redis beyond their URLs: the PostgreSQL pool size and CA, and Redis
// over TLS or through Sentinel (the same BATON_REDIS_* variables as `baton worker`, read by @baton/queue's
// redisConnectionString so both processes agree).
import fs from 'node:fs';
import { redisConnectionString, RedisSettingsError } from '@baton/queue';

export class ConnectionConfigError extends Error {
  override readonly name = 'ConnectionConfigError';
}

export interface ConnectionSettings {
  /** BATON_REDIS_URL, BATON_REDIS_SENTINELS, BATON_REDIS_SENTINEL_NAME, BATON_REDIS_CA_FILE as one connection string */
  redisUrl?: string | undefined;
  /** BATON_DATABASE_POOL: most PostgreSQL connections of this process */
  databasePool: number;
  /** BATON_DATABASE_CA_FILE: PEM certificates PostgreSQL's certificate must chain to */
  databaseCaFile?: string | undefined;
}

const DEFAULT_DATABASE_POOL = 10;
/** PostgreSQL's own default max_connections is 100: a pool beyond a thousand is a typo. */
const MAX_DATABASE_POOL = 1000;

function databasePool(text: string | undefined): number {
  if (text === undefined) return DEFAULT_DATABASE_POOL;
  const n = Number(text.trim());
  if (!/^[0-9]+$/.test(text.trim()) || n < 1 || n > MAX_DATABASE_POOL)
    throw new ConnectionConfigError(`BATON_DATABASE_POOL: must be a whole number from 1 to ${MAX_DATABASE_POOL}`);
  return n;
}

function databaseCaFile(file: string | undefined, databaseUrl: string): string | undefined {
  if (file === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new ConnectionConfigError('BATON_DATABASE_CA_FILE: is for PostgreSQL (BATON_DATABASE_URL=postgres://…)');
  if (/[?&]sslmode=disable(&|$)/.test(databaseUrl))
    throw new ConnectionConfigError('BATON_DATABASE_CA_FILE: BATON_DATABASE_URL says sslmode=disable');
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConnectionConfigError(
      `BATON_DATABASE_CA_FILE: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new ConnectionConfigError(`BATON_DATABASE_CA_FILE: ${file} holds no PEM certificate`);
  return file;
}

/** `present`: the BATON_* variables that are set and not empty. Throws ConnectionConfigError naming the variable. */
export function loadConnectionSettings(
  present: Record<string, string | undefined>,
  databaseUrl: string,
): ConnectionSettings {
  let redisUrl: string | undefined;
  try {
    redisUrl = redisConnectionString({
      url: present.BATON_REDIS_URL,
      sentinels: present.BATON_REDIS_SENTINELS,
      sentinelName: present.BATON_REDIS_SENTINEL_NAME,
      caFile: present.BATON_REDIS_CA_FILE,
    });
  } catch (err) {
    if (err instanceof RedisSettingsError) throw new ConnectionConfigError(err.message);
    throw err;
  }
  return {
    redisUrl,
    databasePool: databasePool(present.BATON_DATABASE_POOL),
    databaseCaFile: databaseCaFile(present.BATON_DATABASE_CA_FILE, databaseUrl),
  };
}
