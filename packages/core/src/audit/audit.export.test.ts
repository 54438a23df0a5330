// The streamed export: bounded keyset batches read lazily, a snapshot at the head read when it began, and an entry
// altered mid-way never yielding a complete document.
import crypto from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { AuditExport } from '@baton/contracts';
import { type AuditEntryRow, type AuditRepo, type Database, GENESIS_HASH } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { ConflictError } from '../common/errors.js';
import { generateMasterKey, Keyring } from '../crypto/secret-box.js';
import { createSigningKeyStore } from '../keys/signing-key.js';
import { entryHash, recordAudit } from './audit.chain.js';
import { AUDIT_BATCH, collectAuditExport, createAuditService, exportSignedMessage } from './audit.service.js';

const ADMIN: Principal = { id: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', username: 'admin', role: 'admin' };

function tickingClock(start = Date.parse('2025-03-01T12:00:00.000Z')) {
  let t = start;
  return () => new Date((t += 1000));
}

/** Fills the chain fast: `n` entries hashed by the chain's own rule, inserted 500 rows per statement. */
async function appendChain(db: Database, n: number): Promise<void> {
  const head = await db.repos.audit.head();
  const start = Date.parse('2025-03-01T12:00:00.000Z');
  let prev = head.hash;
  const rows: AuditEntryRow[] = [];
  for (let seq = head.seq + 1; seq <= head.seq + n; seq++) {
    const e = { seq, at: new Date(start + seq * 1000).toISOString(), actor: 'usr_b', action: 'bulk.write' };
    const entry = { ...e, object: seq % 4 ? `obj_${seq}` : null, summary: `bulk ${seq} — ünïcødé "q"` };
    const hash = entryHash(prev, entry);
    rows.push({ ...entry, prev_hash: prev, hash });
    prev = hash;
  }
  await db.kysely.transaction().execute(async (tx) => {
    for (let i = 0; i < rows.length; i += 500)
      await tx
        .insertInto('audit_entries')
        .values(rows.slice(i, i + 500))
        .execute();
    await tx
      .updateTable('audit_head')
      .set({ seq: head.seq + n, hash: prev })
      .where('id', '=', 1)
      .execute();
  });
}

/** Appends `n` entries the way every mutation does, one transaction each. */
async function appendRecorded(db: Database, n: number, tag: string): Promise<void> {
  const clock = tickingClock();
  for (let i = 1; i <= n; i++)
    await db.transaction((r) =>
      recordAudit(r.audit, { actor: 'usr_w', action: `${tag}.write`, object: null, summary: `${tag} ${i}` }, clock),
    );
}

/** The real repository, with every `range` call's limit written down. */
function countingRepo(db: Database): { repo: Pick<AuditRepo, 'list' | 'range' | 'head'>; limits: number[] } {
  const limits: number[] = [];
  const real = db.repos.audit;
  return {
    limits,
    repo: {
      list: (...a) => real.list(...a),
      head: () => real.head(),
      range: (afterSeq, limit) => {
        limits.push(limit);
        return real.range(afterSeq, limit);
      },
    },
  };
}

function service(db: Database, audit: Pick<AuditRepo, 'list' | 'range' | 'head'> = db.repos.audit) {
  const clock = tickingClock(Date.parse('2026-01-01T00:00:00.000Z'));
  return createAuditService({
    audit,
    signingKeys: createSigningKeyStore({
      serverKeys: db.repos.serverKeys,
      keyring: new Keyring(generateMasterKey()),
      clock,
    }),
    clock,
    authz: createAuthorizer({ grants: db.repos.grants, teams: db.repos.teams }),
  });
}

/** What a third party checks, by the README's rule; 'ok' or the first problem. */
function verifyOffline(x: AuditExport): string {
  let prev = GENESIS_HASH;
  for (const [i, e] of x.entries.entries()) {
    if (e.seq !== i + 1 || e.prev_hash !== prev || entryHash(prev, e) !== e.hash) return `entry ${i + 1}`;
    prev = e.hash;
  }
  if (x.head.seq !== x.entries.length || x.head.hash !== prev) return 'head';
  if (x.signed_message !== exportSignedMessage({ exported_at: x.exported_at, entries: x.entries.length, head: x.head }))
    return 'signed_message';
  if (!crypto.verify(null, Buffer.from(x.signed_message), x.public_key, Buffer.from(x.signature, 'base64')))
    return 'signature';
  return 'ok';
}

describe.each(DIALECTS)('streamed audit export on %s', (dialect) => {
  let tdb: TestDatabase;
  beforeEach(async () => {
    tdb = await createTestDatabase(dialect);
  });
  afterEach(() => tdb.drop());

  it('checks the chain in bounded batches first, then reads it again one batch per piece as the pieces are taken', async () => {
    await appendChain(tdb.db, 2_500);
    const { repo, limits } = countingRepo(tdb.db);
    const exported = await service(tdb.db, repo).export(ADMIN);
    // The check before anything is sent: three batches, none larger than AUDIT_BATCH.
    expect(AUDIT_BATCH).toBe(1000);
    expect(limits).toEqual([1000, 1000, 500]);

    const pieces: string[] = [];
    const readsAtPiece: number[] = [];
    for await (const piece of exported.text) {
      pieces.push(piece);
      readsAtPiece.push(limits.length);
    }
    // Opening fields (no read), one piece per batch read just before it, then the signed trailer (no read).
    expect(readsAtPiece).toEqual([3, 4, 5, 6, 6]);
    expect(limits).toEqual([1000, 1000, 500, 1000, 1000, 500]);
    const text = pieces.join('');
    // Exactly what JSON.stringify makes of the document: byte for byte what the unstreamed export sent.
    expect(JSON.stringify(JSON.parse(text))).toBe(text);
    const doc = JSON.parse(text) as AuditExport;
    expect(Object.keys(doc)).toEqual([
      'format',
      'exported_at',
      'head',
      'entries',
      'key_id',
      'public_key',
      'signed_message',
      'signature',
    ]);
    expect(doc.entries).toHaveLength(2_500);
    expect(doc.head).toEqual(exported.head);
    expect(doc.exported_at).toBe(exported.exported_at);
    expect(verifyOffline(doc)).toBe('ok');
  });

  it('holds exactly the entries up to the head read when it began, whatever is appended while it streams', async () => {
    await appendChain(tdb.db, 1_500);
    const svc = service(tdb.db);
    const before = await tdb.db.repos.audit.head();
    const exported = await svc.export(ADMIN);
    const pieces: string[] = [];
    for await (const piece of exported.text) {
      pieces.push(piece);
      // Between the first batch and the second, and again before the trailer.
      if (pieces.length === 2 || pieces.length === 3) await appendRecorded(tdb.db, 20, `during${pieces.length}`);
    }
    const doc = JSON.parse(pieces.join('')) as AuditExport;
    expect(doc.head).toEqual(before);
    expect(doc.entries.map((e) => e.seq)).toEqual(Array.from({ length: 1_500 }, (_, i) => i + 1));
    expect(verifyOffline(doc)).toBe('ok');
    // The next export has them.
    const next = await collectAuditExport(await svc.export(ADMIN));
    expect(next.entries).toHaveLength(1_540);
    expect(verifyOffline(next)).toBe('ok');
  });

  it('refuses a broken chain before the first piece, and stops mid-way when an entry is altered during the export', async () => {
    await appendChain(tdb.db, 2_500);
    const svc = service(tdb.db);
    const tamper = (seq: number, summary: string) =>
      tdb.db.kysely.updateTable('audit_entries').set({ summary }).where('seq', '=', seq).execute();

    await tamper(1_700, 'edited before');
    await expect(svc.export(ADMIN)).rejects.toThrow(
      new ConflictError('the audit chain is broken at seq 1700; nothing was exported'),
    );
    await tamper(1_700, 'bulk 1700 — ünïcødé "q"');

    const exported = await svc.export(ADMIN);
    const pieces: string[] = [];
    const reading = (async () => {
      for await (const piece of exported.text) {
        pieces.push(piece);
        if (pieces.length === 2) await tamper(2_100, 'edited during');
      }
    })();
    await expect(reading).rejects.toThrow(
      new ConflictError('the audit chain changed at seq 2100 while it was being exported; the export is incomplete'),
    );
    // The opening and the first two batches went out; the batch holding the altered entry and the trailer did not.
    expect(pieces).toHaveLength(3);
    expect(() => JSON.parse(pieces.join(''))).toThrow();
    expect(pieces.join('')).not.toContain('edited during');
    expect(pieces.join('')).not.toContain('"signature"');
  });

  it('exports an empty chain as a complete document', async () => {
    const exported = await service(tdb.db).export(ADMIN);
    const pieces: string[] = [];
    for await (const piece of exported.text) pieces.push(piece);
    const doc = JSON.parse(pieces.join('')) as AuditExport;
    expect(doc.entries).toEqual([]);
    expect(doc.head).toEqual({ seq: 0, hash: GENESIS_HASH });
    expect(verifyOffline(doc)).toBe('ok');
  });
});
