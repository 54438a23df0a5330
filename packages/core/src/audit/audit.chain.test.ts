import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { type AuditEntryRow, type Database, GENESIS_HASH, isUniqueViolation, openDatabase } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { type Principal, createAuthorizer } from '../authz/authorize.js';
import { ConflictError } from '../common/errors.js';
import { generateMasterKey, Keyring } from '../crypto/secret-box.js';
import { resealAllSecrets } from '../keys/rotate.js';
import { createSigningKeyStore } from '../keys/signing-key.js';
import { canonicalEntryBytes, entryHash, recordAudit } from './audit.chain.js';
import { collectAuditExport, createAuditService, exportSignedMessage } from './audit.service.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** A clock that ticks one second per reading, so every entry has a distinct, predictable `at`. */
function tickingClock(start = Date.parse('2025-03-01T12:00:00.000Z')) {
  let t = start;
  return () => new Date((t += 1000));
}

/** Independent of audit.chain.ts: the rule as the README states it. */
function sha256Chain(
  prevHash: string,
  e: Pick<AuditEntryRow, 'seq' | 'at' | 'actor' | 'action' | 'object' | 'summary'>,
): string {
  const canonical = `{"action":${JSON.stringify(e.action)},"actor":${JSON.stringify(e.actor)},"at":${JSON.stringify(e.at)},"object":${JSON.stringify(e.object)},"seq":${e.seq},"summary":${JSON.stringify(e.summary)}}`;
  return crypto
    .createHash('sha256')
    .update(Buffer.concat([Buffer.from(prevHash, 'utf8'), Buffer.from(canonical, 'utf8')]))
    .digest('hex');
}

async function allEntries(db: Database): Promise<AuditEntryRow[]> {
  return db.repos.audit.range(0, 100_000);
}

function service(db: Database) {
  const keyring = new Keyring(generateMasterKey());
  const clock = tickingClock();
  const signingKeys = createSigningKeyStore({ serverKeys: db.repos.serverKeys, keyring, clock });
  return createAuditService({
    audit: db.repos.audit,
    signingKeys,
    clock,
    authz: createAuthorizer({ grants: db.repos.grants, teams: db.repos.teams }),
  });
}

const ADMIN: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', username: 'admin', role: 'admin' };

/** Appends `n` entries, one transaction each, in order. */
async function appendMany(db: Database, n: number, clock = tickingClock()): Promise<AuditEntryRow[]> {
  const out: AuditEntryRow[] = [];
  for (let i = 1; i <= n; i++) {
    out.push(
      await db.transaction((r) =>
        recordAudit(
          r.audit,
          {
            actor: `usr_${i % 3}`,
            action: 'thing.update',
            object: i % 4 === 0 ? null : `obj_${i}`,
            summary: `change number ${i} — ünïcødé`,
          },
          clock,
        ),
      ),
    );
  }
  return out;
}

/** Checks the chain's shape directly: seqs 1..n without gap, each prev_hash the hash before it, head at the end. */
async function expectIntactChain(db: Database, n: number): Promise<AuditEntryRow[]> {
  const rows = await allEntries(db);
  expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
  let prev = GENESIS_HASH;
  for (const r of rows) {
    expect(r.prev_hash).toBe(prev);
    expect(r.hash).toBe(sha256Chain(prev, r));
    prev = r.hash;
  }
  expect(await db.repos.audit.head()).toEqual({ seq: n, hash: prev });
  return rows;
}

// ---- a writer in another process: the real repository code, transpiled on the fly by a tiny loader ----

function writeChildFiles(dir: string): { register: string; child: string } {
  // The workspace's TypeScript loader (scripts/ts): the child runs the real sources, transpiled on the fly.
  const register = path.join(REPO_ROOT, 'scripts/ts/register.mjs');
  const child = path.join(dir, 'writer.mjs');
  const dbUrl = pathToFileURL(path.join(REPO_ROOT, 'packages/db/src/database.ts')).href;
  const chainUrl = pathToFileURL(path.join(REPO_ROOT, 'packages/core/src/audit/audit.chain.ts')).href;
  fs.writeFileSync(
    child,
    `
import readline from 'node:readline';
const { openDatabase } = await import(${JSON.stringify(dbUrl)});
const { recordAudit } = await import(${JSON.stringify(chainUrl)});
const [url, tag, count] = process.argv.slice(2);
const db = openDatabase(url, { poolSize: 5 });
await db.ping();
process.stdout.write('ready\\n');
// Start together: wait for the parent's go.
await new Promise((resolve) => readline.createInterface({ input: process.stdin }).once('line', resolve));
const clock = () => new Date();
const jobs = Array.from({ length: Number(count) }, (_, i) =>
  db.transaction((r) => recordAudit(r.audit, { actor: tag, action: 'child.write', object: null, summary: tag + '-' + i }, clock)));
const results = await Promise.allSettled(jobs);
await db.close();
const failed = results.filter((r) => r.status === 'rejected');
for (const f of failed) process.stderr.write(String(f.reason) + '\\n');
process.exit(failed.length ? 1 : 0);
`,
  );
  return { register, child };
}

interface ChildWriter {
  ready: Promise<void>;
  go(): void;
  done: Promise<{ code: number | null; stderr: string }>;
}

function startChildWriter(
  files: { register: string; child: string },
  url: string,
  tag: string,
  count: number,
): ChildWriter {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const p = spawn(
    process.execPath,
    ['--no-warnings', '--import', pathToFileURL(files.register).href, files.child, url, tag, String(count)],
    {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    p.on('close', (code) => resolve({ code, stderr })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) resolve();
    });
    void done.then(({ code }) => reject(new Error(`writer ${tag} exited (${code}) before it was ready: ${stderr}`)));
  });
  return { ready, go: () => p.stdin.write('go\n'), done };
}

describe.each(DIALECTS)('audit chain on %s', (dialect) => {
  let tdb: TestDatabase;
  beforeEach(async () => {
    tdb = await createTestDatabase(dialect);
  });
  afterEach(() => tdb.drop());

  it('writes the documented canonical bytes', () => {
    const e = {
      seq: 7,
      at: '2025-03-01T12:00:01.000Z',
      actor: 'usr_1',
      action: 'team.create',
      object: null,
      summary: 'say "hi" ü',
    };
    expect(canonicalEntryBytes(e).toString('utf8')).toBe(
      '{"action":"team.create","actor":"usr_1","at":"2025-03-01T12:00:01.000Z","object":null,"seq":7,"summary":"say \\"hi\\" ü"}',
    );
    // Key order is fixed by the rule, not by the order of the caller's object.
    expect(
      canonicalEntryBytes({ summary: e.summary, seq: 7, object: null, at: e.at, actor: e.actor, action: e.action }),
    ).toEqual(canonicalEntryBytes(e));
    expect(entryHash(GENESIS_HASH, e)).toBe(sha256Chain(GENESIS_HASH, e));
    expect(entryHash(GENESIS_HASH, e)).not.toBe(entryHash(GENESIS_HASH, { ...e, object: 'null' }));
  });

  it('records consecutive seqs from 1, each linked to the one before by prev_hash', async () => {
    const clock = tickingClock();
    const appended = await appendMany(tdb.db, 5, clock);
    expect(appended.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(appended[0]!.prev_hash).toBe(GENESIS_HASH);
    const rows = await expectIntactChain(tdb.db, 5);
    // What append returned is exactly what was stored.
    expect(rows).toEqual(appended);
    expect(rows[1]).toMatchObject({
      at: '2025-03-01T12:00:02.000Z',
      actor: 'usr_2',
      action: 'thing.update',
      object: 'obj_2',
      summary: 'change number 2 — ünïcødé',
    });
    expect(rows[3]!.object).toBeNull();
    expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: true, entries: 5, head: rows[4]!.hash });
  });

  it('numbers several appends in one transaction consecutively', async () => {
    await appendMany(tdb.db, 1);
    const both = await tdb.db.transaction(async (r) => {
      const a = await recordAudit(
        r.audit,
        { actor: 'usr_x', action: 'a.one', object: null, summary: 'first' },
        tickingClock(),
      );
      const b = await recordAudit(
        r.audit,
        { actor: 'usr_x', action: 'a.two', object: null, summary: 'second' },
        tickingClock(),
      );
      return [a, b];
    });
    expect(both.map((e) => e.seq)).toEqual([2, 3]);
    expect(both[1]!.prev_hash).toBe(both[0]!.hash);
    await expectIntactChain(tdb.db, 3);
  });

  it('refuses to append outside a transaction', async () => {
    const rec = { actor: 'usr_1', action: 'thing.update', object: null, summary: 'loose' };
    await expect(recordAudit(tdb.db.repos.audit, rec, tickingClock())).rejects.toThrow(/inside a transaction/);
    await expect(
      tdb.db.repos.audit.append({ at: '2025-01-01T00:00:00.000Z', ...rec }, () => 'x'.repeat(64)),
    ).rejects.toThrow(/inside a transaction/);
    expect(await allEntries(tdb.db)).toEqual([]);
    expect(await tdb.db.repos.audit.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
  });

  it('commits a change together with its entry, and rolls both back together', async () => {
    const [first] = await appendMany(tdb.db, 1);
    const team = (id: string) => ({
      id,
      name: `name-${id}`,
      created_at: '2025-03-01T12:00:00.000Z',
      created_by: 'usr_1',
    });

    await tdb.db.transaction(async (r) => {
      await r.teams.insert(team('team_kept'));
      await recordAudit(
        r.audit,
        { actor: 'usr_1', action: 'team.create', object: 'team_kept', summary: 'created' },
        tickingClock(),
      );
    });
    expect(await tdb.db.repos.teams.findById('team_kept')).toBeDefined();
    expect((await allEntries(tdb.db)).map((e) => e.object)).toEqual([first!.object, 'team_kept']);
    const headAfterCommit = await tdb.db.repos.audit.head();
    expect(headAfterCommit.seq).toBe(2);

    await expect(
      tdb.db.transaction(async (r) => {
        await r.teams.insert(team('team_lost'));
        const entry = await recordAudit(
          r.audit,
          { actor: 'usr_1', action: 'team.create', object: 'team_lost', summary: 'created' },
          tickingClock(),
        );
        expect(entry.seq).toBe(3); // visible inside the transaction…
        throw new Error('the change failed after its entry was written');
      }),
    ).rejects.toThrow('the change failed');
    // …and gone with the change.
    expect(await tdb.db.repos.teams.findById('team_lost')).toBeUndefined();
    expect((await allEntries(tdb.db)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await tdb.db.repos.audit.head()).toEqual(headAfterCommit);

    // The chain carries on from the last committed entry: no gap where the rollback was.
    const next = await tdb.db.transaction((r) =>
      recordAudit(
        r.audit,
        { actor: 'usr_1', action: 'team.create', object: 'team_2', summary: 'again' },
        tickingClock(),
      ),
    );
    expect(next).toMatchObject({ seq: 3, prev_hash: headAfterCommit.hash });
    await expectIntactChain(tdb.db, 3);
    expect(await service(tdb.db).verify(ADMIN)).toMatchObject({ ok: true, entries: 3 });
  });

  it('rolls the entry back when the change fails on a constraint after the append', async () => {
    await tdb.db.transaction((r) =>
      r.teams.insert({ id: 'team_a', name: 'dup', created_at: '2025-03-01T12:00:00.000Z', created_by: 'usr_1' }),
    );
    // Asserted by its code, not with toThrow(): better-sqlite3's native addon keeps the SqliteError class of the
    // first test file that loaded it in a Jest worker, so later files see an error from another realm.
    const failure = await tdb.db
      .transaction(async (r) => {
        await recordAudit(
          r.audit,
          { actor: 'usr_1', action: 'team.create', object: 'team_b', summary: 'created' },
          tickingClock(),
        );
        await r.teams.insert({
          id: 'team_b',
          name: 'dup',
          created_at: '2025-03-01T12:00:00.000Z',
          created_by: 'usr_1',
        });
      })
      .then(
        () => 'committed',
        (err: unknown) => err,
      );
    expect(isUniqueViolation(failure)).toBe(true);
    expect(await allEntries(tdb.db)).toEqual([]);
    expect(await tdb.db.repos.audit.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
  });

  it('hashes exactly the text it stores, so text no database keeps as given still verifies and exports', async () => {
    // Straight through the audit code, past the HTTP edge that refuses such text: lone surrogates (no UTF-8 holds
    // them), NUL (PostgreSQL refuses it), and well-formed text that must stay exactly as given.
    const odd = [
      { actor: 'usr_\ud800', action: 'team.create', object: 'team_\udc00x', summary: 'name \ud800x, tail \udbff' },
      { actor: 'usr_1', action: 'team.\u0000create', object: null, summary: 'a\u0000b' },
      {
        actor: 'usr_1',
        action: 'team.create',
        object: null,
        summary: 'kept: 😀 \uFFFD \uFEFF e\u0301 \u0085 \r\n\t "q" \\ \uFFFF',
      },
    ];
    const clock = tickingClock();
    const appended = [];
    for (const rec of odd) appended.push(await tdb.db.transaction((r) => recordAudit(r.audit, rec, clock)));
    const rows = await expectIntactChain(tdb.db, 3);
    // What append returned, hashed and stored is one and the same text.
    expect(rows).toEqual(appended);
    expect(rows.map(({ actor, action, object, summary }) => ({ actor, action, object, summary }))).toEqual([
      { actor: 'usr_\uFFFD', action: 'team.create', object: 'team_\uFFFDx', summary: 'name \uFFFDx, tail \uFFFD' },
      { actor: 'usr_1', action: 'team.\uFFFDcreate', object: null, summary: 'a\uFFFDb' },
      odd[2],
    ]);
    const audit = service(tdb.db);
    expect(await audit.verify(ADMIN)).toEqual({ ok: true, entries: 3, head: rows[2]!.hash });
    const exported = await collectAuditExport(await audit.export(ADMIN));
    expect(exported.entries).toEqual(rows);
    // The export verifies offline by the README's rule, from its JSON text.
    const reread = JSON.parse(JSON.stringify(exported)) as typeof exported;
    let prev = GENESIS_HASH;
    for (const e of reread.entries) {
      expect(sha256Chain(prev, e)).toBe(e.hash);
      prev = e.hash;
    }
    expect(prev).toBe(reread.head.hash);
  });

  it('verifies an empty chain as ok with 0 entries', async () => {
    expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: true, entries: 0, head: GENESIS_HASH });
  });

  if (dialect === 'postgres') {
    it('never forks the chain under concurrent writers on three connections pools', async () => {
      const handles = [tdb.db, openDatabase(tdb.url, { poolSize: 8 }), openDatabase(tdb.url, { poolSize: 8 })];
      try {
        const clock = () => new Date();
        const jobs = handles.flatMap((h, w) =>
          Array.from({ length: 30 }, (_, i) =>
            h.transaction(async (r) => {
              const e = await recordAudit(
                r.audit,
                { actor: `writer_${w}`, action: 'concurrent.write', object: null, summary: `w${w}-${i}` },
                clock,
              );
              // A second statement after the append keeps the head locked a little longer.
              await r.teams.insert({
                id: `team_${w}_${i}`,
                name: `t-${w}-${i}`,
                created_at: e.at,
                created_by: `writer_${w}`,
              });
              return e;
            }),
          ),
        );
        const appended = await Promise.all(jobs);
        expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
        const rows = await expectIntactChain(tdb.db, 90);
        expect(new Set(rows.map((r) => r.summary)).size).toBe(90);
        expect(await service(tdb.db).verify(ADMIN)).toMatchObject({ ok: true, entries: 90, head: rows[89]!.hash });
      } finally {
        await Promise.all(handles.slice(1).map((h) => h.close()));
      }
    });
  } else {
    it('queues concurrent transactions on one handle without errors or a fork', async () => {
      const clock = () => new Date();
      const appended = await Promise.all(
        Array.from({ length: 90 }, (_, i) =>
          tdb.db.transaction((r) =>
            recordAudit(r.audit, { actor: 'w', action: 'concurrent.write', object: null, summary: `n${i}` }, clock),
          ),
        ),
      );
      expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
      await expectIntactChain(tdb.db, 90);
      expect(await service(tdb.db).verify(ADMIN)).toMatchObject({ ok: true, entries: 90 });
    });
  }

  it('never forks the chain when other processes append at the same time', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-audit-writers-'));
    try {
      const files = writeChildFiles(dir);
      const writers = ['proc_a', 'proc_b', 'proc_c'].map((tag) => startChildWriter(files, tdb.url, tag, 30));
      await Promise.all(writers.map((w) => w.ready));
      for (const w of writers) w.go();
      // This process writes too, through its own handle.
      const clock = () => new Date();
      const mine = Array.from({ length: 10 }, (_, i) =>
        tdb.db.transaction((r) =>
          recordAudit(
            r.audit,
            { actor: 'parent', action: 'parent.write', object: null, summary: `parent-${i}` },
            clock,
          ),
        ),
      );
      const [results] = await Promise.all([Promise.all(writers.map((w) => w.done)), Promise.all(mine)]);
      for (const r of results) expect(r).toEqual({ code: 0, stderr: '' });
      const rows = await expectIntactChain(tdb.db, 100);
      const byActor = (a: string) =>
        rows
          .filter((r) => r.actor === a)
          .map((r) => r.summary)
          .sort();
      for (const tag of ['proc_a', 'proc_b', 'proc_c'])
        expect(byActor(tag)).toEqual(Array.from({ length: 30 }, (_, i) => `${tag}-${i}`).sort());
      expect(byActor('parent')).toHaveLength(10);
      expect(await service(tdb.db).verify(ADMIN)).toMatchObject({ ok: true, entries: 100 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('verifies ok and exports consistently while writers keep appending', async () => {
    const svc = service(tdb.db);
    const clock = () => new Date();
    const writes = Array.from({ length: 60 }, (_, i) =>
      tdb.db.transaction((r) =>
        recordAudit(r.audit, { actor: 'w', action: 'concurrent.write', object: null, summary: `n${i}` }, clock),
      ),
    );
    const checks = Array.from({ length: 6 }, (_, i) =>
      i % 2 ? svc.verify(ADMIN) : svc.export(ADMIN).then(collectAuditExport),
    );
    const [, results] = await Promise.all([Promise.all(writes), Promise.all(checks)]);
    for (const r of results) {
      if ('signature' in r) expect(r.head.seq).toBe(r.entries.length);
      else expect(r).toMatchObject({ ok: true });
    }
    expect(await svc.verify(ADMIN)).toMatchObject({ ok: true, entries: 60 });
  });

  describe('export signing key', () => {
    it('is generated once even when two replicas ask for it at the same time', async () => {
      const keyring = new Keyring(generateMasterKey());
      const clock = tickingClock();
      const second = dialect === 'postgres' ? openDatabase(tdb.url, { poolSize: 2 }) : tdb.db;
      try {
        const stores = [tdb.db, second, tdb.db].map((d) =>
          createSigningKeyStore({ serverKeys: d.repos.serverKeys, keyring, clock }),
        );
        const keys = await Promise.all(stores.map((st) => st.auditKey()));
        expect(new Set(keys.map((k) => k.keyId)).size).toBe(1);
        expect(await tdb.db.kysely.selectFrom('server_keys').select('purpose').execute()).toEqual([
          { purpose: 'audit-signing' },
        ]);
        // The key id is the SHA-256 of the public key's SPKI DER.
        const der = crypto.createPublicKey(keys[0]!.publicKeyPem).export({ type: 'spki', format: 'der' });
        expect(keys[0]!.keyId).toBe(crypto.createHash('sha256').update(der).digest('hex'));
      } finally {
        if (second !== tdb.db) await second.close();
      }
    });

    it('stays the same key across a master key rotation, which is itself in the chain', async () => {
      const oldKey = generateMasterKey();
      const clock = tickingClock();
      const before = await createSigningKeyStore({
        serverKeys: tdb.db.repos.serverKeys,
        keyring: new Keyring(oldKey),
        clock,
      }).auditKey();
      const sealedBefore = (await tdb.db.repos.serverKeys.get('audit-signing'))!.private_key_enc;
      expect(sealedBefore).not.toContain('PRIVATE KEY');

      const newRing = new Keyring(generateMasterKey(), [oldKey]);
      const changed = await resealAllSecrets({
        transaction: tdb.db.transaction,
        ring: newRing,
        clock,
        actor: 'usr_admin',
      });
      expect(changed).toBe(1);
      const sealedAfter = (await tdb.db.repos.serverKeys.get('audit-signing'))!.private_key_enc;
      expect(sealedAfter).not.toBe(sealedBefore);
      expect(sealedAfter.split('.')[1]).toBe(newRing.current.kid);

      // Only the new master key is needed from now on, and the export key is unchanged.
      const after = await createSigningKeyStore({
        serverKeys: tdb.db.repos.serverKeys,
        keyring: new Keyring(newRing.current),
        clock,
      }).auditKey();
      expect(after.keyId).toBe(before.keyId);
      const entries = await allEntries(tdb.db);
      expect(entries.map((e) => e.action)).toEqual(['master_key.rotate']);
      expect(entries[0]!.summary).toContain(newRing.current.kid);
      await expectIntactChain(tdb.db, 1);
    });

    it('signs what verifies with the exported public key, and nothing else', async () => {
      await appendMany(tdb.db, 3);
      const x = await collectAuditExport(await service(tdb.db).export(ADMIN));
      const sig = Buffer.from(x.signature, 'base64');
      expect(crypto.verify(null, Buffer.from(x.signed_message, 'utf8'), x.public_key, sig)).toBe(true);
      expect(
        crypto.verify(null, Buffer.from(x.signed_message.replace('entries=3', 'entries=2'), 'utf8'), x.public_key, sig),
      ).toBe(false);
      expect(x.signed_message).toBe(exportSignedMessage({ exported_at: x.exported_at, entries: 3, head: x.head }));
      expect(x.signed_message).toContain(`head_hash=${x.head.hash}\n`);
    });

    it('uses a configured key, and refuses a key that is not Ed25519', async () => {
      const { privateKey } = crypto.generateKeyPairSync('ed25519');
      const store = createSigningKeyStore({
        serverKeys: tdb.db.repos.serverKeys,
        keyring: new Keyring(generateMasterKey()),
        clock: tickingClock(),
        configured: privateKey,
      });
      expect((await store.auditKey()).publicKeyPem).toBe(
        crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
      );
      expect(await tdb.db.repos.serverKeys.get('audit-signing')).toBeUndefined();
      const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
      const bad = createSigningKeyStore({
        serverKeys: tdb.db.repos.serverKeys,
        keyring: new Keyring(generateMasterKey()),
        clock: tickingClock(),
        configured: rsa,
      });
      await expect(bad.auditKey()).rejects.toThrow(/Ed25519/);
    });
  });

  describe('tampering', () => {
    const audit = () => tdb.db.kysely;

    it('pinpoints an edited field of a middle entry, and is ok again once it is restored', async () => {
      const rows = await appendMany(tdb.db, 6);
      const svc = service(tdb.db);
      // Entry 3 has an object; entry 4 has none (null).
      const edits: Array<[number, keyof AuditEntryRow, string | null]> = [
        [3, 'summary', 'nothing to see here'],
        [3, 'actor', 'usr_someone_else'],
        [3, 'action', 'thing.read'],
        [3, 'object', null],
        [3, 'object', 'obj_other'],
        [4, 'object', 'obj_4'],
        [4, 'object', ''],
        [3, 'at', '2025-03-01T12:00:03.001Z'],
        [3, 'prev_hash', rows[0]!.hash],
        [3, 'hash', rows[4]!.hash],
      ];
      for (const [seq, column, value] of edits) {
        const original = rows[seq - 1]![column];
        expect(value).not.toBe(original);
        await audit()
          .updateTable('audit_entries')
          .set({ [column]: value })
          .where('seq', '=', seq)
          .execute();
        expect([column, value, await svc.verify(ADMIN)]).toEqual([
          column,
          value,
          { ok: false, first_bad_seq: seq, entries: 6 },
        ]);
        await audit()
          .updateTable('audit_entries')
          .set({ [column]: original })
          .where('seq', '=', seq)
          .execute();
        expect(await svc.verify(ADMIN)).toEqual({ ok: true, entries: 6, head: rows[5]!.hash });
      }
    });

    it('pinpoints an edit of the first entry', async () => {
      await appendMany(tdb.db, 3);
      await audit().updateTable('audit_entries').set({ summary: 'rewritten' }).where('seq', '=', 1).execute();
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 1, entries: 3 });
    });

    it('pinpoints a deleted middle entry by its seq', async () => {
      await appendMany(tdb.db, 6);
      await audit().deleteFrom('audit_entries').where('seq', '=', 3).execute();
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 3, entries: 6 });
    });

    it('detects a truncated tail: the last entry deleted', async () => {
      await appendMany(tdb.db, 6);
      await audit().deleteFrom('audit_entries').where('seq', '=', 6).execute();
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 6, entries: 6 });
      await audit().deleteFrom('audit_entries').where('seq', '>=', 4).execute();
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 4, entries: 6 });
    });

    it('detects a head that no longer matches the last entry', async () => {
      await appendMany(tdb.db, 4);
      await audit()
        .updateTable('audit_head')
        .set({ hash: 'f'.repeat(64) })
        .where('id', '=', 1)
        .execute();
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 4, entries: 4 });
    });

    it('catches an edit whose hash was recomputed at the next entry, whose prev_hash no longer matches', async () => {
      const rows = await appendMany(tdb.db, 6);
      const forged = { ...rows[2]!, summary: 'forged, with a fresh hash' };
      const forgedHash = sha256Chain(forged.prev_hash, forged);
      await audit()
        .updateTable('audit_entries')
        .set({ summary: forged.summary, hash: forgedHash })
        .where('seq', '=', 3)
        .execute();
      // Entry 3 is self-consistent now; the break shows where 4 still points at the old hash.
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 4, entries: 6 });
    });

    it('catches a forged last entry at the head, which still names the old hash', async () => {
      const rows = await appendMany(tdb.db, 5);
      const forged = { ...rows[4]!, summary: 'forged tail' };
      await audit()
        .updateTable('audit_entries')
        .set({ summary: forged.summary, hash: sha256Chain(forged.prev_hash, forged) })
        .where('seq', '=', 5)
        .execute();
      expect(await service(tdb.db).verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 5, entries: 5 });
    });

    it('walks chains longer than one batch and pinpoints a break past the first batch', async () => {
      const clock = tickingClock();
      await tdb.db.transaction(async (r) => {
        for (let i = 1; i <= 1203; i++)
          await recordAudit(
            r.audit,
            { actor: 'bulk', action: 'bulk.write', object: null, summary: `bulk ${i}` },
            clock,
          );
      });
      const svc = service(tdb.db);
      const head = await tdb.db.repos.audit.head();
      expect(await svc.verify(ADMIN)).toEqual({ ok: true, entries: 1203, head: head.hash });
      const exported = await collectAuditExport(await svc.export(ADMIN));
      expect(exported.entries.map((e) => e.seq)).toEqual(Array.from({ length: 1203 }, (_, i) => i + 1));
      await audit().deleteFrom('audit_entries').where('seq', '=', 1001).execute();
      expect(await svc.verify(ADMIN)).toEqual({ ok: false, first_bad_seq: 1001, entries: 1203 });
      await expect(svc.export(ADMIN)).rejects.toThrow(ConflictError);
    });

    it('refuses to export a broken chain', async () => {
      await appendMany(tdb.db, 3);
      await audit().updateTable('audit_entries').set({ summary: 'x' }).where('seq', '=', 2).execute();
      await expect(service(tdb.db).export(ADMIN)).rejects.toThrow(/broken at seq 2/);
    });
  });
});
