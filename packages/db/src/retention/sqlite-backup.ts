// Online backup and restore of an embedded (SQLite) installation. The copy is taken with SQLite's backup API on a
// connection of its own, read-only: a running `baton serve` goes on writing (WAL mode lets one writer and readers
// work side by side), and the copy is one consistent snapshot of a single moment.
import fs from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { createRepositories, type Repositories } from '../database.js';
import { migrationProvider } from '../migrations/index.js';
import type { Schema } from '../schema.js';

/** Kysely's bookkeeping table: a Baton database has one, naming the migrations applied to it. */
const MIGRATION_TABLE = 'kysely_migration';
/** Pages copied per step after the first: all of them, so the snapshot is taken in one read transaction and never
 * restarts because the server wrote in between (a reader in WAL mode holds no writer back). */
const ALL_PAGES = 2_147_483_647;

export class NotABatonDatabaseError extends Error {}

export interface BackupSummary {
  bytes: number;
  migrations: number;
}

/** What a file claims to be, checked before anything is replaced with it. */
export interface BackupInspection {
  /** migrations applied to it, oldest first */
  migrations: string[];
}

/** Copies the live database at `source` into `dest` (replaced atomically), as one file without a WAL beside it. */
export async function backupSqlite(source: string, dest: string): Promise<BackupSummary> {
  if (!fs.existsSync(source)) throw new NotABatonDatabaseError(`no database at ${source}`);
  const tmp = `${dest}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  const live = new SqliteDatabase(source, { readonly: true, fileMustExist: true });
  try {
    live.pragma('busy_timeout = 10000');
    await live.backup(tmp, { progress: () => ALL_PAGES });
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    live.close();
  }
  try {
    // A self-contained file: the copy keeps the live database's WAL mode in its header otherwise.
    const copy = new SqliteDatabase(tmp);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    fs.chmodSync(tmp, 0o600);
    const migrations = inspectSqliteBackup(tmp).migrations.length;
    fs.renameSync(tmp, dest);
    return { bytes: fs.statSync(dest).size, migrations };
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Checks that `file` is a sound Baton database this version can run: a SQLite file that passes SQLite's own check,
 * with the migrations table naming only migrations this version knows. Opens it read-only, changes nothing.
 */
export function inspectSqliteBackup(file: string): BackupInspection {
  let handle: SqliteDatabase.Database;
  try {
    handle = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new NotABatonDatabaseError(`${file} cannot be opened as a SQLite database: ${(err as Error).message}`);
  }
  try {
    let check: string;
    try {
      check = String(handle.pragma('quick_check', { simple: true }));
    } catch (err) {
      throw new NotABatonDatabaseError(`${file} is not a SQLite database: ${(err as Error).message}`);
    }
    if (check !== 'ok') throw new NotABatonDatabaseError(`${file} is damaged: ${check}`);
    const table = handle
      .prepare(`select name from sqlite_master where type = 'table' and name = ?`)
      .get(MIGRATION_TABLE) as { name: string } | undefined;
    if (!table) throw new NotABatonDatabaseError(`${file} is not a Baton database: it has no migrations table`);
    const applied = (
      handle.prepare(`select name from ${MIGRATION_TABLE} order by name`).all() as { name: string }[]
    ).map((r) => r.name);
    if (applied.length === 0)
      throw new NotABatonDatabaseError(`${file} is not a Baton database: no migration was applied`);
    return { migrations: applied };
  } finally {
    handle.close();
  }
}

/** The migrations a database has that this version does not know (a backup of a newer Baton). */
export async function unknownMigrations(applied: string[]): Promise<string[]> {
  const known = new Set(Object.keys(await migrationProvider.getMigrations()));
  return applied.filter((name) => !known.has(name));
}

/** Runs `fn` with repositories over `file` opened read-only (e.g. to check a key opens its secrets). */
export async function withReadonlyRepositories<T>(file: string, fn: (repos: Repositories) => Promise<T>): Promise<T> {
  const handle = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  const kysely = new Kysely<Schema>({ dialect: new SqliteDialect({ database: handle }) });
  try {
    return await fn(createRepositories(kysely, 'sqlite'));
  } finally {
    await kysely.destroy();
  }
}
