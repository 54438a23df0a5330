// The only place that knows which database is underneath. Everything else speaks Kysely.
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import type pg from 'pg';
import type { Schema } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DatabaseTarget {
  dialect: DialectName;
  /** file path for SQLite, connection string for PostgreSQL */
  location: string;
}

/** `postgres://…` / `postgresql://…` → PostgreSQL; `sqlite:<path>` or a bare path → SQLite. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//.test(url)) return { dialect: 'postgres', location: url };
  if (url.startsWith('sqlite://')) return { dialect: 'sqlite', location: url.slice('sqlite://'.length) };
  if (url.startsWith('sqlite:')) return { dialect: 'sqlite', location: url.slice('sqlite:'.length) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    throw new Error(
      `unsupported database URL scheme in "${url.replace(/\/\/[^@/]*@/, '//***@')}": use postgres:// or sqlite:<path>`,
    );
  }
  return { dialect: 'sqlite', location: url };
}

// SQLite's deferred BEGIN can fail with SQLITE_BUSY when a reader upgrades to a writer while another
// process (say `baton user create` beside a running server) writes. BEGIN IMMEDIATE takes the write lock
// up front, so busy_timeout applies and writers simply queue.
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  // On some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) SQLite has already rolled the transaction back itself:
  // the ROLLBACK then fails with "no transaction is active", and Kysely would throw that in place of the real cause.
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } catch (err) {
      if (!/no transaction is active/.test((err as Error)?.message ?? '')) throw err;
    }
  }
}

class BatonSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

/** Distinct SQL texts kept compiled; Baton's queries are a few hundred shapes, so this holds them all. */
const STATEMENT_CACHE_SIZE = 1000;

/**
 * Kysely prepares every query afresh; compiling SQL was the largest single cost of the server's thread under
 * load. better-sqlite3 statements are reusable and Kysely runs one at a time on this one handle, so each SQL
 * text is compiled once (least recently used ones are dropped past the limit). Baton streams no query: a
 * Kysely `.stream()` running the same SQL again inside its loop would meet a busy statement, so a stream would
 * need a statement of its own.
 */
function cachePreparedStatements(handle: SqliteDatabase.Database): void {
  const prepare = handle.prepare.bind(handle);
  const cache = new Map<string, SqliteDatabase.Statement>();
  handle.prepare = ((source: string) => {
    const hit = cache.get(source);
    if (hit) {
      cache.delete(source);
      cache.set(source, hit);
      return hit;
    }
    const statement = prepare(source);
    cache.set(source, statement);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return statement;
  }) as typeof handle.prepare;
}

// One handle per file per process: better-sqlite3 waits for a lock synchronously (busy_timeout), which
// blocks the event loop, so a second handle in the same process can never let the first one finish.
// Separate processes (the CLI beside a running server) queue on the file lock as they should.
function openSqlite(file: string): Kysely<Schema> {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const handle = new SqliteDatabase(file);
  handle.pragma('journal_mode = WAL');
  handle.pragma('busy_timeout = 10000');
  handle.pragma('foreign_keys = ON');
  handle.pragma('synchronous = NORMAL');
  cachePreparedStatements(handle);
  return new Kysely<Schema>({ dialect: new BatonSqliteDialect({ database: handle }) });
}

/** How a process connects to PostgreSQL beyond its URL (SQLite ignores these). */
export interface DatabaseOptions {
  /** BATON_DATABASE_POOL: the most connections this process holds open at once */
  poolSize?: number | undefined;
  /** BATON_DATABASE_CA_FILE: PEM certificates the server's certificate must chain to */
  caFile?: string | undefined;
}

export const DEFAULT_POOL_SIZE = 10;

/**
 * pg's pool settings. TLS comes from the URL as libpq writes it (`sslmode=verify-full`, `sslrootcert=…`,
 * `sslcert=…`, `sslkey=…`; pg reads those files itself); a CA file from the options becomes `sslrootcert`, with
 * `sslmode=verify-full` unless the URL names a mode: a CA given for nothing would leave the connection in clear text.
 */
export function postgresPoolConfig(url: string, opts: DatabaseOptions = {}): pg.PoolConfig {
  let connectionString = url;
  if (opts.caFile !== undefined) {
    const parsed = new URL(url);
    parsed.searchParams.set('sslrootcert', opts.caFile);
    if (!parsed.searchParams.has('sslmode')) parsed.searchParams.set('sslmode', 'verify-full');
    connectionString = parsed.toString();
  }
  return { connectionString, max: opts.poolSize ?? DEFAULT_POOL_SIZE };
}

function openPostgres(url: string, opts: DatabaseOptions): Kysely<Schema> {
  // pg is loaded with the first query: a server on SQLite, the default, never holds it (bench/memory).
  const pool = async (): Promise<pg.Pool> => {
    const { default: driver } = await import('pg');
    const created = new driver.Pool(postgresPoolConfig(url, opts));
    // An idle client losing its server (restart, failover) must not crash the process.
    created.on('error', () => {});
    // Nor a client checked out of the pool that loses it between two queries (a transaction awaiting other work): pg
    // emits that on the client, where no listener would end the process. Its next query fails and is reported.
    created.on('connect', (client) => client.on('error', () => {}));
    return created;
  };
  return new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
}

export function openKysely(target: DatabaseTarget, opts: DatabaseOptions = {}): Kysely<Schema> {
  return target.dialect === 'sqlite' ? openSqlite(target.location) : openPostgres(target.location, opts);
}

/** `count(*)` and bigint columns arrive as strings from pg and numbers from SQLite. */
export function toNumber(value: string | number | bigint | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/** A row elsewhere still references the one being deleted (per driver); repositories report it as "in use". */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
