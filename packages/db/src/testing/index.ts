// Test support: every repository and API test runs once per dialect, each file on a fresh database.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../database.js';
import type { DialectName } from '../dialect.js';
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

/** A fresh, migrated database of the given dialect. */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-db-'));
    const url = `sqlite:${path.join(dir, 'baton.db')}`;
    const db = openDatabase(url);
    await db.migrate();
    return {
      url,
      db,
      async drop() {
        await db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  // The creation time in the name lets a later test run drop leftovers of a killed run without touching
  // databases that a run going on right now is using (scripts/test.sh drops only ones older than an hour).
  const name = `baton_t_${Math.floor(Date.now() / 1000)}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabaseName(TEST_PG_URL, name);
  const db = openDatabase(url);
  await db.migrate();
  return {
    url,
    db,
    async drop() {
      await db.close();
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
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
