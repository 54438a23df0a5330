import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { recordAudit } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness } from '../testing/harness.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const VERIFY_SCRIPT = path.join(REPO_ROOT, 'scripts/verify-audit-export.mjs');
const GENESIS = '0'.repeat(64);

interface Entry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  object: string | null;
  summary: string;
  prev_hash: string;
  hash: string;
}

interface Export {
  format: string;
  exported_at: string;
  head: { seq: number; hash: string };
  entries: Entry[];
  key_id: string;
  public_key: string;
  signed_message: string;
  signature: string;
}

/**
 * The README's rule, written here without Baton's code: canonical bytes = UTF-8 of JSON.stringify of
 * {action, actor, at, object, seq, summary} in that key order; hash = SHA-256(prev_hash hex text ‖ canonical bytes).
 */
function offlineHash(prevHash: string, e: Entry): string {
  const canonical = JSON.stringify({
    action: e.action,
    actor: e.actor,
    at: e.at,
    object: e.object,
    seq: e.seq,
    summary: e.summary,
  });
  return crypto
    .createHash('sha256')
    .update(Buffer.concat([Buffer.from(prevHash, 'utf8'), Buffer.from(canonical, 'utf8')]))
    .digest('hex');
}

/** Everything a third party checks, with node:crypto only. Returns the first problem, or 'ok'. */
function verifyOffline(x: Export): string {
  let prev = GENESIS;
  for (const [i, e] of x.entries.entries()) {
    if (e.seq !== i + 1) return `seq at ${i + 1}`;
    if (e.prev_hash !== prev) return `prev_hash at ${e.seq}`;
    if (offlineHash(prev, e) !== e.hash) return `hash at ${e.seq}`;
    prev = e.hash;
  }
  if (x.head.seq !== x.entries.length || x.head.hash !== prev) return 'head';
  if (
    !x.signed_message.includes(`head_hash=${x.head.hash}\n`) ||
    !x.signed_message.includes(`head_seq=${x.head.seq}\n`)
  )
    return 'signed_message';
  const sig = Buffer.from(x.signature, 'base64');
  if (!crypto.verify(null, Buffer.from(x.signed_message, 'utf8'), x.public_key, sig)) return 'signature';
  const keyId = crypto
    .createHash('sha256')
    .update(crypto.createPublicKey(x.public_key).export({ type: 'spki', format: 'der' }))
    .digest('hex');
  if (keyId !== x.key_id) return 'key_id';
  return 'ok';
}

function hasOpenssl(): boolean {
  return spawnSync('openssl', ['version']).status === 0;
}

function runVerifier(file: string, ...args: string[]) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [VERIFY_SCRIPT, file, ...args], { encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.each(DIALECTS)('audit routes on %s', (dialect) => {
  let h: Harness;
  let tmp: string;
  const at = (s: number) => new Date(Date.UTC(2001, 0, 1, 0, 0, s)).toISOString();

  /** Entries with chosen timestamps, recorded like any mutation records them. */
  async function record(
    actor: string,
    action: string,
    object: string | null,
    atSecond: number,
    summary = `${action} on ${object}`,
  ) {
    return h.tdb.db.transaction((r) =>
      recordAudit(r.audit, { actor, action, object, summary }, () => new Date(at(atSecond))),
    );
  }

  async function listAll(query: string): Promise<Entry[]> {
    const res = await h.http.get(`/v1/audit?${query}`).set(bearer(h.admin.token));
    expect([query, res.status]).toEqual([query, 200]);
    return res.body as Entry[];
  }

  async function tamperAndRestore<T>(seq: number, fn: () => Promise<T>): Promise<T> {
    const original = await h.tdb.db.kysely
      .selectFrom('audit_entries')
      .select('summary')
      .where('seq', '=', seq)
      .executeTakeFirstOrThrow();
    await h.tdb.db.kysely
      .updateTable('audit_entries')
      .set({ summary: `${original.summary} (edited)` })
      .where('seq', '=', seq)
      .execute();
    try {
      return await fn();
    } finally {
      await h.tdb.db.kysely
        .updateTable('audit_entries')
        .set({ summary: original.summary })
        .where('seq', '=', seq)
        .execute();
    }
  }

  beforeAll(async () => {
    h = await createHarness(dialect);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-audit-export-'));
    // A fixed set of entries in 2001, one second apart, to filter on.
    await record('usr_f1', 'team.create', 'team_f1', 1);
    await record('usr_f2', 'team.create', 'team_f2', 2);
    await record('usr_f1', 'team.delete', 'team_f1', 3);
    await record('usr_f1', 'grant.create', null, 4);
    await record('usr_f2', 'team.delete', 'team_f2', 5);
  });
  afterAll(async () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    await h.close();
  });

  describe('who may read it', () => {
    it.each(['/v1/audit', '/v1/audit/verify', '/v1/audit/export'])(
      '%s: 401 without a token, 403 for operators and viewers, 200 for admins',
      async (url) => {
        const none = await h.http.get(url);
        expect(none.status).toBe(401);
        expect(none.headers['content-type']).toMatch(/application\/problem\+json/);
        for (const role of ['operator', 'viewer'] as const) {
          const u = await h.user(role);
          const res = await h.http.get(url).set(bearer(u.token));
          expect([role, res.status]).toEqual([role, 403]);
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
          expect(JSON.stringify(res.body)).not.toContain('usr_f1');
        }
        expect((await h.http.get(url).set(bearer('bt_forged'))).status).toBe(401);
        expect((await h.http.get(url).set(bearer(h.admin.token))).status).toBe(200);
      },
    );
  });

  describe('listing', () => {
    it('lists entries newest first, with every field of the chain', async () => {
      const all = await listAll('limit=500');
      const seqs = all.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
      const f = all.find((e) => e.object === 'team_f2' && e.action === 'team.create');
      expect(f).toEqual({
        seq: expect.any(Number),
        at: '2001-01-01T00:00:02.000Z',
        actor: 'usr_f2',
        action: 'team.create',
        object: 'team_f2',
        summary: 'team.create on team_f2',
        prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      // Mutations made through the API are there too: creating users and signing in.
      expect(all.map((e) => e.action)).toEqual(expect.arrayContaining(['user.create', 'auth.login']));
    });

    it('filters by actor, object and action, alone and together', async () => {
      const summaries = (es: Entry[]) => es.map((e) => `${e.actor} ${e.action} ${e.object}`);
      expect(summaries(await listAll('actor=usr_f1'))).toEqual([
        'usr_f1 grant.create null',
        'usr_f1 team.delete team_f1',
        'usr_f1 team.create team_f1',
      ]);
      expect(summaries(await listAll('object=team_f2'))).toEqual([
        'usr_f2 team.delete team_f2',
        'usr_f2 team.create team_f2',
      ]);
      expect(summaries(await listAll('action=team.delete'))).toEqual([
        'usr_f2 team.delete team_f2',
        'usr_f1 team.delete team_f1',
      ]);
      expect(summaries(await listAll('actor=usr_f1&action=team.delete'))).toEqual(['usr_f1 team.delete team_f1']);
      expect(await listAll('actor=usr_f1&object=team_f2')).toEqual([]);
      expect(await listAll('actor=nobody')).toEqual([]);
    });

    it('filters by time: since is inclusive, until exclusive, offsets and fractions honoured', async () => {
      const secs = async (q: string) =>
        (await listAll(`actor=usr_f1&${q}`))
          .map((e) => e.at.slice(17, 23))
          .concat((await listAll(`actor=usr_f2&${q}`)).map((e) => e.at.slice(17, 23)))
          .sort();
      expect(await secs(`since=${at(2)}&until=${at(4)}`)).toEqual(['02.000', '03.000']);
      expect(await secs('since=2001-01-01T00:00:02Z&until=2001-01-01T00:00:04Z')).toEqual(['02.000', '03.000']);
      // The same instants written with an offset.
      expect(await secs('since=2001-01-01T01:00:02%2B01:00&until=2000-12-31T23:00:04-01:00')).toEqual([
        '02.000',
        '03.000',
      ]);
      // Finer than a millisecond: 02.0001 is after the entry at 02.000; 04.0001 after the one at 04.000.
      expect(await secs('since=2001-01-01T00:00:02.0001Z&until=2001-01-01T00:00:04.0001Z')).toEqual([
        '03.000',
        '04.000',
      ]);
      expect(await secs('since=2001-01-01T00:00:01.999999Z&until=2001-01-01T00:00:02.000001Z')).toEqual(['02.000']);
      expect(await secs(`since=${at(3)}`)).toEqual(['03.000', '04.000', '05.000']);
      expect(await secs(`until=${at(3)}`)).toEqual(['01.000', '02.000']);
      expect(await secs(`since=${at(4)}&until=${at(4)}`)).toEqual([]);
      // Instants whose UTC form leaves the four-digit years still compare as instants.
      expect(await secs('since=9999-12-31T23:00:00-02:00')).toEqual([]);
      expect(await secs('until=9999-12-31T23:00:00-02:00')).toEqual(['01.000', '02.000', '03.000', '04.000', '05.000']);
      expect(await secs('since=0000-01-01T00:00:00%2B01:00')).toEqual([
        '01.000',
        '02.000',
        '03.000',
        '04.000',
        '05.000',
      ]);
      expect(await secs('until=0000-01-01T00:00:00%2B01:00')).toEqual([]);
    });

    it('rejects bad queries with 400 problem+json', async () => {
      for (const q of [
        'since=yesterday',
        'since=2001-02-30T00:00:00Z',
        'until=2001-01-01',
        'since=1700000000',
        'until=2001-01-01T25:00:00Z',
        'limit=0',
        'limit=501',
        'limit=abc',
        'limit=1.5',
        'limit=-1',
        'limit=',
        'actor=a&actor=b',
        `actor=${'x'.repeat(65)}`,
        'colour=blue',
      ]) {
        const res = await h.http.get(`/v1/audit?${q}`).set(bearer(h.admin.token));
        expect([q, res.status]).toEqual([q, 400]);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.body.errors?.length ?? 0).toBeGreaterThan(0);
      }
    });

    it('pages with limit and a Link rel="next" cursor, without duplicates or gaps', async () => {
      const everything = await listAll('limit=500');
      const seen: Entry[] = [];
      let url: string | undefined = '/v1/audit?limit=2';
      let pages = 0;
      while (url) {
        const res = await h.http.get(url).set(bearer(h.admin.token));
        expect(res.status).toBe(200);
        expect(res.body.length).toBeLessThanOrEqual(2);
        seen.push(...(res.body as Entry[]));
        pages++;
        const link = res.headers.link as string | undefined;
        const m = link ? /^<([^>]+)>; rel="next"$/.exec(link) : null;
        if (link) expect(m).not.toBeNull();
        url = m?.[1];
        if (url) expect(url).toMatch(/^\/v1\/audit\?limit=2&cursor=/);
      }
      expect(pages).toBe(Math.ceil(everything.length / 2));
      expect(seen).toEqual(everything);
      expect(new Set(seen.map((e) => e.seq)).size).toBe(seen.length);
    });

    it('keeps the filters on the next page', async () => {
      const first = await h.http.get('/v1/audit?actor=usr_f1&limit=2').set(bearer(h.admin.token));
      expect(first.body.map((e: Entry) => e.at)).toEqual([at(4), at(3)]);
      const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)![1]!;
      expect(next).toContain('actor=usr_f1');
      const second = await h.http.get(next).set(bearer(h.admin.token));
      expect(second.body.map((e: Entry) => e.at)).toEqual([at(1)]);
      expect(second.headers.link).toBeUndefined();
    });

    it('answers 400 for a cursor it did not issue', async () => {
      const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
      for (const cursor of [
        '!!!',
        b64('abc'),
        b64('-3'),
        b64('1.5'),
        b64('99999999999999999999'),
        b64('4294967296'),
        'x'.repeat(201),
      ]) {
        const res = await h.http.get(`/v1/audit?cursor=${encodeURIComponent(cursor)}`).set(bearer(h.admin.token));
        expect([cursor, res.status]).toEqual([cursor, 400]);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      }
      // A well-formed one just pages from there.
      const res = await h.http.get(`/v1/audit?cursor=${b64('3')}`).set(bearer(h.admin.token));
      expect(res.status).toBe(200);
      expect(res.body.map((e: Entry) => e.seq)).toEqual([2, 1]);
    });
  });

  describe('verify', () => {
    it('says ok with the entry count and the head, then pinpoints a tampered entry', async () => {
      const head = await h.tdb.db.repos.audit.head();
      const ok = await h.http.get('/v1/audit/verify').set(bearer(h.admin.token));
      expect(ok.status).toBe(200);
      // Reading the trail records nothing, so the head is still the one read above.
      expect(ok.body).toEqual({ ok: true, entries: head.seq, head: head.hash });

      const target = (await listAll('object=team_f2&action=team.create'))[0]!.seq;
      const bad = await tamperAndRestore(target, () => h.http.get('/v1/audit/verify').set(bearer(h.admin.token)));
      expect(bad.status).toBe(200);
      expect(bad.body).toEqual({ ok: false, first_bad_seq: target, entries: head.seq });

      expect((await h.http.get('/v1/audit/verify').set(bearer(h.admin.token))).body).toEqual({
        ok: true,
        entries: head.seq,
        head: head.hash,
      });
    });

    it('pinpoints a deleted entry', async () => {
      const extra = await record('usr_del', 'thing.delete', 'obj_del', 9);
      await record('usr_del', 'thing.delete', 'obj_after', 10);
      const row = await h.tdb.db.kysely
        .selectFrom('audit_entries')
        .selectAll()
        .where('seq', '=', extra.seq)
        .executeTakeFirstOrThrow();
      await h.tdb.db.kysely.deleteFrom('audit_entries').where('seq', '=', extra.seq).execute();
      try {
        const res = await h.http.get('/v1/audit/verify').set(bearer(h.admin.token));
        expect(res.body).toMatchObject({ ok: false, first_bad_seq: extra.seq });
      } finally {
        await h.tdb.db.kysely.insertInto('audit_entries').values(row).execute();
      }
      expect((await h.http.get('/v1/audit/verify').set(bearer(h.admin.token))).body.ok).toBe(true);
    });
  });

  describe('export', () => {
    let x: Export;
    beforeAll(async () => {
      const res = await h.http.get('/v1/audit/export').set(bearer(h.admin.token));
      expect(res.status).toBe(200);
      expect(res.headers['content-disposition']).toMatch(/attachment/);
      x = res.body as Export;
    });

    it('is a complete snapshot that verifies offline with node:crypto alone', async () => {
      const head = await h.tdb.db.repos.audit.head();
      expect(x.format).toBe('baton-audit-export/1');
      expect(x.head).toEqual({ seq: head.seq, hash: head.hash });
      expect(x.entries.map((e) => e.seq)).toEqual(Array.from({ length: head.seq }, (_, i) => i + 1));
      expect(x.entries.find((e) => e.object === 'team_f1' && e.action === 'team.delete')).toMatchObject({
        actor: 'usr_f1',
        at: at(3),
      });
      expect(verifyOffline(x)).toBe('ok');
      expect(x.signed_message).toBe(
        `baton-audit-export/1\nexported_at=${x.exported_at}\nentries=${head.seq}\nhead_seq=${head.seq}\nhead_hash=${head.hash}\n`,
      );
      expect(crypto.createPublicKey(x.public_key).asymmetricKeyType).toBe('ed25519');
      expect(x.key_id).toMatch(/^[0-9a-f]{64}$/);
    });

    it('fails offline verification when anything is altered', () => {
      const clone = (): Export => JSON.parse(JSON.stringify(x)) as Export;
      const mid = Math.floor(x.entries.length / 2);

      const edited = clone();
      edited.entries[mid]!.summary += '!';
      expect(verifyOffline(edited)).toBe(`hash at ${mid + 1}`);

      const dropped = clone();
      dropped.entries.splice(mid, 1);
      expect(verifyOffline(dropped)).toBe(`seq at ${mid + 1}`);

      const truncated = clone();
      truncated.entries.pop();
      expect(verifyOffline(truncated)).toBe('head');

      const message = clone();
      message.signed_message = message.signed_message.replace(/entries=\d+/, 'entries=1');
      expect(verifyOffline(message)).toBe('signature');

      const otherKey = clone();
      otherKey.public_key = crypto
        .generateKeyPairSync('ed25519')
        .publicKey.export({ type: 'spki', format: 'pem' })
        .toString();
      expect(verifyOffline(otherKey)).toBe('signature');

      const resigned = clone();
      const forger = crypto.generateKeyPairSync('ed25519');
      resigned.public_key = forger.publicKey.export({ type: 'spki', format: 'pem' }).toString();
      resigned.signature = crypto
        .sign(null, Buffer.from(resigned.signed_message, 'utf8'), forger.privateKey)
        .toString('base64');
      // Self-consistent, but not the pinned key.
      expect(verifyOffline(resigned)).toBe('key_id');
    });

    (hasOpenssl() ? it : it.skip)('verifies with the openssl command line too', () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'openssl-'));
      const write = (name: string, data: string | Buffer) => {
        fs.writeFileSync(path.join(dir, name), data);
        return path.join(dir, name);
      };
      const pub = write('pub.pem', x.public_key);
      const sig = write('sig.bin', Buffer.from(x.signature, 'base64'));
      const verify = (msgFile: string) =>
        spawnSync(
          'openssl',
          ['pkeyutl', '-verify', '-pubin', '-inkey', pub, '-rawin', '-in', msgFile, '-sigfile', sig],
          { encoding: 'utf8' },
        );
      const good = verify(write('msg', x.signed_message));
      expect([good.status, good.stdout.trim()]).toEqual([0, 'Signature Verified Successfully']);
      const bad = verify(write('msg.tampered', x.signed_message.replace(x.head.hash, 'f'.repeat(64))));
      expect(bad.status).not.toBe(0);
      expect(bad.stdout).not.toContain('Verified Successfully');
    });

    it('signs with one key that stays the same and is stored encrypted', async () => {
      await record('usr_k', 'thing.update', 'obj_k', 30);
      const again = (await h.http.get('/v1/audit/export').set(bearer(h.admin.token))).body as Export;
      expect(again.key_id).toBe(x.key_id);
      expect(again.public_key).toBe(x.public_key);
      expect(again.head.seq).toBe(x.head.seq + 1);
      expect(verifyOffline(again)).toBe('ok');

      const rows = await h.tdb.db.kysely.selectFrom('server_keys').selectAll().execute();
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row.purpose).toBe('audit-signing');
      expect(row.private_key_enc).not.toContain('PRIVATE KEY');
      expect(row.private_key_enc).toMatch(/^v1\./);
      // Sealed under the master key: opening it gives the private half of the exported public key.
      const priv = crypto.createPrivateKey(h.keyring.decrypt(row.private_key_enc));
      expect(crypto.createPublicKey(priv).export({ type: 'spki', format: 'pem' }).toString()).toBe(x.public_key);
    });

    it('answers 409 problem+json instead of exporting a broken chain', async () => {
      const target = (await listAll('object=team_f1&action=team.create'))[0]!.seq;
      const res = await tamperAndRestore(target, () => h.http.get('/v1/audit/export').set(bearer(h.admin.token)));
      expect(res.status).toBe(409);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toContain(`seq ${target}`);
      expect(res.body.entries).toBeUndefined();
    });

    describe('scripts/verify-audit-export.mjs', () => {
      it('accepts a real export, with and without the pinned key id', () => {
        const file = path.join(tmp, 'export.json');
        fs.writeFileSync(file, JSON.stringify(x, null, 2));
        const r = runVerifier(file);
        expect(r).toEqual({
          status: 0,
          stdout: `OK: ${x.entries.length} entries, head ${x.head.hash}, key ${x.key_id}\n`,
          stderr: '',
        });
        expect(runVerifier(file, '--key-id', x.key_id).status).toBe(0);
        expect(runVerifier(file, '--key-id', x.key_id.toUpperCase()).status).toBe(0);
      });

      it('exits 1 and says what is wrong for an altered export or another key', () => {
        const cases: Array<[string, (c: Export) => void, RegExp]> = [
          [
            'summary',
            (c) => (c.entries[2]!.summary = 'rewritten'),
            /hash does not match its content \(entry altered at seq 3\)/,
          ],
          ['dropped entry', (c) => c.entries.splice(1, 1), /seq 3: an entry is missing/],
          ['truncated', (c) => c.entries.pop(), /head\.seq is/],
          ['head', (c) => (c.head.hash = 'a'.repeat(64)), /head\.hash/],
          [
            'signed_message',
            (c) =>
              (c.signed_message = c.signed_message.replace(
                /exported_at=[^\n]+/,
                'exported_at=2000-01-01T00:00:00.000Z',
              )),
            /signed_message does not match/,
          ],
          ['signature', (c) => (c.signature = Buffer.alloc(64, 1).toString('base64')), /signature does not verify/],
          ['key_id', (c) => (c.key_id = 'b'.repeat(64)), /key_id .* is not the fingerprint/],
          ['format', (c) => (c.format = 'something/2'), /format/],
        ];
        for (const [name, alter, message] of cases) {
          const c = JSON.parse(JSON.stringify(x)) as Export;
          alter(c);
          const file = path.join(tmp, `bad-${name.replace(/\W/g, '_')}.json`);
          fs.writeFileSync(file, JSON.stringify(c));
          const r = runVerifier(file);
          expect([name, r.status, r.stdout]).toEqual([name, 1, '']);
          expect(r.stderr).toMatch(message);
        }
        const file = path.join(tmp, 'export-pinned.json');
        fs.writeFileSync(file, JSON.stringify(x));
        const pinned = runVerifier(file, '--key-id', 'c'.repeat(64));
        expect(pinned.status).toBe(1);
        expect(pinned.stderr).toContain(`not the pinned key ${'c'.repeat(64)}`);
        const notJson = path.join(tmp, 'not.json');
        fs.writeFileSync(notJson, '{');
        expect(runVerifier(notJson).status).toBe(1);
        expect(runVerifier(path.join(tmp, 'missing.json')).status).toBe(1);
      });
    });
  });

  it('exports an empty trail that still verifies', async () => {
    // A database where nothing happened yet: no harness users, so the export is built straight from the service.
    const fresh = await createHarness(dialect);
    try {
      await fresh.tdb.db.kysely.deleteFrom('audit_entries').execute();
      await fresh.tdb.db.kysely.updateTable('audit_head').set({ seq: 0, hash: GENESIS }).where('id', '=', 1).execute();
      const res = await fresh.http.get('/v1/audit/export').set(bearer(fresh.admin.token));
      expect(res.status).toBe(200);
      expect(res.body.entries).toEqual([]);
      expect(res.body.head).toEqual({ seq: 0, hash: GENESIS });
      expect(verifyOffline(res.body as Export)).toBe('ok');
      const file = path.join(tmp, 'empty.json');
      fs.writeFileSync(file, JSON.stringify(res.body));
      expect(runVerifier(file).stdout).toBe(`OK: 0 entries, head ${GENESIS}, key ${res.body.key_id}\n`);
    } finally {
      await fresh.close();
    }
  });

  it('serves the earlier edition at /audit with a Deprecation header', async () => {
    const res = await h.http.get('/audit/verify').set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.headers.deprecation).toBeDefined();
    // Paging there keeps both links: the successor and the next page (on the same edition).
    const list = await h.http.get('/audit?limit=1').set(bearer(h.admin.token));
    expect(list.status).toBe(200);
    expect(list.headers.link).toContain('</v1/audit?limit=1>; rel="successor-version"');
    expect(list.headers.link).toMatch(/<\/audit\?limit=1&cursor=[\w-]+>; rel="next"/);
  });
});
