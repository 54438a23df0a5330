// Test support: every repository and API test runs once per dialect, each file on a fresh database.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../database.js';
import type { DialectName } from '../dialect.js';
import { migrationProvider } from '../migrations/index.js';
import type { RunRow } from '../runs/run.repo.js';

export const DIALECTS: DialectName[] = ['sqlite', 'postgres'];

/** Admin connection used to create throwaway PostgreSQL databases. */
export const TEST_PG_URL = process.env.BATON_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  url: string;
  db: Database;
  /** Closes the connection and removes the database. */
  drop(): Promise<void>;
}

function withDatabaseName(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * What the migrations are: their names and code. A template made from other migrations (an edited or added one) has
 * another name, so it is never used for them.
 */
async function migrationsDigest(): Promise<string> {
  const migrations = await migrationProvider.getMigrations();
  const h = crypto.createHash('sha256');
  for (const [name, m] of Object.entries(migrations).sort(([a], [b]) => (a < b ? -1 : 1)))
    h.update(`${name}\0${m.up.toString()}\0`);
  return h.digest('hex').slice(0, 16);
}

/**
 * Migrating a fresh database for each test file cost the suite minutes (SQLite and PostgreSQL alike), so each
 * dialect is migrated once into a template that test databases are copied from: a file per process for SQLite,
 * `baton_tpl_<digest>` on the server for PostgreSQL (built once, under an advisory lock, by whichever process
 * comes first; it stays for later runs). The migrations themselves are still run and tested by their own tests.
 */
let sqliteTemplate: Promise<string> | undefined;

function sqliteTemplateFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-db-template-'));
    const file = path.join(dir, 'baton.db');
    const db = openDatabase(`sqlite:${file}`);
    await db.migrate();
    // Closing checkpoints the WAL into the file: the file alone is then the whole migrated database.
    await db.close();
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    return file;
  })();
  return sqliteTemplate;
}

let pgTemplate: Promise<string> | undefined;

function postgresTemplate(): Promise<string> {
  pgTemplate ??= (async () => {
    const name = `baton_tpl_${await migrationsDigest()}`;
    const admin = new pg.Client({ connectionString: TEST_PG_URL });
    await admin.connect();
    try {
      // One builder at a time across processes; the others wait, then find it built.
      await admin.query('select pg_advisory_lock(hashtext($1))', [name]);
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount === 0) {
        // Built under another name and renamed when complete: a build cut short never passes for a template.
        const building = `${name}_b${crypto.randomBytes(3).toString('hex')}`;
        await admin.query(`create database ${building}`);
        const db = openDatabase(withDatabaseName(TEST_PG_URL, building));
        try {
          await db.migrate();
        } finally {
          await db.close();
        }
        await admin.query(`alter database ${building} rename to ${name}`);
      }
      await admin.query('select pg_advisory_unlock(hashtext($1))', [name]);
    } finally {
      await admin.end();
    }
    return name;
  })();
  // A failed build is not remembered: the next test database tries again.
  pgTemplate.catch(() => (pgTemplate = undefined));
  return pgTemplate;
}

/** A new PostgreSQL database (a copy of `template`, or empty): its name and how to drop it. */
async function createPgDatabase(template?: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  // The creation time in the name lets a later test run drop leftovers of a killed run without touching
  // databases that a run going on right now is using (scripts/test.sh drops only ones older than an hour).
  const name = `baton_t_${Math.floor(Date.now() / 1000)}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabaseName(TEST_PG_URL, name),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** A fresh, empty database of the given dialect (not migrated, as a new installation finds it) and how to drop it. */
export async function createEmptyTestDatabase(dialect: DialectName): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialect === 'postgres') return createPgDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-db-empty-'));
  return {
    url: `sqlite:${path.join(dir, 'baton.db')}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** A fresh, migrated database of the given dialect. */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-db-'));
    const file = path.join(dir, 'baton.db');
    fs.copyFileSync(await sqliteTemplateFile(), file);
    const url = `sqlite:${file}`;
    const db = openDatabase(url);
    // Connected now, as migrating used to leave it: a test that closes it sees a closed connection, not a lazy one.
    await db.ping();
    return {
      url,
      db,
      async drop() {
        await db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const created = await createPgDatabase(await postgresTemplate());
  const db = openDatabase(created.url);
  await db.ping();
  return {
    url: created.url,
    db,
    async drop() {
      await db.close();
      await created.drop();
    },
  };
}

/**
 * A `runs` row for tests that need one in the database: an ordinary pending inline run of an inline inventory,
 * created now; `over` sets whatever the test is about.
 */
export function testRunRow(id: string, over: Partial<RunRow> = {}): RunRow {
  return {
    id,
    kind: 'run',
    parent_id: null,
    shard_index: null,
    shard_count: null,
    retry_of: null,
    status: 'pending',
    conclusion: null,
    reason: null,
    playbook_source: 'inline',
    playbook: '- hosts: all\n',
    project_id: null,
    git_commit: null,
    template_id: null,
    inventory_id: null,
    inventory_content: 'web1\n',
    inventory_format: 'ini',
    host_limit: null,
    hosts: null,
    extra_vars: null,
    credential_ids: [],
    check_mode: 0,
    forks: null,
    verbosity: null,
    timeout_s: null,
    labels: [],
    submitted_by: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FA1',
    worker: null,
    exit_code: null,
    stats: null,
    last_seq: 0,
    log_lines: 0,
    log_bytes: 0,
    output_truncated: 0,
    created_at: new Date().toISOString(),
    started_at: null,
    finished_at: null,
    cancel_requested_at: null,
    origin: 'api',
    schedule_id: null,
    trigger_id: null,
    git_ref: null,
    step_index: null,
    step_name: null,
    run_if: null,
    survey_answers: null,
    secret_vars_enc: null,
    held_by: null,
    hold_policies: null,
    hold_expires_at: null,
    output_pruned_at: null,
    ...over,
  };
}
