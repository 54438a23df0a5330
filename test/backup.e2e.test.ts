// `baton backup` / `baton restore` / `baton prune` through the real launcher (issue 19): a backup taken while a
// `baton serve` is busy running playbooks, restored into a new data dir, serves the same audit chain (verified) and
// the same run log byte for byte; restore refuses what it must refuse, and backup refuses PostgreSQL.
import { afterAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import type { Run } from '@baton/contracts';
import { openDatabase } from '@baton/db';
import {
  ADMIN_PASSWORD,
  call,
  cleanupProcesses,
  freshEnv,
  login,
  run,
  tempDir,
  waitFor,
  withServer,
} from './support/baton-process.js';

const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - name: print a few lines
      ansible.builtin.debug:
        msg: "backup line {{ item }}: ünïcode ✓"
      loop: [1, 2, 3, 4, 5]
`;
const INVENTORY = 'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';

afterAll(cleanupProcesses);

async function logOf(base: string, token: string, id: string): Promise<Buffer> {
  const res = await fetch(`${base}/v1/runs/${id}/logs`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('baton backup and restore (SQLite)', () => {
  it('backs up a busy server, restores into a new data dir, and the copy verifies and serves the same log', async () => {
    const env: Record<string, string> = {
      ...(await freshEnv('sqlite')),
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_EXECUTORS: '2',
    };
    const out = tempDir('baton-backup-');
    const backupFile = path.join(out, 'baton.backup.db');
    const keyFile = path.join(out, 'master.key.backup');
    let finished: Run | undefined;
    let log: Buffer | undefined;
    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const cred = await call(s, token!, 'POST', '/v1/credentials', {
        name: 'deploy token',
        type: 'token',
        inputs: { token: 'secret-for-backup' },
      });
      expect(cred.status).toBe(201);
      const first = await call(s, token!, 'POST', '/v1/runs', { playbook: PLAYBOOK, inventory: INVENTORY });
      expect(first.status).toBe(201);
      finished = await waitFor(
        'the first run to finish',
        async () => {
          const r = await call(s, token!, 'GET', `/v1/runs/${first.body.id}`);
          return r.body.status === 'finished' ? r.body : undefined;
        },
        180_000,
      );
      expect(finished.conclusion).toBe('succeeded');
      log = await logOf(s.base, token!, finished.id);
      expect(log.toString('utf8')).toContain('backup line 5: ünïcode ✓');

      // Load: runs submitted before and during the backup, executing (and writing events) while it copies.
      const submitted: Promise<{ status: number }>[] = [];
      for (let i = 0; i < 4; i++)
        submitted.push(call(s, token!, 'POST', '/v1/runs', { playbook: PLAYBOOK, inventory: INVENTORY }));
      const backup = run(['backup', backupFile, '--with-key', keyFile], env);
      for (let i = 0; i < 4; i++)
        submitted.push(call(s, token!, 'POST', '/v1/runs', { playbook: PLAYBOOK, inventory: INVENTORY }));
      const done = await backup;
      expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
      expect(done.stdout).toContain(`Backed up the database to ${backupFile}`);
      for (const r of await Promise.all(submitted)) expect(r.status).toBe(201);

      // prune beside the running server: a dry run changes nothing.
      const dry = await run(['prune', '--dry-run', '--days', '1'], env);
      expect({ code: dry.code, stderr: dry.stderr }).toEqual({ code: 0, stderr: '' });
      expect(dry.stdout).toContain('Would remove the log and events of 0 run(s)');
      expect(dry.stdout).toContain('Dry run: nothing was changed.');
    });
    expect(fs.statSync(backupFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    // The key is the data dir's, and not inside the backup file.
    const key = fs.readFileSync(path.join(env.BATON_DATA_DIR!, 'master.key'), 'utf8').trim();
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(key);
    expect(fs.readFileSync(backupFile).includes(Buffer.from(key))).toBe(false);

    const restoredDir = path.join(tempDir('baton-restored-'), 'data');
    const restoredEnv = { BATON_DATA_DIR: restoredDir, BATON_EXECUTORS: '0' };
    const restored = await run(['restore', backupFile, '--data-dir', restoredDir, '--key', keyFile], restoredEnv);
    expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: '' });
    expect(fs.statSync(path.join(restoredDir, 'master.key')).mode & 0o777).toBe(0o600);

    // A second restore into the same data dir is refused, and --force is refused while a server uses it.
    const again = await run(['restore', backupFile, '--data-dir', restoredDir], restoredEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists: restore into a data dir without a database, or pass --force');

    await withServer(restoredEnv, async (s) => {
      const forced = await run(['restore', backupFile, '--data-dir', restoredDir, '--force'], restoredEnv);
      expect(forced.code).toBe(1);
      expect(forced.stderr).toContain('stop the baton serve');
      const { status, token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      expect(status).toBe(200);
      const verify = await call<{ ok: boolean; entries: number }>(s, token!, 'GET', '/v1/audit/verify');
      expect(verify.status).toBe(200);
      expect(verify.body.ok).toBe(true);
      expect(verify.body.entries).toBeGreaterThan(0);
      expect(await logOf(s.base, token!, finished!.id)).toEqual(log);
      // The credential's secret opens under the restored key: a run using it could start (the list shows it).
      const creds = await call<Array<{ name: string }>>(s, token!, 'GET', '/v1/credentials');
      expect(creds.body.map((c) => c.name)).toContain('deploy token');
    });
  }, 600_000);

  it('restore refuses a file that is not a Baton database and a key that does not open it, replacing nothing', async () => {
    const env = { ...(await freshEnv('sqlite')), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD, BATON_EXECUTORS: '0' };
    const out = tempDir('baton-backup-refusals-');
    const backupFile = path.join(out, 'b.db');
    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const cred = await call(s, token!, 'POST', '/v1/credentials', {
        name: 'a secret',
        type: 'token',
        inputs: { token: 'x' },
      });
      expect(cred.status).toBe(201);
      expect((await run(['backup', backupFile], env)).code).toBe(0);
    });
    const target = path.join(tempDir('baton-restore-target-'), 'data');
    const text = path.join(out, 'notes.txt');
    fs.writeFileSync(text, 'not a database at all\n'.repeat(100));
    const notDb = await run(['restore', text, '--data-dir', target], { BATON_DATA_DIR: target });
    expect(notDb.code).toBe(1);
    expect(notDb.stderr).toMatch(/not a SQLite database|cannot be opened/);

    // A SQLite file of something else: no migrations table.
    const otherDb = path.join(out, 'other.db');
    const other = openDatabase(`sqlite:${otherDb}`);
    await other.kysely.schema.createTable('notes').addColumn('id', 'integer').addColumn('body', 'text').execute();
    await other.close();
    const foreign = await run(['restore', otherDb, '--data-dir', target], { BATON_DATA_DIR: target });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('is not a Baton database: it has no migrations table');

    const wrongKey = path.join(out, 'wrong.key');
    fs.writeFileSync(wrongKey, `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 });
    const badKey = await run(['restore', backupFile, '--data-dir', target, '--key', wrongKey], {
      BATON_DATA_DIR: target,
    });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('does not open the backup');
    expect(fs.existsSync(path.join(target, 'baton.db'))).toBe(false);
    expect(fs.existsSync(path.join(target, 'master.key'))).toBe(false);

    const usage = await run(['backup'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('backup needs one file');
  }, 300_000);

  it('backup refuses PostgreSQL, pointing to pg_dump', async () => {
    const env = await freshEnv('postgres');
    const r = await run(['backup', path.join(tempDir('baton-pg-backup-'), 'x.db')], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pg_dump');
    expect(r.stderr).toContain('README, "Backup and restore"');
  }, 120_000);
});
