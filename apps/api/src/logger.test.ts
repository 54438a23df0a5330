import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness, PASSWORD } from './testing/harness.js';
import { createLogger } from './logger.js';

describe.each(DIALECTS)('logs on %s', (dialect) => {
  let h: Harness;
  const lines: string[] = [];
  beforeAll(async () => {
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    h = await createHarness(dialect, { logStream: stream });
  });
  afterAll(() => h.close());

  it('logs one JSON line per request with request id, status and user, and never a password or token', async () => {
    const u = await h.user('operator');
    const newPassword = 'a brand new password 42';
    await h.http.put(`/v1/users/${u.id}`).set(bearer(h.admin.token)).send({ password: newPassword });
    await h.http.post('/v1/auth/login').send({ username: u.username, password: 'wrong password guess' });
    await h.http.get(`/v1/users?cursor=${encodeURIComponent('bt_secretlooking')}`).set(bearer(h.admin.token));
    await new Promise((r) => setImmediate(r));

    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const puts = records.filter((r) => r.message === 'request' && r.method === 'PUT');
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatchObject({ status: 200, user: h.admin.id, path: `/v1/users/${u.id}` });
    expect(puts[0]!.request_id).toEqual(expect.any(String));

    const all = lines.join('\n');
    for (const secret of [PASSWORD, newPassword, 'wrong password guess', u.token, h.admin.token, 'bt_secretlooking']) {
      expect(all).not.toContain(secret);
    }
  });
});

describe('logger redaction', () => {
  it('masks fields whose names suggest secrets, even if a caller passes one by mistake', async () => {
    const out: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (c: Buffer) => out.push(c.toString()));
    const logger = createLogger('info', { stream });
    logger.info('oops', {
      password: 'p1',
      api_token: 't1',
      authorization: 'Bearer x',
      private_key: 'k',
      username: 'kept',
    });
    // winston hands the line to the stream a few ticks later; the assertions stay outside the callback, so a
    // regression fails here at once instead of as a test timeout (a throw inside setImmediate never resolves).
    const written = await new Promise<string>((resolve) => setImmediate(() => resolve(out.join(''))));
    const rec = JSON.parse(written) as Record<string, unknown>;
    expect(rec).toMatchObject({
      password: '[redacted]',
      api_token: '[redacted]',
      authorization: '[redacted]',
      private_key: '[redacted]',
      username: 'kept',
    });
  });
});
