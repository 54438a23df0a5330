import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openDatabase } from './database.js';
import { migrationProvider } from './migrations/index.js';
import { parseDatabaseUrl } from './dialect.js';
import { DuplicateKeyError, isUniqueViolation } from './errors.js';
import { createEmptyTestDatabase, createTestDatabase, DIALECTS, type TestDatabase } from './testing/index.js';

const now = '2026-11-21T10:00:00.000Z';
const user = (id: string, username: string, role = 'operator') => ({
  id,
  username,
  role,
  email: null,
  password_hash: 'x',
  created_at: now,
  updated_at: now,
});

describe('parseDatabaseUrl', () => {
  it.each([
    ['postgres://u@h/db', 'postgres', 'postgres://u@h/db'],
    ['postgresql://u@h/db', 'postgres', 'postgresql://u@h/db'],
    ['sqlite:/var/lib/baton/b.db', 'sqlite', '/var/lib/baton/b.db'],
    ['sqlite://./rel.db', 'sqlite', './rel.db'],
    ['./data/baton.db', 'sqlite', './data/baton.db'],
  ])('%s → %s', (url, dialect, location) => {
    expect(parseDatabaseUrl(url)).toEqual({ dialect, location });
  });
  it('rejects other schemes without echoing credentials', () => {
    expect(() => parseDatabaseUrl('mysql://root:hunter2@h/db')).toThrow(/unsupported database URL scheme/);
    expect(() => parseDatabaseUrl('mysql://root:hunter2@h/db')).not.toThrow(/hunter2/);
  });
});

describe.each(DIALECTS)('database on %s', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(() => t.drop());

  it('migrates once and then has nothing left to do', async () => {
    expect(await t.db.migrate()).toEqual([]);
    await expect(t.db.ping()).resolves.toBeUndefined();
  });

  // Test databases are copies of a migrated template (testing/index.ts): this one starts empty, as a new install does.
  it('migrates an empty database through every migration, in order', async () => {
    const names = Object.keys(await migrationProvider.getMigrations()).sort();
    const { url, drop: dropEmpty } = await createEmptyTestDatabase(dialect);
    const empty = openDatabase(url);
    try {
      expect(await empty.migrate()).toEqual(names);
      expect(await empty.migrate()).toEqual([]);
      await empty.repos.users.insert(user('usr_E', 'fresh'));
      expect((await empty.repos.users.findById('usr_E'))?.username).toBe('fresh');
    } finally {
      await empty.close();
      await dropEmpty();
    }
  });

  it('enforces unique usernames and reports them as duplicate keys', async () => {
    await t.db.repos.users.insert(user('usr_A', 'dup'));
    const err = await t.db.repos.users.insert(user('usr_B', 'dup')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DuplicateKeyError);
    expect(err).toMatchObject({ table: 'users', columns: ['username'] });
    expect(isUniqueViolation(err)).toBe(true);
    expect(isUniqueViolation((err as Error).cause)).toBe(true);
    expect(isUniqueViolation(new Error('other'))).toBe(false);
  });

  it('pages users newest id first with a keyset', async () => {
    for (const id of ['usr_P1', 'usr_P2', 'usr_P3']) await t.db.repos.users.insert(user(id, id.toLowerCase()));
    const first = await t.db.repos.users.list({ limit: 2 });
    expect(first.map((u) => u.id)).toEqual(['usr_P3', 'usr_P2']);
    const next = await t.db.repos.users.list({ limit: 2, before: 'usr_P2' });
    expect(next[0]!.id).toBe('usr_P1');
  });

  it('rolls back every write of a failed transaction', async () => {
    await expect(
      t.db.transaction(async (r) => {
        await r.users.insert(user('usr_TX', 'in-tx'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await t.db.repos.users.findById('usr_TX')).toBeUndefined();
  });

  it("binds a transaction's repositories, made on first use, to that transaction: a copy of them too", async () => {
    await expect(
      t.db.transaction(async (r) => {
        expect(r.users).toBe(r.users);
        // Spread by test wrappers (run-ingest.faults.test.ts): every repository is an own enumerable property.
        const copy = { ...r };
        expect(Object.keys(copy)).toEqual(Object.keys(t.db.repos));
        expect(Object.keys(copy).length).toBeGreaterThan(20);
        expect(copy.users).toBe(r.users);
        await copy.users.insert(user('usr_LAZY', 'lazy-tx'));
        await copy.teams.insert({ id: 'tea_LAZY', name: 'lazy', created_at: now, created_by: 'usr_LAZY' });
        expect(await r.users.findById('usr_LAZY')).toMatchObject({ username: 'lazy-tx' });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await t.db.repos.users.findById('usr_LAZY')).toBeUndefined();
    expect(await t.db.repos.teams.findById('tea_LAZY')).toBeUndefined();
  });

  it('cascades a user’s tokens and memberships when the user goes', async () => {
    const r = t.db.repos;
    await r.users.insert(user('usr_C', 'cascade'));
    await r.tokens.insert({
      id: 'tok_C',
      user_id: 'usr_C',
      token_hash: 'h-c',
      created_at: now,
      expires_at: '2999-01-01T00:00:00.000Z',
      revoked_at: null,
      kind: 'session',
      name: null,
      scope: 'write',
      issued_role: null,
      last_used_at: null,
    });
    await r.teams.insert({ id: 'team_C', name: 'cascaders', created_at: now, created_by: 'usr_C' });
    await r.teams.addMember({ team_id: 'team_C', user_id: 'usr_C', added_at: now });
    expect(await r.tokens.findLive('h-c', now)).toBeDefined();
    expect(await r.users.delete('usr_C')).toBe(true);
    expect(await r.tokens.findLive('h-c', now)).toBeUndefined();
    expect(await r.teams.teamIdsOf('usr_C')).toEqual([]);
  });

  it('finds only live tokens: not expired, not revoked', async () => {
    const r = t.db.repos;
    await r.users.insert(user('usr_T', 'tokens'));
    await r.tokens.insert({
      id: 'tok_1',
      user_id: 'usr_T',
      token_hash: 'h1',
      created_at: now,
      expires_at: '2026-11-21T11:00:00.000Z',
      revoked_at: null,
      kind: 'session',
      name: null,
      scope: 'write',
      issued_role: null,
      last_used_at: null,
    });
    expect(await r.tokens.findLive('h1', now)).toMatchObject({ user: { username: 'tokens' } });
    expect(await r.tokens.findLive('h1', '2026-11-21T11:00:00.000Z')).toBeUndefined();
    await r.tokens.revoke('tok_1', now);
    expect(await r.tokens.findLive('h1', now)).toBeUndefined();
  });

  it('stores a server key once even when two writers race', async () => {
    const row = (v: string) => ({ purpose: 'race', public_key: v, private_key_enc: v, created_at: now });
    const [a, b] = await Promise.all([
      t.db.repos.serverKeys.insertOrGet(row('first')),
      t.db.repos.serverKeys.insertOrGet(row('second')),
    ]);
    expect(a.public_key).toBe(b.public_key);
  });

  it('re-encrypts every registered secret column in place', async () => {
    await t.db.repos.serverKeys.insertOrGet({
      purpose: 'reseal',
      public_key: 'p',
      private_key_enc: 'old:1',
      created_at: now,
    });
    const changed = await t.db.transaction((r) =>
      r.secretColumns.reencryptAll((v) => (v.startsWith('old:') ? v.replace('old:', 'new:') : v)),
    );
    expect(changed).toBeGreaterThanOrEqual(1);
    expect((await t.db.repos.serverKeys.get('reseal'))!.private_key_enc).toBe('new:1');
  });

  it('opens a second handle on the same database', async () => {
    const other = openDatabase(t.url);
    try {
      expect(await other.repos.users.findById('usr_P1')).toMatchObject({ username: 'usr_p1' });
    } finally {
      await other.close();
    }
  });
});
