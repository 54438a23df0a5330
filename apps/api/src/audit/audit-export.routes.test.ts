// GET /v1/audit/export streamed: a chain of thousands of entries over HTTP, verified by the offline script; entries
// appended meanwhile; and an entry altered mid-way cutting the transfer instead of completing a document.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAuditService, entryHash, recordAudit } from '@baton/core';
import type { AuditEntryRow, AuditRepo, Database } from '@baton/db';
import { DIALECTS } from '@baton/db/testing';
import { createApp } from '../app.js';
import { createLogger } from '../logger.js';
import { databaseGauges } from '../system/metrics.js';
import { bearer, createHarness, type Harness } from '../testing/harness.js';

const VERIFY_SCRIPT = fileURLToPath(new URL('../../../../scripts/verify-audit-export.mjs', import.meta.url));

/** Fills the chain fast: `n` entries hashed by the chain's own rule, inserted 500 rows per statement. */
async function appendChain(db: Database, n: number): Promise<void> {
  const head = await db.repos.audit.head();
  let prev = head.hash;
  const rows: AuditEntryRow[] = [];
  for (let seq = head.seq + 1; seq <= head.seq + n; seq++) {
    const entry = {
      seq,
      at: new Date(Date.UTC(2025, 0, 1) + seq * 1000).toISOString(),
      actor: `usr_${seq % 7}`,
      action: 'bulk.write',
      object: seq % 5 ? `obj_${seq}` : null,
      summary: `bulk entry ${seq}: "quoted", ünïcødé, \\ backslash`,
    };
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

function runVerifier(file: string) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [VERIFY_SCRIPT, file], { encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A raw GET on a listening app: the body as it arrived and whether the transfer completed. */
function rawGet(
  port: number,
  urlPath: string,
  token: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers: bearer(token) }, (res) => {
      const chunks: Buffer[] = [];
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          complete: res.complete,
        });
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', done);
      res.on('error', done);
      res.on('aborted', done);
    });
    req.on('error', reject);
  });
}

describe.each(DIALECTS)('streamed audit export on %s', (dialect) => {
  let h: Harness;
  let tmp: string;
  beforeAll(async () => {
    h = await createHarness(dialect);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-audit-stream-'));
    await appendChain(h.tdb.db, 3_500);
  });
  afterAll(async () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    await h.close();
  });

  it('streams thousands of entries as one chunked JSON document that the offline script verifies', async () => {
    const head = await h.tdb.db.repos.audit.head();
    const res = await h.http
      .get('/v1/audit/export')
      .set(bearer(h.admin.token))
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (text += c));
        r.on('end', () => cb(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="baton-audit-export.json"');
    // Streamed: no length known up front.
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-length']).toBeUndefined();
    const text = res.body as string;
    // The same bytes the one-piece JSON answer had.
    expect(JSON.stringify(JSON.parse(text))).toBe(text);
    const doc = JSON.parse(text) as { head: { seq: number; hash: string }; entries: unknown[]; key_id: string };
    expect(doc.head).toEqual(head);
    expect(doc.entries).toHaveLength(head.seq);
    const file = path.join(tmp, 'export.json');
    fs.writeFileSync(file, text);
    expect(runVerifier(file)).toEqual({
      status: 0,
      stdout: `OK: ${head.seq} entries, head ${head.hash}, key ${doc.key_id}\n`,
      stderr: '',
    });
  });

  it('answers HEAD with the headers of the export and no body, and a broken chain with 409 there too', async () => {
    const head = await h.http.head('/v1/audit/export').set(bearer(h.admin.token));
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(head.headers['content-disposition']).toBe('attachment; filename="baton-audit-export.json"');
    expect(head.text ?? '').toBe('');
    const seq = (await h.tdb.db.repos.audit.head()).seq - 5;
    const [original] = await h.tdb.db.repos.audit.range(seq - 1, 1);
    await h.tdb.db.kysely.updateTable('audit_entries').set({ summary: 'tampered' }).where('seq', '=', seq).execute();
    try {
      expect((await h.http.head('/v1/audit/export').set(bearer(h.admin.token))).status).toBe(409);
      const get = await h.http.get('/v1/audit/export').set(bearer(h.admin.token));
      expect(get.status).toBe(409);
      expect(get.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(get.body.detail).toBe(`the audit chain is broken at seq ${seq}; nothing was exported`);
    } finally {
      await h.tdb.db.kysely
        .updateTable('audit_entries')
        .set({ summary: original!.summary })
        .where('seq', '=', seq)
        .execute();
    }
  });

  it('exports a consistent snapshot while mutations keep appending entries', async () => {
    const before = await h.tdb.db.repos.audit.head();
    const clock = () => new Date();
    const writes = Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        h.tdb.db.transaction((r) =>
          recordAudit(r.audit, { actor: 'usr_w', action: 'concurrent.write', object: null, summary: `w${i}` }, clock),
        ),
      ),
    );
    const [res] = await Promise.all([h.http.get('/v1/audit/export').set(bearer(h.admin.token)), writes]);
    expect(res.status).toBe(200);
    const doc = res.body as { head: { seq: number }; entries: Array<{ seq: number }> };
    expect(doc.head.seq).toBeGreaterThanOrEqual(before.seq);
    expect(doc.head.seq).toBeLessThanOrEqual(before.seq + 40);
    expect(doc.entries.map((e) => e.seq)).toEqual(Array.from({ length: doc.head.seq }, (_, i) => i + 1));
    const file = path.join(tmp, 'concurrent.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    expect(runVerifier(file).stdout).toMatch(new RegExp(`^OK: ${doc.head.seq} entries`));
    expect((await h.tdb.db.repos.audit.head()).seq).toBe(before.seq + 40);
  });

  it('cuts the transfer when an entry is altered while it streams: the client never gets a complete document', async () => {
    // The real repository; after the check and the first batch sent, an entry further on is altered (a tamperer
    // racing the export).
    const real = h.tdb.db.repos.audit;
    const head = await real.head();
    let reads = 0;
    const racing: Pick<AuditRepo, 'list' | 'range' | 'head'> = {
      list: (...a) => real.list(...a),
      head: () => real.head(),
      async range(afterSeq, limit) {
        reads++;
        const checkReads = Math.ceil(head.seq / 1000);
        if (reads === checkReads + 2)
          await h.tdb.db.kysely
            .updateTable('audit_entries')
            .set({ summary: 'altered mid-export' })
            .where('seq', '=', head.seq - 10)
            .execute();
        return real.range(afterSeq, limit);
      },
    };
    const audit = createAuditService({
      audit: racing,
      signingKeys: h.services.signingKeys,
      clock: () => new Date(),
      authz: h.services.authz,
    });
    const { app } = createApp({
      services: { ...h.services, audit },
      ping: () => h.tdb.db.ping(),
      gauges: databaseGauges(h.tdb.db),
      logger: createLogger('error', { silent: true }),
      bodyLimitBytes: 1024 * 1024,
      trustProxy: false,
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const original = (await real.range(head.seq - 11, 1))[0]!;
    try {
      const res = await rawGet((server.address() as AddressInfo).port, '/v1/audit/export', h.admin.token);
      expect(res.status).toBe(200);
      expect(res.complete).toBe(false);
      expect(res.body.length).toBeGreaterThan(0);
      expect(() => JSON.parse(res.body)).toThrow();
      expect(res.body).not.toContain('"signature"');
      // Nothing past the altered entry's batch went out.
      expect(res.body).not.toContain('altered mid-export');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await h.tdb.db.kysely
        .updateTable('audit_entries')
        .set({ summary: original.summary })
        .where('seq', '=', original.seq)
        .execute();
    }
    expect((await h.http.get('/v1/audit/verify').set(bearer(h.admin.token))).body).toMatchObject({ ok: true });
  });
});
