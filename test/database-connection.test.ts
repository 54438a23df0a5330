// How Baton connects to its database in production (issue 19, "Deployment"): the PostgreSQL pool size
// (BATON_DATABASE_POOL), TLS (sslmode in the URL, BATON_DATABASE_CA_FILE) against a real TLS-only PostgreSQL of the
// test's own, and migrations started by several processes at once (replicas starting together) on both databases.
//
// The concurrent migrators are separate processes running packages/db's build, which the test brings up to date.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'kysely';
import { openDatabase, postgresPoolConfig } from '@baton/db';
import { createEmptyTestDatabase, createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { loadConfig } from '../apps/api/src/config/config.js';
import { migrationProvider } from '../packages/db/src/migrations/index.js';
import { startTlsPostgres, type TlsPostgres } from './support/tls-postgres.js';
import { selfSignedCertificate } from './support/tls-files.js';

const exec = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-dbconn-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('BATON_DATABASE_POOL on PostgreSQL', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterAll(() => t.drop());

  /** The distinct server processes (= connections) that served `n` queries started at once. */
  async function connectionsUsed(poolSize: number | undefined, n: number): Promise<number> {
    const db = openDatabase(t.url, { poolSize });
    try {
      const pids = await Promise.all(
        Array.from({ length: n }, () =>
          sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.05)`.execute(db.kysely),
        ),
      );
      return new Set(pids.map((r) => r.rows[0]!.pid)).size;
    } finally {
      await db.close();
    }
  }

  it('never opens more connections than the pool size, and uses them all under load', async () => {
    expect(await connectionsUsed(3, 20)).toBe(3);
  });

  it('defaults to 10', async () => {
    expect(await connectionsUsed(undefined, 30)).toBe(10);
  });

  it('reaches the database from the setting through `baton serve`s configuration', () => {
    const config = loadConfig({ BATON_DATA_DIR: dir, BATON_DATABASE_URL: t.url, BATON_DATABASE_POOL: '4' });
    expect(config.databasePool).toBe(4);
    expect(postgresPoolConfig(config.databaseUrl, { poolSize: config.databasePool }).max).toBe(4);
  });
});

describe('PostgreSQL over TLS', () => {
  let server: TlsPostgres;
  let trusted: string;
  let other: string;
  beforeAll(async () => {
    const certificate = selfSignedCertificate(dir, 'postgres');
    trusted = certificate.cert;
    other = selfSignedCertificate(dir, 'other').cert;
    server = await startTlsPostgres(certificate);
  });
  afterAll(() => server?.stop());

  /** Whether a query on this connection ran over TLS, or the error that refused it. */
  async function tlsInUse(url: string, caFile?: string): Promise<boolean> {
    const db = openDatabase(url, { caFile });
    try {
      const { rows } = await sql<{
        ssl: boolean;
      }>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(db.kysely);
      return rows[0]!.ssl;
    } finally {
      await db.close();
    }
  }

  it('connects with BATON_DATABASE_CA_FILE (verify-full by default) and the connection is encrypted', async () => {
    const config = loadConfig({ BATON_DATA_DIR: dir, BATON_DATABASE_URL: server.url, BATON_DATABASE_CA_FILE: trusted });
    expect(config.databaseCaFile).toBe(trusted);
    expect(postgresPoolConfig(config.databaseUrl, { caFile: config.databaseCaFile }).connectionString).toMatch(
      /[?&]sslmode=verify-full(&|$)/,
    );
    expect(await tlsInUse(config.databaseUrl, config.databaseCaFile)).toBe(true);
  });

  it('connects with sslmode and sslrootcert in the URL alone', async () => {
    expect(await tlsInUse(`${server.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(trusted)}`)).toBe(true);
  });

  it('refuses a server whose certificate does not chain to the CA file', async () => {
    await expect(tlsInUse(server.url, other)).rejects.toThrow(/certificate/i);
  });

  it('is refused by a TLS-only server when it connects in clear text', async () => {
    await expect(tlsInUse(`${server.url}?sslmode=disable`)).rejects.toThrow(/no encryption|pg_hba/);
  });

  it('keeps a mode the URL names and refuses a CA file with sslmode=disable', () => {
    const config = postgresPoolConfig(`${server.url}?sslmode=verify-ca`, { caFile: trusted });
    expect(new URL(config.connectionString!).searchParams.get('sslmode')).toBe('verify-ca');
    expect(() =>
      loadConfig({
        BATON_DATA_DIR: dir,
        BATON_DATABASE_URL: `${server.url}?sslmode=disable`,
        BATON_DATABASE_CA_FILE: trusted,
      }),
    ).toThrow(/BATON_DATABASE_CA_FILE: BATON_DATABASE_URL says sslmode=disable/);
  });
});

const DB_DIST = path.resolve('packages/db/dist/index.js');
/** One migrator process: prints the names of the migrations it applied as JSON. */
const MIGRATOR = `
import { openDatabase } from ${JSON.stringify(DB_DIST)};
const db = openDatabase(process.argv[1]);
try { console.log(JSON.stringify(await db.migrate())); } finally { await db.close(); }
`;

describe.each(DIALECTS)('migrations started by several processes at once on %s', (dialect) => {
  const PROCESSES = 3;

  beforeAll(async () => {
    // The processes run packages/db's build: bring it up to date (incremental, at once when it already is).
    await exec(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-b', 'packages/db']);
  }, 120_000);

  it('all end fine: one applies every migration, the others wait and find nothing to do', async () => {
    const target = await createEmptyTestDatabase(dialect);
    try {
      const outcomes = await Promise.all(
        Array.from({ length: PROCESSES }, () =>
          exec(process.execPath, ['--input-type=module', '-e', MIGRATOR, target.url]).then(
            ({ stdout }) => JSON.parse(stdout.trim().split('\n').at(-1)!) as string[],
          ),
        ),
      );
      const all = Object.keys(await migrationProvider.getMigrations());
      expect(outcomes.filter((applied) => applied.length > 0)).toEqual([all]);
      expect(outcomes.filter((applied) => applied.length === 0)).toHaveLength(PROCESSES - 1);
      const db = openDatabase(target.url);
      try {
        const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
          db.kysely,
        );
        expect(rows.map((r) => r.name)).toEqual(all);
        expect(await db.migrate()).toEqual([]);
      } finally {
        await db.close();
      }
    } finally {
      await target.drop();
    }
  });
});
