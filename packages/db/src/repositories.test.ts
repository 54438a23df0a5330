// What every repository promises its callers: typed values in and out of the JSON text columns (stored exactly as
// JSON.stringify writes them), a DuplicateKeyError for a unique violation, and one keyset paging rule.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'kysely';
import { DuplicateKeyError } from './errors.js';
import { jsonColumns } from './json-columns.js';
import { createTestDatabase, DIALECTS, type TestDatabase, testRunRow } from './testing/index.js';

const now = '2026-11-21T10:00:00.000Z';

describe('jsonColumns', () => {
  const codec = jsonColumns<{ tags: string[]; extra: Record<string, unknown> | null }>({ tags: true, extra: true });

  it('writes JSON.stringify of each JSON column, leaves null and absent ones alone, and reads back the values', () => {
    const stored = codec.encode({ id: 'x', tags: ['b', 'a'], extra: null });
    expect(stored).toEqual({ id: 'x', tags: '["b","a"]', extra: null });
    expect(codec.encode({ extra: { n: 1 } })).toEqual({ extra: '{"n":1}' });
    expect(Object.keys(codec.encode({ id: 'y', tags: undefined }))).toEqual(['id', 'tags']);
    expect(codec.encode({ id: 'y', tags: undefined }).tags).toBeUndefined();
    expect(codec.decode(stored)).toEqual({ id: 'x', tags: ['b', 'a'], extra: null });
  });
});

describe.each(DIALECTS)('repositories on %s', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
    await t.db.repos.users.insert({
      id: 'usr_A',
      username: 'alice',
      role: 'admin',
      email: null,
      password_hash: 'x',
      created_at: now,
      updated_at: now,
    });
  });
  afterAll(() => t.drop());

  /** A row's text columns as stored, read around the repositories. */
  const storedRun = async (id: string) =>
    (
      await sql<
        Record<string, unknown>
      >`select hosts, extra_vars, credential_ids, labels, stats from runs where id = ${id}`.execute(t.db.kysely)
    ).rows[0];

  describe('JSON columns', () => {
    it('stores a run’s typed values as their JSON text and hands them back typed, NULL as null', async () => {
      const stats = { web1: { ok: 2, changed: 1, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 } };
      const row = testRunRow('run_J1', {
        hosts: ['web1', 'web2'],
        extra_vars: { a: [1, { b: 'ü' }] },
        credential_ids: ['cred_1'],
        labels: ['eu', 'gpu'],
        stats,
      });
      await t.db.repos.runs.insert(row);
      expect(await storedRun('run_J1')).toEqual({
        hosts: '["web1","web2"]',
        extra_vars: '{"a":[1,{"b":"ü"}]}',
        credential_ids: '["cred_1"]',
        labels: '["eu","gpu"]',
        stats: JSON.stringify(stats),
      });
      expect(await t.db.repos.runs.findById('run_J1')).toEqual(row);
      expect((await t.db.repos.runs.findMany(['run_J1']))[0]).toEqual(row);

      await t.db.repos.runs.insert(testRunRow('run_J2'));
      expect(await storedRun('run_J2')).toEqual({
        hosts: null,
        extra_vars: null,
        credential_ids: '[]',
        labels: '[]',
        stats: null,
      });
      expect(await t.db.repos.runs.findById('run_J2')).toMatchObject({
        hosts: null,
        extra_vars: null,
        credential_ids: [],
        labels: [],
        stats: null,
      });
    });

    it('encodes patches too: a transition writes stats as text, a null stays NULL', async () => {
      await t.db.repos.runs.insert(testRunRow('run_J3', { hosts: ['a'] }));
      const stats = { a: { ok: 1, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 } };
      expect(await t.db.repos.runs.transition('run_J3', ['pending'], { status: 'finished', stats, hosts: null })).toBe(
        true,
      );
      expect(await storedRun('run_J3')).toMatchObject({ hosts: null, stats: JSON.stringify(stats) });
      expect((await t.db.repos.runs.findById('run_J3'))!.stats).toEqual(stats);
    });

    it('does the same for event data, worker labels and runs, credential inputs and inventory groups', async () => {
      await t.db.repos.runEvents.insertBatch([
        {
          run_id: 'run_J1',
          seq: 1,
          ts: now,
          kind: 'log',
          host: null,
          log_line: 1,
          log_byte: 0,
          data: { text: 'hi\n', start_line: 1 },
        },
      ]);
      const event = await sql<{ data: string }>`select data from run_events where run_id = 'run_J1'`.execute(
        t.db.kysely,
      );
      expect(event.rows[0]!.data).toBe('{"text":"hi\\n","start_line":1}');
      expect((await t.db.repos.runEvents.list('run_J1', { limit: 5 }))[0]!.data).toEqual({
        text: 'hi\n',
        start_line: 1,
      });
      expect((await t.db.repos.runEvents.logChunksByLine('run_J1', 1, 1))[0]!.data).toEqual({
        text: 'hi\n',
        start_line: 1,
      });

      await t.db.repos.workers.upsert({
        id: 'wrk_1',
        name: 'w1',
        host: 'h',
        mode: 'daemon',
        labels: ['gpu'],
        capacity: 1,
        running: [],
        started_at: now,
        heartbeat_at: now,
        lease_expires_at: now,
        paused: null,
      });
      await t.db.repos.workers.heartbeat('w1', { running: ['run_J1'], heartbeat_at: now, lease_expires_at: now });
      const worker = await sql<{
        labels: string;
        running: string;
      }>`select labels, running from workers where name = 'w1'`.execute(t.db.kysely);
      expect(worker.rows[0]).toEqual({ labels: '["gpu"]', running: '["run_J1"]' });
      expect((await t.db.repos.workers.list())[0]).toMatchObject({ labels: ['gpu'], running: ['run_J1'] });

      await t.db.repos.credentials.insert({
        id: 'cred_J',
        name: 'key',
        type: 'ssh_key',
        description: null,
        public_inputs: { username: 'root' },
        secret_inputs_enc: 'sealed',
        created_by: 'usr_A',
        created_at: now,
        updated_at: now,
      });
      await t.db.repos.credentials.update('cred_J', { public_inputs: { username: 'deploy' } });
      const cred = await sql<{
        public_inputs: string;
      }>`select public_inputs from credentials where id = 'cred_J'`.execute(t.db.kysely);
      expect(cred.rows[0]!.public_inputs).toBe('{"username":"deploy"}');
      expect((await t.db.repos.credentials.list({ limit: 5 }))[0]!.public_inputs).toEqual({ username: 'deploy' });

      const groups = [{ name: 'web', hosts: ['web1'], children: [] }];
      await t.db.repos.inventories.insert({
        id: 'inv_J',
        name: 'inv',
        format: 'ini',
        content: 'web1',
        groups,
        host_count: 1,
        created_by: 'usr_A',
        created_at: now,
        updated_at: now,
      });
      const inv = await sql<{ groups: string }>`select groups from inventories where id = 'inv_J'`.execute(t.db.kysely);
      expect(inv.rows[0]!.groups).toBe('[{"name":"web","hosts":["web1"],"children":[]}]');
      expect((await t.db.repos.inventories.findById('inv_J'))!.groups).toEqual(groups);
      expect((await t.db.repos.inventories.findSummary('inv_J'))!.groups).toEqual(groups);
      expect((await t.db.repos.inventories.list({ limit: 5 }, 'all'))[0]!.groups).toEqual(groups);
    });
  });

  describe('duplicate keys', () => {
    const duplicateOf = (write: Promise<unknown>) =>
      write.then(
        () => 'written',
        (err: unknown) => err,
      );

    it('throws a DuplicateKeyError naming the table and columns, for a single and a composite key', async () => {
      await t.db.repos.teams.insert({ id: 'team_1', name: 'ops', created_at: now, created_by: 'usr_A' });
      const name = await duplicateOf(
        t.db.repos.teams.insert({ id: 'team_2', name: 'ops', created_at: now, created_by: 'usr_A' }),
      );
      expect(name).toBeInstanceOf(DuplicateKeyError);
      expect(name).toMatchObject({ table: 'teams', columns: ['name'], message: 'duplicate key in teams (name)' });

      await t.db.repos.teams.addMember({ team_id: 'team_1', user_id: 'usr_A', added_at: now });
      const member = await duplicateOf(
        t.db.repos.teams.addMember({ team_id: 'team_1', user_id: 'usr_A', added_at: now }),
      );
      expect(member).toMatchObject({ table: 'team_members', columns: ['team_id', 'user_id'] });

      const grant = { subject_id: 'usr_A', object_id: 'team_1', level: 'use', created_at: now, created_by: 'usr_A' };
      await t.db.repos.grants.insert({ id: 'grant_1', ...grant });
      expect(await duplicateOf(t.db.repos.grants.insert({ id: 'grant_2', ...grant }))).toMatchObject({
        table: 'grants',
        columns: ['subject_id', 'object_id'],
      });
    });

    it('throws it from an update that takes a name in use, inside a transaction too', async () => {
      const project = (id: string, name: string) => ({
        id,
        name,
        git_url: 'https://git.example/x.git',
        branch: 'main',
        credential_id: null,
        last_commit: null,
        synced_at: null,
        created_by: 'usr_A',
        created_at: now,
        updated_at: now,
      });
      await t.db.repos.projects.insert(project('prj_1', 'one'));
      await t.db.repos.projects.insert(project('prj_2', 'two'));
      const err = await duplicateOf(t.db.transaction((r) => r.projects.update('prj_2', { name: 'one' })));
      expect(err).toBeInstanceOf(DuplicateKeyError);
      expect(err).toMatchObject({ table: 'projects', columns: ['name'] });
      expect((await t.db.repos.projects.findById('prj_2'))!.name).toBe('two');
    });

    it('lets every other failure through as it is', async () => {
      const err = await duplicateOf(
        t.db.repos.teams.addMember({ team_id: 'team_none', user_id: 'usr_A', added_at: now }),
      );
      expect(err).not.toBeInstanceOf(DuplicateKeyError);
      // The driver's own error, told by its code: better-sqlite3's error class may come from another Jest realm.
      expect(err).toMatchObject({ code: dialect === 'sqlite' ? 'SQLITE_CONSTRAINT_FOREIGNKEY' : '23503' });
    });
  });

  describe('keyset pages', () => {
    it('pages newest id first, and host names in order, each page after the last key of the one before', async () => {
      for (const id of ['team_P1', 'team_P2', 'team_P3'])
        await t.db.repos.teams.insert({ id, name: id, created_at: now, created_by: 'usr_A' });
      const ids = async (before?: string) => (await t.db.repos.teams.list({ limit: 2, before })).map((x) => x.id);
      expect(await ids()).toEqual(['team_P3', 'team_P2']);
      expect(await ids('team_P2')).toEqual(['team_P1', 'team_1']);

      await t.db.repos.inventories.replaceHosts(
        'inv_J',
        ['c', 'a', 'b'].map((host) => ({ host, groups: [host.toUpperCase()] })),
      );
      expect(await t.db.repos.inventories.listHosts('inv_J', { limit: 2 })).toEqual([
        { host: 'a', groups: ['A'] },
        { host: 'b', groups: ['B'] },
      ]);
      expect(await t.db.repos.inventories.listHosts('inv_J', { limit: 2, before: 'b' })).toEqual([
        { host: 'c', groups: ['C'] },
      ]);
    });
  });
});
