import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness, PASSWORD } from '../testing/harness.js';

describe.each(DIALECTS)('auth on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { throttle: { perUsername: 3, perAddress: 1000, windowSeconds: 60 } });
  });
  afterAll(() => h.close());

  it('signs in with the right password and returns a token, its expiry and the user', async () => {
    const u = await h.user('operator');
    const res = await h.http.post('/v1/auth/login').send({ username: u.username, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^bt_/);
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
    expect(res.body.user).toMatchObject({ id: u.id, username: u.username, role: 'operator' });
    expect(res.body.user.password_hash).toBeUndefined();
  });

  it('answers 401 the same way for a wrong password and an unknown user', async () => {
    const u = await h.user('viewer');
    const wrong = await h.http.post('/v1/auth/login').send({ username: u.username, password: 'not the password' });
    const unknown = await h.http
      .post('/v1/auth/login')
      .send({ username: 'nobody-at-all', password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(wrong.body.detail).toBe(unknown.body.detail);
    expect(wrong.body.title).toBe(unknown.body.title);
  });

  it('rate limits failed sign-ins per username with 429 and Retry-After, even for the right password', async () => {
    const u = await h.user('viewer');
    for (let i = 0; i < 3; i++) {
      expect(
        (await h.http.post('/v1/auth/login').send({ username: u.username, password: 'wrong password!' })).status,
      ).toBe(401);
    }
    const locked = await h.http.post('/v1/auth/login').send({ username: u.username, password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    // Another account from the same address is unaffected.
    const other = await h.user('viewer');
    expect(other.token).toMatch(/^bt_/);
  });

  it('rejects bad login bodies with 400 and field errors', async () => {
    for (const body of [
      {},
      { username: 'a' },
      { username: 1, password: 'x' },
      { username: 'a', password: 'b', extra: true },
    ]) {
      const res = await h.http.post('/v1/auth/login').send(body);
      expect(res.status).toBe(400);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('checks a token: 200 with user, role and expiry; 401 for missing, malformed, unknown and revoked tokens', async () => {
    const u = await h.user('operator');
    const ok = await h.http.post('/v1/auth/check').set(bearer(u.token));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ valid: true, role: 'operator', user: { id: u.id } });
    expect((await h.http.post('/v1/auth/check')).status).toBe(401);
    expect((await h.http.post('/v1/auth/check').set('Authorization', 'Basic abc')).status).toBe(401);
    expect((await h.http.post('/v1/auth/check').set(bearer('bt_forged'))).status).toBe(401);
    expect((await h.http.post('/v1/auth/logout').set(bearer(u.token))).status).toBe(204);
    expect((await h.http.post('/v1/auth/check').set(bearer(u.token))).status).toBe(401);
  });

  it('rejects an expired token', async () => {
    let now = Date.now();
    const clocked = await createHarness(dialect, { clock: () => new Date(now) });
    try {
      const u = await clocked.user('viewer');
      expect((await clocked.http.post('/v1/auth/check').set(bearer(u.token))).status).toBe(200);
      now += 3601 * 1000;
      expect((await clocked.http.post('/v1/auth/check').set(bearer(u.token))).status).toBe(401);
    } finally {
      await clocked.close();
    }
  });

  it('records sign-ins in the audit trail without the password', async () => {
    const u = await h.user('viewer');
    await h.http.post('/v1/auth/login').send({ username: u.username, password: 'a wrong password 123' });
    const res = await h.http.get(`/v1/audit?object=${u.id}`).set(bearer(h.admin.token));
    expect(res.status).toBe(200);
    const actions = res.body.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['auth.login', 'auth.login_failed', 'user.create']));
    expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
    expect(JSON.stringify(res.body)).not.toContain('a wrong password 123');
  });
});
