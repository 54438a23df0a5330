// `baton backup` and `baton restore` (issue 19): an embedded installation's database, copied online while
// `baton serve` runs, and, only when asked, its master key into a separate 0600 file. PostgreSQL is backed up with
// its own tools (README, "Backup and restore"). Restore refuses to replace a database unless told to (--force) and
// never while a server runs on the target.
import fs from 'node:fs';
import path from 'node:path';
import { assertKeyringOpensSecrets, Keyring, parseMasterKey, type MasterKey } from '@baton/core';
import {
  backupSqlite,
  inspectSqliteBackup,
  NotABatonDatabaseError,
  parseDatabaseUrl,
  unknownMigrations,
  withReadonlyRepositories,
} from '@baton/db';
import { type Config, ConfigError } from '../config/config.js';
import { loadKeyring, MASTER_KEY_FILE, NEXT_MASTER_KEY_FILE, writeKeyFile } from '../config/master-key.js';
import { acquireServeLock, serveLockFile } from '../runs/serve-lock.js';

/** A refusal of backup or restore: a message for the operator, exit code 1. */
export class BackupRefused extends Error {}

const PG_RECIPE =
  'BATON_DATABASE_URL is PostgreSQL: back it up with pg_dump (README, "Backup and restore"), e.g. ' +
  'pg_dump --format=custom --file=baton.dump "$BATON_DATABASE_URL"';

function sqliteFile(databaseUrl: string): string {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.dialect !== 'sqlite') throw new BackupRefused(PG_RECIPE);
  return path.resolve(target.location);
}

/** Keys as BATON_MASTER_KEY takes them: base64, current first, comma-separated. */
const keyLine = (keys: MasterKey[]) => `${keys.map((k) => k.key.toString('base64')).join(',')}\n`;

function readKeys(file: string): MasterKey[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new BackupRefused(`cannot read the key file ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  try {
    return text
      .trim()
      .split(',')
      .map((part) => parseMasterKey(part));
  } catch (err) {
    throw new BackupRefused(`${file} holds no master key: ${(err as Error).message}`);
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
  keyFile?: string | undefined;
}

/** Copies the live database to `file`; with `withKey`, the master key(s) to that file, mode 0600. */
export async function backup(
  config: Config,
  file: string,
  opts: { withKey?: string | undefined },
): Promise<BackupResult> {
  const source = sqliteFile(config.databaseUrl);
  const dest = path.resolve(file);
  if (dest === source || dest.startsWith(`${source}-`))
    throw new BackupRefused(`${file} is the live database itself: choose another file`);
  // The key first: a key that cannot be read stops the backup before anything is written.
  const keys = opts.withKey
    ? loadKeyring({ masterKey: config.masterKey, dataDir: config.dataDir, create: false }).keys()
    : undefined;
  let summary: { bytes: number };
  try {
    summary = await backupSqlite(source, dest);
  } catch (err) {
    if (err instanceof NotABatonDatabaseError) throw new BackupRefused(err.message);
    throw err;
  }
  if (!keys || !opts.withKey) return { file: dest, bytes: summary.bytes };
  const keyFile = path.resolve(opts.withKey);
  if (keyFile === dest) throw new BackupRefused('the key must go to a file of its own, not into the backup');
  const tmp = `${keyFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, keyLine(keys), { mode: 0o600, flag: 'w' });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, keyFile);
  return { file: dest, bytes: summary.bytes, keyFile };
}

export interface RestoreOptions {
  /** the data dir to restore into (its baton.db); default: BATON_DATA_DIR and BATON_DATABASE_URL */
  dataDir?: string | undefined;
  /** a key file written by `baton backup --with-key`: becomes <data dir>/master.key */
  key?: string | undefined;
  /** replace an existing database (and master.key) */
  force?: boolean | undefined;
}

/** Puts a backup in place of the data dir's database (and the key beside it), after checking both. */
export async function restore(config: Config, file: string, opts: RestoreOptions): Promise<{ database: string }> {
  const source = path.resolve(file);
  const dataDir = path.resolve(opts.dataDir ?? config.dataDir);
  const target = opts.dataDir ? path.join(dataDir, 'baton.db') : sqliteFile(config.databaseUrl);
  if (!fs.existsSync(source)) throw new BackupRefused(`no backup at ${file}`);
  let migrations: string[];
  try {
    migrations = inspectSqliteBackup(source).migrations;
  } catch (err) {
    if (err instanceof NotABatonDatabaseError) throw new BackupRefused(err.message);
    throw err;
  }
  const unknown = await unknownMigrations(migrations);
  if (unknown.length)
    throw new BackupRefused(`${file} comes from a newer Baton (migrations ${unknown.join(', ')}): upgrade first`);
  const keys = opts.key ? readKeys(opts.key) : undefined;
  if (keys) {
    try {
      await withReadonlyRepositories(source, (r) =>
        assertKeyringOpensSecrets(r.secretColumns, new Keyring(keys[0]!, keys.slice(1))),
      );
    } catch (err) {
      throw new BackupRefused(`the key in ${opts.key} does not open the backup's secrets: ${(err as Error).message}`);
    }
  }
  const keyFile = path.join(dataDir, MASTER_KEY_FILE);
  if (!opts.force) {
    if (fs.existsSync(target))
      throw new BackupRefused(`${target} exists: restore into a data dir without a database, or pass --force`);
    if (keys && fs.existsSync(keyFile))
      throw new BackupRefused(`${keyFile} exists: restore into a data dir without a key, or pass --force`);
  }
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Never under a running server: it would go on with the database it has open.
  let lock: { release(): void } | undefined;
  try {
    lock = acquireServeLock(serveLockFile(`sqlite:${target}`)!);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new BackupRefused(`stop the baton serve using ${target} first (${err.message})`);
    throw err;
  }
  try {
    const tmp = `${target}.${process.pid}.restore`;
    fs.copyFileSync(source, tmp);
    fs.chmodSync(tmp, 0o600);
    // The old database's WAL would be replayed into the restored file: it goes with the database it belongs to.
    for (const leftover of [`${target}-wal`, `${target}-shm`, `${target}-journal`])
      fs.rmSync(leftover, { force: true });
    fs.renameSync(tmp, target);
    if (keys) {
      writeKeyFile(keyFile, keys[0]!);
      const pending = path.join(dataDir, NEXT_MASTER_KEY_FILE);
      if (keys[1]) writeKeyFile(pending, keys[1]);
      else fs.rmSync(pending, { force: true });
    }
  } finally {
    lock.release();
  }
  return { database: target };
}
