import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import type { Response } from 'supertest';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const NEW_PASSWORD = 'a brand new passphrase 42';
let seq = 0;
const uniqueName = (stem = 'user') => `${stem}${++seq}_${Date.now().toString(36)}`;
const newUserBody = (over: Record<string, unknown> = {}) => ({
  username: uniqueName(),
  password: NEW_PASSWORD,
  role: 'viewer',
  ...over,
});

/** The path and query of a `Link: <…>; rel="next"` header, or undefined when there is none. */
function nextLink(res: Response): string | undefined {
  const link = res.headers.link as string | undefined;
  if (link === undefined) return undefined;
  const m = /^<([^>]+)>; rel="next"$/.exec(link);
  expect(m).not.toBeNull();
  return m![1];
}

describe.each(DIALECTS)('users on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(() => h.close());

  const asAdmin = () => bearer(h.admin.token);
  const check = (token: string) => h.http.post('/v1/auth/check').set(bearer(token));
  const login = (username: string, password: string) => h.http.post('/v1/auth/login').send({ username, password });
  const createUser = async (over: Record<string, unknown> = {}) => {
    const body = newUserBody(over);
    const res = await h.http.post('/v1/users').set(asAdmin()).send(body);
    expect(res.status).toBe(201);
    return { ...body, id: res.body.id as string, res };
  };

  it('lets an admin create a user: 201, Location, the user without any password, and the user can sign in', async () => {
    const u = await createUser({ role: 'operator', email: 'ops@example.com' });
    expect(u.res.headers.location).toBe(`/v1/users/${u.id}`);
    expect(u.id).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(u.res.body).toEqual({
      id: u.id,
      username: u.username,
      role: 'operator',
      email: 'ops@example.com',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const fetched = await h.http.get(u.res.headers.location as string).set(asAdmin());
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(u.res.body);
    expect(JSON.stringify(fetched.body)).not.toContain(NEW_PASSWORD);
    const signedIn = await login(u.username, NEW_PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user).toMatchObject({ id: u.id, role: 'operator' });
  });

  it('lists users newest first and pages with ?limit=1 and the Link header', async () => {
    const older = await createUser();
    const newer = await createUser();
    const all = await h.http.get('/v1/users').set(asAdmin());
    expect(all.status).toBe(200);
    const ids = all.body.map((u: { id: string }) => u.id);
    expect(ids.slice(0, 2)).toEqual([newer.id, older.id]);
    expect(ids).toContain(h.admin.id);
    expect(all.headers.link).toBeUndefined();
    for (const u of all.body)
      expect(Object.keys(u).sort()).toEqual(['created_at', 'email', 'id', 'role', 'updated_at', 'username']);

    const first = await h.http.get('/v1/users?limit=1').set(asAdmin());
    expect(first.status).toBe(200);
    expect(first.body.map((u: { id: string }) => u.id)).toEqual([newer.id]);
    const link = nextLink(first);
    expect(link).toMatch(/^\/v1\/users\?limit=1&cursor=/);
    const second = await h.http.get(link!).set(asAdmin());
    expect(second.status).toBe(200);
    expect(second.body.map((u: { id: string }) => u.id)).toEqual([older.id]);

    // Walking every page yields the whole list once, in the same order, and ends without a Link.
    const walked: string[] = [];
    let url: string | undefined = '/v1/users?limit=2';
    while (url !== undefined) {
      const page: Response = await h.http.get(url).set(asAdmin());
      expect(page.status).toBe(200);
      expect(page.body.length).toBeLessThanOrEqual(2);
      walked.push(...page.body.map((u: { id: string }) => u.id));
      url = nextLink(page);
    }
    expect(walked).toEqual(ids);
  });

  it('shows e-mail addresses to admins only', async () => {
    const u = await createUser({ email: 'secret@example.com' });
    const op = await h.user('operator');
    const listed = await h.http.get('/v1/users').set(bearer(op.token));
    expect(listed.status).toBe(200);
    expect(listed.body.find((x: { id: string }) => x.id === u.id)).toMatchObject({ id: u.id, email: null });
    expect(JSON.stringify(listed.body)).not.toContain('secret@example.com');
    const one = await h.http.get(`/v1/users/${u.id}`).set(bearer(op.token));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: u.id, username: u.username, email: null });
    const asAdminOne = await h.http.get(`/v1/users/${u.id}`).set(asAdmin());
    expect(asAdminOne.body.email).toBe('secret@example.com');
  });

  it('lets any signed-in user list and read users, and nobody without a token', async () => {
    const viewer = await h.user('viewer');
    expect((await h.http.get('/v1/users').set(bearer(viewer.token))).status).toBe(200);
    expect((await h.http.get(`/v1/users/${h.admin.id}`).set(bearer(viewer.token))).status).toBe(200);
    for (const res of [
      await h.http.get('/v1/users'),
      await h.http.get(`/v1/users/${h.admin.id}`),
      await h.http.post('/v1/users').send(newUserBody()),
    ]) {
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    expectProblem(await h.http.get('/v1/users').set(bearer('bt_not_a_real_token')), 401);
  });

  it.each(['operator', 'viewer'] as const)(
    'refuses a %s creating, changing or deleting users with 403',
    async (role) => {
      const caller = await h.user(role);
      const target = await createUser({ role: 'viewer' });
      const body = newUserBody();
      expectProblem(await h.http.post('/v1/users').set(bearer(caller.token)).send(body), 403);
      expectProblem(await h.http.put(`/v1/users/${target.id}`).set(bearer(caller.token)).send({ role: 'admin' }), 403);
      expectProblem(await h.http.put(`/v1/users/${caller.id}`).set(bearer(caller.token)).send({ role: 'admin' }), 403);
      expectProblem(await h.http.delete(`/v1/users/${target.id}`).set(bearer(caller.token)), 403);
      // Nothing changed.
      expect(await h.tdb.db.repos.users.findByUsername(body.username)).toBeUndefined();
      expect((await h.http.get(`/v1/users/${target.id}`).set(asAdmin())).body.role).toBe('viewer');
      expect((await check(caller.token)).body.role).toBe(role);
    },
  );

  it.each<[string, Record<string, unknown>, string]>([
    ['a missing username', { password: NEW_PASSWORD, role: 'viewer' }, 'body.username'],
    ['a missing password', { username: 'nopass', role: 'viewer' }, 'body.password'],
    ['a missing role', { username: 'norole', password: NEW_PASSWORD }, 'body.role'],
    ['a numeric username', { username: 42, password: NEW_PASSWORD, role: 'viewer' }, 'body.username'],
    [
      'a password that is not a string',
      { username: 'numpass', password: 123456789012345, role: 'viewer' },
      'body.password',
    ],
    ['an 11-character password', { username: 'shortpass', password: 'x'.repeat(11), role: 'viewer' }, 'body.password'],
    ['an unknown role', { username: 'badrole', password: NEW_PASSWORD, role: 'superuser' }, 'body.role'],
    [
      'a bad e-mail',
      { username: 'bademail', password: NEW_PASSWORD, role: 'viewer', email: 'not-an-email' },
      'body.email',
    ],
    ['a username with spaces', { username: 'has space', password: NEW_PASSWORD, role: 'viewer' }, 'body.username'],
    ['an empty username', { username: '', password: NEW_PASSWORD, role: 'viewer' }, 'body.username'],
    ['an unknown field', { username: 'extra', password: NEW_PASSWORD, role: 'viewer', is_admin: true }, 'body'],
  ])('rejects creating a user with %s: 400 naming the field', async (_name, body, path) => {
    const res = await h.http.post('/v1/users').set(asAdmin()).send(body);
    expectProblem(res, 400, path);
    if (typeof body.username === 'string')
      expect(await h.tdb.db.repos.users.findByUsername(body.username)).toBeUndefined();
  });

  it('accepts a password of exactly 12 characters', async () => {
    const u = await createUser({ password: 'twelve chars' });
    expect((await login(u.username, 'twelve chars')).status).toBe(200);
  });

  it('rejects a body that is not a JSON object: 400 for an array or broken JSON, 415 for another media type', async () => {
    expectProblem(await h.http.post('/v1/users').set(asAdmin()).send([newUserBody()]), 400);
    expectProblem(
      await h.http.post('/v1/users').set(asAdmin()).set('Content-Type', 'application/json').send('{"username": '),
      400,
    );
    expectProblem(
      await h.http
        .post('/v1/users')
        .set(asAdmin())
        .set('Content-Type', 'text/plain')
        .send(JSON.stringify(newUserBody())),
      415,
    );
    expectProblem(await h.http.post('/v1/users').set(asAdmin()), 400);
  });

  it('answers 409 for a duplicate username and keeps the first account', async () => {
    const u = await createUser({ role: 'operator' });
    const dup = await h.http
      .post('/v1/users')
      .set(asAdmin())
      .send({ username: u.username, password: 'another password!!', role: 'admin' });
    expectProblem(dup, 409);
    expect(dup.body.detail).toContain(u.username);
    expect((await h.http.get(`/v1/users/${u.id}`).set(asAdmin())).body.role).toBe('operator');
    expect((await login(u.username, NEW_PASSWORD)).status).toBe(200);
  });

  it('answers 404 for an unknown user id', async () => {
    const unknown = 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    expectProblem(await h.http.get(`/v1/users/${unknown}`).set(asAdmin()), 404);
    expectProblem(await h.http.put(`/v1/users/${unknown}`).set(asAdmin()).send({ role: 'operator' }), 404);
    expectProblem(await h.http.delete(`/v1/users/${unknown}`).set(asAdmin()), 404);
  });

  it.each([
    ['too long', 'x'.repeat(65)],
    ['not an id', 'root'],
    ['the id of another kind', 'team_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ['a NUL byte', '%00'],
    ['an emoji', '%F0%9F%98%80'],
  ])('answers 400 naming path.id for a user id that is %s, on every route', async (_what, id) => {
    expectProblem(await h.http.get(`/v1/users/${id}`).set(asAdmin()), 400, 'path.id');
    expectProblem(await h.http.put(`/v1/users/${id}`).set(asAdmin()).send({ role: 'operator' }), 400, 'path.id');
    expectProblem(await h.http.delete(`/v1/users/${id}`).set(asAdmin()), 400, 'path.id');
  });

  it.each([
    ['an invalid cursor', '?cursor=!!!', 'cursor'],
    ['a limit of 0', '?limit=0', 'query.limit'],
    ['a limit over 500', '?limit=501', 'query.limit'],
    ['a limit that is not a number', '?limit=many', 'query.limit'],
    ['an unknown query parameter', '?role=admin', 'query'],
  ])('rejects listing with %s: 400', async (_name, qs, pathEnd) => {
    const res = await h.http.get(`/v1/users${qs}`).set(asAdmin());
    expectProblem(res, 400);
    expect(res.body.errors.map((e: { path: string }) => e.path).some((p: string) => p.endsWith(pathEnd))).toBe(true);
  });

  it.each<[string, unknown, string]>([
    ['an empty body', {}, 'body'],
    ['a short password', { password: 'short' }, 'body.password'],
    ['an unknown role', { role: 'root' }, 'body.role'],
    ['a bad e-mail', { email: 'nope' }, 'body.email'],
    ['an unknown field', { username: 'renamed' }, 'body'],
    ['a role of the wrong type', { role: 1 }, 'body.role'],
  ])('rejects changing a user with %s: 400', async (_name, body, path) => {
    const u = await createUser({ role: 'viewer' });
    expectProblem(
      await h.http
        .put(`/v1/users/${u.id}`)
        .set(asAdmin())
        .send(body as object),
      400,
      path,
    );
    const after = await h.http.get(`/v1/users/${u.id}`).set(asAdmin());
    expect(after.body).toMatchObject({ username: u.username, role: 'viewer' });
  });

  it('changes role and e-mail, and clears the e-mail with null', async () => {
    const u = await createUser({ role: 'viewer' });
    const res = await h.http
      .put(`/v1/users/${u.id}`)
      .set(asAdmin())
      .send({ role: 'operator', email: 'new@example.com' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: u.id, role: 'operator', email: 'new@example.com' });
    expect(res.body.password_hash).toBeUndefined();
    expect((await h.http.get(`/v1/users/${u.id}`).set(asAdmin())).body).toMatchObject({
      role: 'operator',
      email: 'new@example.com',
    });
    const cleared = await h.http.put(`/v1/users/${u.id}`).set(asAdmin()).send({ email: null });
    expect(cleared.status).toBe(200);
    expect((await h.http.get(`/v1/users/${u.id}`).set(asAdmin())).body).toMatchObject({
      role: 'operator',
      email: null,
    });
  });

  it('reflects a role change in /v1/auth/check and in what the user may do, at once', async () => {
    const u = await h.user('viewer');
    expect((await check(u.token)).body.role).toBe('viewer');
    expectProblem(await h.http.get('/v1/audit').set(bearer(u.token)), 403);
    expect((await h.http.put(`/v1/users/${u.id}`).set(asAdmin()).send({ role: 'admin' })).status).toBe(200);
    expect((await check(u.token)).body).toMatchObject({
      valid: true,
      role: 'admin',
      user: { id: u.id, role: 'admin' },
    });
    expect((await h.http.get('/v1/audit').set(bearer(u.token))).status).toBe(200);
    expect((await h.http.put(`/v1/users/${u.id}`).set(asAdmin()).send({ role: 'viewer' })).status).toBe(200);
    expect((await check(u.token)).body.role).toBe('viewer');
    expectProblem(await h.http.get('/v1/audit').set(bearer(u.token)), 403);
  });

  it('deletes a user: 204, gone from GET and the list, their token fails at once, they cannot sign in', async () => {
    const u = await h.user('operator');
    expect((await check(u.token)).status).toBe(200);
    // They own a team (so hold a manage grant) and are a member of another.
    const own = await h.http
      .post('/v1/teams')
      .set(bearer(u.token))
      .send({ name: uniqueName('team') });
    expect(own.status).toBe(201);
    const other = await h.http
      .post('/v1/teams')
      .set(asAdmin())
      .send({ name: uniqueName('team') });
    expect(
      (await h.http.post(`/v1/teams/${other.body.id}/members`).set(asAdmin()).send({ user_id: u.id })).status,
    ).toBe(201);
    const del = await h.http.delete(`/v1/users/${u.id}`).set(asAdmin());
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await check(u.token), 401);
    expectProblem(await h.http.get('/v1/users').set(bearer(u.token)), 401);
    expectProblem(await h.http.get(`/v1/users/${u.id}`).set(asAdmin()), 404);
    const list = await h.http.get('/v1/users?limit=500').set(asAdmin());
    expect(list.body.map((x: { id: string }) => x.id)).not.toContain(u.id);
    expectProblem(await login(u.username, u.password), 401);
    expectProblem(await h.http.delete(`/v1/users/${u.id}`).set(asAdmin()), 404);
    // Their grants and memberships went with them; the teams stay.
    expect((await h.http.get(`/v1/grants?subject=${u.id}`).set(asAdmin())).body).toEqual([]);
    expect((await h.http.get(`/v1/teams/${other.body.id}/members`).set(asAdmin())).body).toEqual([]);
    expect((await h.http.get(`/v1/teams/${own.body.id}`).set(asAdmin())).status).toBe(200);
  });

  it("ends every session of a user whose password an admin changes; the new password works, the old one doesn't", async () => {
    const u = await h.user('operator');
    const second = await login(u.username, u.password);
    expect(second.status).toBe(200);
    const res = await h.http.put(`/v1/users/${u.id}`).set(asAdmin()).send({ password: NEW_PASSWORD });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain(NEW_PASSWORD);
    expectProblem(await check(u.token), 401);
    expectProblem(await check(second.body.token as string), 401);
    expect((await check(h.admin.token)).status).toBe(200);
    expectProblem(await login(u.username, u.password), 401);
    expect((await login(u.username, NEW_PASSWORD)).status).toBe(200);
  });

  it("keeps an admin's own session when they change their own password, ending their other sessions", async () => {
    const a = await h.user('admin');
    const other = await login(a.username, a.password);
    expect(other.status).toBe(200);
    const res = await h.http.put(`/v1/users/${a.id}`).set(bearer(a.token)).send({ password: NEW_PASSWORD });
    expect(res.status).toBe(200);
    expect((await check(a.token)).status).toBe(200);
    expectProblem(await check(other.body.token as string), 401);
    expect((await login(a.username, NEW_PASSWORD)).status).toBe(200);
  });

  it('records every user mutation in the audit trail with its action and without any password', async () => {
    const u = await createUser({ role: 'viewer', email: 'audited@example.com' });
    expect(
      (
        await h.http
          .put(`/v1/users/${u.id}`)
          .set(asAdmin())
          .send({ role: 'operator', password: 'the second secret 99' })
      ).status,
    ).toBe(200);
    const hash = (await h.tdb.db.repos.users.findById(u.id))!.password_hash;
    expect((await h.http.delete(`/v1/users/${u.id}`).set(asAdmin())).status).toBe(204);
    const res = await h.http.get(`/v1/audit?object=${u.id}`).set(asAdmin());
    expect(res.status).toBe(200);
    const entries = res.body as Array<{ action: string; actor: string; object: string }>;
    expect(entries.map((e) => e.action)).toEqual(['user.delete', 'user.update', 'user.create']);
    for (const e of entries) expect(e).toMatchObject({ actor: h.admin.id, object: u.id });
    const text = JSON.stringify(res.body);
    for (const secret of [NEW_PASSWORD, 'the second secret 99', hash]) expect(text).not.toContain(secret);
    const updated = entries.find((e) => e.action === 'user.update') as { summary?: string } | undefined;
    expect(updated?.summary).toContain('viewer → operator');
  });

  it('records nothing for a refused or invalid mutation', async () => {
    const before = (await h.tdb.db.repos.audit.head()).seq;
    const op = await h.user('operator'); // user.create + auth.login
    const afterSetup = (await h.tdb.db.repos.audit.head()).seq;
    expect(afterSetup).toBe(before + 2);
    await h.http.post('/v1/users').set(bearer(op.token)).send(newUserBody());
    await h.http.post('/v1/users').set(asAdmin()).send({ username: 'x', password: 'short', role: 'viewer' });
    await h.http.delete(`/v1/users/${op.id}`).set(bearer(op.token));
    expect((await h.tdb.db.repos.audit.head()).seq).toBe(afterSetup);
  });
});

describe.each(DIALECTS)('the last admin on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect); // `root` is the only admin
  });
  afterAll(() => h.close());

  const adminCount = async () => (await h.tdb.db.repos.users.countByRole()).admin ?? 0;

  it('can be neither demoted nor deleted (409), by themselves', async () => {
    expect(await adminCount()).toBe(1);
    expectProblem(
      await h.http.put(`/v1/users/${h.admin.id}`).set(bearer(h.admin.token)).send({ role: 'operator' }),
      409,
    );
    expectProblem(await h.http.delete(`/v1/users/${h.admin.id}`).set(bearer(h.admin.token)), 409);
    // Setting the role it already has, or changing only the e-mail, is no demotion.
    expect(
      (
        await h.http
          .put(`/v1/users/${h.admin.id}`)
          .set(bearer(h.admin.token))
          .send({ role: 'admin', email: 'root@example.com' })
      ).status,
    ).toBe(200);
    expect((await h.http.post('/v1/auth/check').set(bearer(h.admin.token))).body.role).toBe('admin');
  });

  it('can be demoted while another admin remains, after which the other is the last', async () => {
    const second = await h.user('admin');
    expect(await adminCount()).toBe(2);
    expect(
      (await h.http.put(`/v1/users/${h.admin.id}`).set(bearer(second.token)).send({ role: 'operator' })).status,
    ).toBe(200);
    expect(await adminCount()).toBe(1);
    expectProblem(await h.http.put(`/v1/users/${second.id}`).set(bearer(second.token)).send({ role: 'viewer' }), 409);
    expectProblem(await h.http.delete(`/v1/users/${second.id}`).set(bearer(second.token)), 409);
    // A non-last admin can be deleted.
    const third = await h.user('admin');
    expect((await h.http.delete(`/v1/users/${third.id}`).set(bearer(second.token))).status).toBe(204);
    expect(await adminCount()).toBe(1);
  });

  it.each([
    [
      'demoting',
      (h: Harness, by: string, id: string) => h.http.put(`/v1/users/${id}`).set(bearer(by)).send({ role: 'viewer' }),
      200,
    ],
    ['deleting', (h: Harness, by: string, id: string) => h.http.delete(`/v1/users/${id}`).set(bearer(by)), 204],
  ] as const)(
    'survives the last two admins %s each other at the same moment: exactly one succeeds',
    async (_name, act, okStatus) => {
      for (let round = 0; round < 5; round++) {
        const [a, b] = [await h.user('admin'), await h.user('admin')];
        // Leave exactly these two admins.
        for (const u of (await h.tdb.db.repos.users.list({ limit: 500 })).filter(
          (x) => x.role === 'admin' && x.id !== a.id && x.id !== b.id,
        )) {
          expect((await h.http.put(`/v1/users/${u.id}`).set(bearer(a.token)).send({ role: 'viewer' })).status).toBe(
            200,
          );
        }
        expect(await adminCount()).toBe(2);
        const statuses = (await Promise.all([act(h, a.token, b.id), act(h, b.token, a.id)]))
          .map((r) => r.status)
          .sort();
        // The loser is refused: 409 (last admin), or 403/401 when the winner committed before the loser signed in.
        expect(statuses[0]).toBe(okStatus);
        expect([401, 403, 409]).toContain(statuses[1]);
        expect(await adminCount()).toBe(1);
      }
    },
  );
});
