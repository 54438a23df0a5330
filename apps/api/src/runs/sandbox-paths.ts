// What a sandboxed playbook or inventory script must not read, beyond other runs' directories (the executor
// hides those itself): everything of this server's that its Unix user can read.
import fs from 'node:fs';
import path from 'node:path';
import { parseDatabaseUrl } from '@baton/db';
import type { Config } from '../config/config.js';

/** Where the systemd unit (deploy/systemd/baton.service) keeps its environment file. */
export const ENV_FILE_DIR = '/etc/baton';
/** libpq's and PostgreSQL's usual socket directory, used when a database URL names no host. */
export const DEFAULT_PG_SOCKET_DIR = '/var/run/postgresql';

export interface HiddenPathsHost {
  exists(p: string): boolean;
  /** this process's uid (undefined where there is none) */
  uid: number | undefined;
  /** PGHOST may name the socket directory when the URL does not */
  env: NodeJS.ProcessEnv;
}

const thisHost = (): HiddenPathsHost => ({
  exists: (p) => fs.existsSync(p),
  uid: process.getuid?.(),
  env: process.env,
});

/**
 * The directory of PostgreSQL's Unix socket when the URL connects through one: `?host=/dir`, a host that is an
 * encoded `/dir`, or no host at all (then PGHOST decides, and without it the usual directory). Read by hand:
 * `postgres://user@/db` is a valid connection string but not a valid WHATWG URL.
 */
export function postgresSocketDir(url: string, env: NodeJS.ProcessEnv = {}): string | undefined {
  const m = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)[^?#]*(?:\?([^#]*))?/.exec(url);
  if (!m) return undefined;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const param = new URLSearchParams(m[2] ?? '').get('host');
  const host = param ?? decode(m[1]!.replace(/:\d*$/, ''));
  if (host === '') return env.PGHOST ? (env.PGHOST.startsWith('/') ? env.PGHOST : undefined) : DEFAULT_PG_SOCKET_DIR;
  return host.startsWith('/') ? host : undefined;
}

/**
 * The data directory (master key, SQLite database) and a SQLite file kept elsewhere, always; and, where they
 * exist: the audit signing key, the unit's environment file directory, PostgreSQL's socket directory (a local
 * peer-authenticated connection would let a playbook into the database as this user), and the user's runtime
 * directory (/run/user/<uid>: agent and D-Bus sockets).
 */
export function sandboxHiddenPaths(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'auditSigningKeyFile'>,
  host: HiddenPathsHost = thisHost(),
): string[] {
  const hidden = [config.dataDir];
  const target = parseDatabaseUrl(config.databaseUrl);
  if (target.dialect === 'sqlite' && target.location !== ':memory:')
    hidden.push(path.dirname(path.resolve(target.location)));
  const optional = [
    config.auditSigningKeyFile === undefined ? undefined : path.resolve(config.auditSigningKeyFile),
    ENV_FILE_DIR,
    target.dialect === 'postgres' ? postgresSocketDir(target.location, host.env) : undefined,
    host.uid === undefined ? undefined : `/run/user/${host.uid}`,
  ];
  for (const p of optional) if (p !== undefined && host.exists(p)) hidden.push(p);
  return [...new Set(hidden)];
}
