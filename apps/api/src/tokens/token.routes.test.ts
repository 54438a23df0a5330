// Personal API tokens (issue 12): create, list, get, revoke; scopes (read refuses every change, centrally), expiry,
// revocation, deletion and demotion of the owner, admins over others' tokens, last_used_at, and bad input.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, expectProblem, type Harness, PASSWORD } from '../testing/harness.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const UNKNOWN_TOKEN_ID = 'tok_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const INVENTORY = { content: 'localhost ansible_connection=local\n' };

describe.each(DIALECTS)('personal API tokens on %s', (dialect) => {
  let h: Harness;
  /** The harness's clock: tests move it forward (never back), so every other test still sees a consistent "now". */
  let now = Date.parse('2026-11-26T10:00:00.000Z');
  const logLines: string[] = [];
  let n = 0;
  const uniq = (stem: string) => `${stem}-${++n}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    const logs = new PassThrough();
    logs.on('data', (chunk: Buffer) => logLines.push(...chunk.toString().split('\n').filter(Boolean)));
    h = await createHarness(dialect, { clock: () => new Date(now), logStream: logs });
  });
  afterAll(() => h.close());

  const create = (token: string, body: unknown) =>
    h.http
      .post('/v1/tokens')
      .set(bearer(token))
      .send(body as object);

  /** A personal token of `owner` (a session token), asserted created. */
  async function personal(owner: string, body: Record<string, unknown> = {}) {
    const res = await create(owner, { name: uniq('ci'), ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; token: string; name: string; expires_at: string; scope: string };
  }

  const check = (token: string) => h.http.post('/v1/auth/check').set(bearer(token));

  it('creates a token (201, Location, secret once) that authenticates as its owner with write scope by default', async () => {
    const u = await h.user('operator');
    const res = await create(u.token, { name: '  deploy from CI  ' });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v1/tokens/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^tok_[0-9A-Z]{26}$/),
      token: expect.stringMatching(/^bt_[A-Za-z0-9_-]{43}$/),
      name: 'deploy from CI',
      scope: 'write',
      user_id: u.id,
      username: u.username,
      issued_role: 'operator',
      status: 'active',
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + 90 * DAY_MS).toISOString(),
      last_used_at: null,
    });
    const secret = res.body.token as string;
    const checked = await check(secret);
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({
      valid: true,
      user: expect.objectContaining({ id: u.id, role: 'operator' }),
      role: 'operator',
      expires_at: res.body.expires_at,
      kind: 'personal',
      scope: 'write',
      token_id: res.body.id,
      token_name: 'deploy from CI',
    });
    // A sign-in token reports its kind, without an id or name.
    const session = await check(u.token);
    expect(session.body).toMatchObject({ kind: 'session', scope: 'write' });
    expect(session.body.token_id).toBeUndefined();
    expect(session.body.token_name).toBeUndefined();
    // Stored as a hash only.
    const stored = await h.tdb.db.kysely.selectFrom('api_tokens').selectAll().where('id', '=', res.body.id).execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ kind: 'personal', scope: 'write', issued_role: 'operator' });
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('honours expires_in_days and scope, and lists only personal tokens, without their secrets', async () => {
    const u = await h.user('viewer');
    const a = await personal(u.token, { expires_in_days: 1, scope: 'read' });
    expect(a.expires_at).toBe(new Date(now + DAY_MS).toISOString());
    expect(a.scope).toBe('read');
    // Ids sort by their millisecond: let the clock tick so "newest first" is defined.
    now += 1000;
    const b = await personal(u.token, { expires_in_days: 3650 });
    expect(b.expires_at).toBe(new Date(now + 3650 * DAY_MS).toISOString());

    const list = await h.http.get('/v1/tokens').set(bearer(u.token));
    expect(list.status).toBe(200);
    // Newest first; the sign-in token the user holds is not among them.
    expect(list.body.map((t: { id: string }) => t.id)).toEqual([b.id, a.id]);
    for (const t of list.body) expect(t.token).toBeUndefined();
    const one = await h.http.get(`/v1/tokens/${a.id}`).set(bearer(u.token));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: a.id, name: a.name, scope: 'read', status: 'active' });
    expect(one.body.token).toBeUndefined();
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(a.token);
      expect(text).not.toContain(b.token);
    }
    // A sign-in token's id is not a personal token: 404 like an unknown one.
    const session = await h.tdb.db.kysely
      .selectFrom('api_tokens')
      .select('id')
      .where('user_id', '=', u.id)
      .where('kind', '=', 'session')
      .executeTakeFirstOrThrow();
    expectProblem(await h.http.get(`/v1/tokens/${session.id}`).set(bearer(u.token)), 404);
    expectProblem(await h.http.delete(`/v1/tokens/${session.id}`).set(bearer(u.token)), 404);
  });

  it('pages the list with limit and a Link to the next page', async () => {
    const u = await h.user('viewer');
    const made = [await personal(u.token), await personal(u.token), await personal(u.token)];
    const first = await h.http.get('/v1/tokens?limit=2').set(bearer(u.token));
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
    expect(next).toBeDefined();
    const second = await h.http.get(next!).set(bearer(u.token));
    expect(second.status).toBe(200);
    expect(second.headers.link).toBeUndefined();
    expect([...first.body, ...second.body].map((t: { id: string }) => t.id).sort()).toEqual(
      made.map((t) => t.id).sort(),
    );
  });

  it('audits create and revoke with actor, id and name, and never writes the secret to the audit trail or a log', async () => {
    const u = await h.user('operator');
    const t = await personal(u.token, { name: 'audited-token' });
    expect((await h.http.delete(`/v1/tokens/${t.id}`).set(bearer(u.token))).status).toBe(204);
    const audit = await h.http.get(`/v1/audit?object=${t.id}`).set(bearer(h.admin.token));
    expect(audit.status).toBe(200);
    const entries = audit.body as Array<{ action: string; actor: string; object: string; summary: string }>;
    expect(entries.map((e) => e.action).sort()).toEqual(['token.create', 'token.revoke']);
    for (const e of entries) {
      expect(e).toMatchObject({ actor: u.id, object: t.id });
      expect(e.summary).toContain('audited-token');
    }
    const exported = await h.http.get('/v1/audit/export').set(bearer(h.admin.token));
    expect(exported.status).toBe(200);
    expect(exported.text).toContain('token.create');
    expect(exported.text).toContain(t.id);
    expect(exported.text).not.toContain(t.token);
    expect(JSON.stringify(entries)).not.toContain(t.token);
    // The token was used (and refused after revocation) in requests the access log recorded.
    expect((await check(t.token)).status).toBe(401);
    await new Promise((r) => setImmediate(r));
    expect(logLines.some((l) => l.includes('/v1/auth/check'))).toBe(true);
    expect(logLines.join('\n')).not.toContain(t.token);
    expect(logLines.join('\n')).not.toContain(t.token.slice(3));
  });

  it('read scope: every GET works, every change answers 403, POST /v1/auth/check works', async () => {
    const team = await h.http
      .post('/v1/teams')
      .set(bearer(h.admin.token))
      .send({ name: uniq('team') });
    expect(team.status).toBe(201);
    // An admin's read token: nothing but the scope can refuse it.
    const ro = await personal(h.admin.token, { scope: 'read' });
    const asRead = bearer(ro.token);
    for (const path of ['/v1/runs', '/v1/users', '/v1/teams', '/v1/tokens', `/v1/teams/${team.body.id}`, '/v1/audit'])
      expect([path, (await h.http.get(path).set(asRead)).status]).toEqual([path, 200]);
    expect((await check(ro.token)).body).toMatchObject({ kind: 'personal', scope: 'read', token_id: ro.id });

    const refused = await h.http
      .post('/v1/runs')
      .set(asRead)
      .send({ playbook: '- hosts: all\n  tasks: []\n', inventory_id: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expectProblem(refused, 403);
    expect(refused.body.detail).toMatch(/scope read/);
    expectProblem(await create(ro.token, { name: 'another' }), 403);
    expectProblem(await h.http.delete(`/v1/teams/${team.body.id}`).set(asRead), 403);
    expectProblem(await h.http.put(`/v1/users/${h.admin.id}`).set(asRead).send({ email: 'x@example.com' }), 403);
    expectProblem(await h.http.delete(`/v1/tokens/${ro.id}`).set(asRead), 403);

    // Every operation that is not a GET (those of other domains too), with any body: 403 from the scope check.
    const mutations = h.operations.filter((o) => o.auth === 'user' && o.method !== 'get' && !o.allowReadScope);
    expect(mutations.length).toBeGreaterThan(20);
    for (const op of mutations) {
      const path = (op.unversioned ? op.path : `/v1${op.path}`).replace(/\{\w+\}/g, 'obj_01ARZ3NDEKTSV4RRFFQ69G5FAV');
      const res = await h.http[op.method](path).set(asRead).send({ name: 'x' });
      expect([op.operationId, res.status, res.body.detail]).toEqual([
        op.operationId,
        403,
        expect.stringMatching(/scope read/),
      ]);
    }
    // Nothing changed: the team is still there, the token still works and is still listed.
    expect((await h.http.get(`/v1/teams/${team.body.id}`).set(bearer(h.admin.token))).status).toBe(200);
    expect((await h.http.get(`/v1/tokens/${ro.id}`).set(asRead)).status).toBe(200);
    // Signing out is allowed to any token: it ends the read token itself.
    expect((await h.http.post('/v1/auth/logout').set(asRead)).status).toBe(204);
    expect((await check(ro.token)).status).toBe(401);
  });

  it('write scope: the token may do what its owner may; it cannot create tokens itself', async () => {
    const op = await h.user('operator');
    const rw = await personal(op.token, { scope: 'write' });
    const inv = await h.http
      .post('/v1/inventories')
      .set(bearer(rw.token))
      .send({ name: uniq('inv'), ...INVENTORY });
    expect(inv.status).toBe(201);
    const renamed = await h.http
      .put(`/v1/inventories/${inv.body.id}`)
      .set(bearer(rw.token))
      .send({ name: uniq('inv'), ...INVENTORY });
    expect(renamed.status).toBe(200);
    // Still bounded by the owner's role: operators cannot create users.
    expectProblem(
      await h.http
        .post('/v1/users')
        .set(bearer(rw.token))
        .send({ username: uniq('u'), password: PASSWORD, role: 'viewer' }),
      403,
    );
    const minted = await create(rw.token, { name: 'from a token' });
    expectProblem(minted, 403);
    expect(minted.body.detail).toMatch(/personal token cannot create tokens/);
    // It may list and revoke its owner's tokens, itself included.
    expect((await h.http.get('/v1/tokens').set(bearer(rw.token))).body.map((t: { id: string }) => t.id)).toContain(
      rw.id,
    );
    expect((await h.http.delete(`/v1/inventories/${inv.body.id}`).set(bearer(rw.token))).status).toBe(204);
    expect((await h.http.delete(`/v1/tokens/${rw.id}`).set(bearer(rw.token))).status).toBe(204);
    expect((await check(rw.token)).status).toBe(401);
  });

  it('revokes: 204, then 401 with the token, 404 on GET and DELETE, gone from the list', async () => {
    const u = await h.user('operator');
    const t = await personal(u.token);
    const keep = await personal(u.token);
    expect((await check(t.token)).status).toBe(200);
    const revoked = await h.http.delete(`/v1/tokens/${t.id}`).set(bearer(u.token));
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    expectProblem(await check(t.token), 401);
    expectProblem(await h.http.get('/v1/runs').set(bearer(t.token)), 401);
    expectProblem(await h.http.get(`/v1/tokens/${t.id}`).set(bearer(u.token)), 404);
    expectProblem(await h.http.delete(`/v1/tokens/${t.id}`).set(bearer(u.token)), 404);
    const list = await h.http.get('/v1/tokens').set(bearer(u.token));
    expect(list.body.map((x: { id: string }) => x.id)).toEqual([keep.id]);
    // The other token and the sign-in session are untouched.
    expect((await check(keep.token)).status).toBe(200);
    expect((await check(u.token)).status).toBe(200);
  });

  it('records last_used_at on use, at most once a minute per token', async () => {
    const u = await h.user('viewer');
    const t = await personal(u.token);
    const lastUsed = async () => (await h.http.get(`/v1/tokens/${t.id}`).set(bearer(u.token))).body.last_used_at;
    expect(await lastUsed()).toBeNull();
    const firstUse = new Date(now).toISOString();
    expect((await h.http.get('/v1/runs').set(bearer(t.token))).status).toBe(200);
    expect(await lastUsed()).toBe(firstUse);
    now += 30_000;
    expect((await h.http.get('/v1/runs').set(bearer(t.token))).status).toBe(200);
    expect(await lastUsed()).toBe(firstUse);
    now += 31_000;
    expect((await h.http.get('/v1/runs').set(bearer(t.token))).status).toBe(200);
    expect(await lastUsed()).toBe(new Date(now).toISOString());
  });

  it('stops working when the owner is deleted: 401, and the rows are gone with the user', async () => {
    const u = await h.user('operator');
    const t = await personal(u.token);
    expect((await check(t.token)).status).toBe(200);
    expect((await h.http.delete(`/v1/users/${u.id}`).set(bearer(h.admin.token))).status).toBe(204);
    expectProblem(await check(t.token), 401);
    expectProblem(await h.http.get('/v1/runs').set(bearer(t.token)), 401);
    expectProblem(await check(u.token), 401);
    const rows = await h.tdb.db.kysely.selectFrom('api_tokens').select('id').where('user_id', '=', u.id).execute();
    expect(rows).toEqual([]);
  });

  it('stops working while the owner is demoted below the role it was issued under; a new one works', async () => {
    const a = await h.user('admin');
    const adminIssued = await personal(a.token, { name: 'issued as admin' });
    expect((await check(adminIssued.token)).body).toMatchObject({ role: 'admin' });
    expect((await h.http.put(`/v1/users/${a.id}`).set(bearer(h.admin.token)).send({ role: 'operator' })).status).toBe(
      200,
    );
    expectProblem(await check(adminIssued.token), 401);
    expectProblem(await h.http.get('/v1/runs').set(bearer(adminIssued.token)), 401);
    // The sign-in session issued while admin ends the same way; a new sign-in and a new token work, as operator.
    expectProblem(await check(a.token), 401);
    const login = await h.http.post('/v1/auth/login').send({ username: a.username, password: PASSWORD });
    expect(login.status).toBe(200);
    const fresh = await personal(login.body.token, { name: 'issued as operator' });
    expect(fresh).toMatchObject({ issued_role: 'operator' });
    expect((await check(fresh.token)).body).toMatchObject({ role: 'operator', kind: 'personal' });
    const list = await h.http.get('/v1/tokens').set(bearer(login.body.token));
    expect(Object.fromEntries(list.body.map((t: { id: string; status: string }) => [t.id, t.status]))).toEqual({
      [adminIssued.id]: 'owner_demoted',
      [fresh.id]: 'active',
    });
    // A promotion never hurts a token; restoring the role restores the demoted one.
    expect((await h.http.put(`/v1/users/${a.id}`).set(bearer(h.admin.token)).send({ role: 'admin' })).status).toBe(200);
    expect((await check(fresh.token)).body).toMatchObject({ role: 'admin' });
    expect((await check(adminIssued.token)).body).toMatchObject({ role: 'admin' });
  });

  it('admins list and revoke anyone’s tokens; others get 404 on someone else’s and 403 on listing them', async () => {
    const alice = await h.user('operator');
    const bob = await h.user('viewer');
    const aliceToken = await personal(alice.token, { name: 'alice-ci' });
    const bobToken = await personal(bob.token, { name: 'bob-ci' });
    const ids = (res: { body: Array<{ id: string }> }) => res.body.map((t) => t.id);

    // Admins: one user's, everyone's; their own list holds only their own.
    const ofAlice = await h.http.get(`/v1/tokens?user=${alice.id}`).set(bearer(h.admin.token));
    expect(ofAlice.status).toBe(200);
    expect(ids(ofAlice)).toEqual([aliceToken.id]);
    expect(ofAlice.body[0]).toMatchObject({ user_id: alice.id, username: alice.username, name: 'alice-ci' });
    const all = await h.http.get('/v1/tokens?all=true&limit=500').set(bearer(h.admin.token));
    expect(ids(all)).toEqual(expect.arrayContaining([aliceToken.id, bobToken.id]));
    expect(ids(await h.http.get('/v1/tokens?limit=500').set(bearer(h.admin.token)))).not.toContain(aliceToken.id);
    expect((await h.http.get(`/v1/tokens/${bobToken.id}`).set(bearer(h.admin.token))).body).toMatchObject({
      user_id: bob.id,
    });

    // Non-admins: someone else's token is exactly as unknown as an unknown one.
    const hidden = await h.http.get(`/v1/tokens/${bobToken.id}`).set(bearer(alice.token));
    expectProblem(hidden, 404);
    const unknown = await h.http.get(`/v1/tokens/${UNKNOWN_TOKEN_ID}`).set(bearer(alice.token));
    expectProblem(unknown, 404);
    expect(hidden.body.detail.replace(bobToken.id, 'ID')).toBe(unknown.body.detail.replace(UNKNOWN_TOKEN_ID, 'ID'));
    expectProblem(await h.http.delete(`/v1/tokens/${bobToken.id}`).set(bearer(alice.token)), 404);
    expectProblem(await h.http.get(`/v1/tokens?user=${bob.id}`).set(bearer(alice.token)), 403);
    expectProblem(await h.http.get('/v1/tokens?all=true').set(bearer(alice.token)), 403);
    expect(ids(await h.http.get(`/v1/tokens?user=${alice.id}`).set(bearer(alice.token)))).toEqual([aliceToken.id]);
    expect(ids(await h.http.get('/v1/tokens?all=false').set(bearer(alice.token)))).toEqual([aliceToken.id]);
    expect((await check(bobToken.token)).status).toBe(200);

    // An admin revokes Bob's token: audited with the admin as actor.
    expect((await h.http.delete(`/v1/tokens/${bobToken.id}`).set(bearer(h.admin.token))).status).toBe(204);
    expectProblem(await check(bobToken.token), 401);
    const audit = await h.http.get(`/v1/audit?object=${bobToken.id}&action=token.revoke`).set(bearer(h.admin.token));
    expect(audit.body).toEqual([
      expect.objectContaining({
        actor: h.admin.id,
        action: 'token.revoke',
        summary: expect.stringContaining('bob-ci'),
      }),
    ]);
  });

  it('refuses bad bodies, ids and queries with 400 (or 404 for unknown ids), never storing anything', async () => {
    const u = await h.user('operator');
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', expires_in_days: 0 }, 'body.expires_in_days'],
      [{ name: 'x', expires_in_days: 3651 }, 'body.expires_in_days'],
      [{ name: 'x', expires_in_days: 1.5 }, 'body.expires_in_days'],
      [{ name: 'x', expires_in_days: '90' }, 'body.expires_in_days'],
      [{ name: 'x', expires_in_days: null }, 'body.expires_in_days'],
      [{}, 'body.name'],
      [{ name: '' }, 'body.name'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'x'.repeat(101) }, 'body.name'],
      [{ name: 'a\u0000b' }, 'body.name'],
      [{ name: 'a\ud800b' }, 'body.name'],
      [{ name: 'line\nbreak' }, 'body.name'],
      [{ name: 42 }, 'body.name'],
      [{ name: 'x', scope: 'admin' }, 'body.scope'],
      [{ name: 'x', scope: ['read'] }, 'body.scope'],
      [{ name: 'x', scopes: 'read' }, 'body'],
      [{ name: 'x', token: 'bt_chosen' }, 'body'],
    ];
    for (const [body, path] of cases) {
      const res = await create(u.token, body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expectProblem(res, 400, path);
    }
    expectProblem(await h.http.post('/v1/tokens').set(bearer(u.token)).send([]), 400);
    expectProblem(
      await h.http.post('/v1/tokens').set(bearer(u.token)).set('content-type', 'text/plain').send('name=x'),
      415,
    );
    expect((await h.http.get('/v1/tokens').set(bearer(u.token))).body).toEqual([]);

    for (const id of ['abc', 'tok_short', 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'tok_01ARZ3NDEKTSV4RRFFQ69G5FAv']) {
      expectProblem(await h.http.get(`/v1/tokens/${id}`).set(bearer(u.token)), 400, 'path.id');
      expectProblem(await h.http.delete(`/v1/tokens/${id}`).set(bearer(u.token)), 400, 'path.id');
    }
    expectProblem(await h.http.get(`/v1/tokens/${UNKNOWN_TOKEN_ID}`).set(bearer(u.token)), 404);
    expectProblem(await h.http.delete(`/v1/tokens/${UNKNOWN_TOKEN_ID}`).set(bearer(u.token)), 404);

    for (const [query, path] of [
      ['user=bob', 'query.user'],
      ['all=yes', 'query.all'],
      [`user=${u.id}&all=true`, 'query.all'],
      ['limit=0', 'query.limit'],
      ['cursor=%%%', 'query.cursor'],
      ['mine=true', 'query'],
    ] as const)
      expectProblem(await h.http.get(`/v1/tokens?${query}`).set(bearer(u.token)), 400, path);
    // An unknown user is simply one without tokens (for an admin); not a way to probe ids for others (403 first).
    expect(
      (await h.http.get('/v1/tokens?user=usr_01ARZ3NDEKTSV4RRFFQ69G5FAV').set(bearer(h.admin.token))).body,
    ).toEqual([]);
    expectProblem(await h.http.get('/v1/tokens?user=usr_01ARZ3NDEKTSV4RRFFQ69G5FAV').set(bearer(u.token)), 403);
  });

  it('needs a bearer token, and is not served without /v1 (earlier editions had no tokens)', async () => {
    expectProblem(await h.http.get('/v1/tokens'), 401);
    expectProblem(await h.http.post('/v1/tokens').send({ name: 'x' }), 401);
    expectProblem(await h.http.delete(`/v1/tokens/${UNKNOWN_TOKEN_ID}`), 401);
    expect((await h.http.get('/tokens').set(bearer(h.admin.token))).status).toBe(404);
  });
});

describe.each(DIALECTS)('personal API token expiry on %s', (dialect) => {
  let h: Harness;
  let now = Date.parse('2026-11-26T10:00:00.000Z');
  beforeAll(async () => {
    h = await createHarness(dialect, { clock: () => new Date(now) });
  });
  afterAll(() => h.close());

  it('works until expires_at, then answers 401 and is listed as expired until revoked', async () => {
    const u = await h.user('operator');
    const res = await h.http.post('/v1/tokens').set(bearer(u.token)).send({ name: 'short-lived', expires_in_days: 1 });
    expect(res.status).toBe(201);
    const t = res.body as { id: string; token: string; expires_at: string };
    expect(t.expires_at).toBe(new Date(now + DAY_MS).toISOString());

    now += DAY_MS - 1000;
    expect((await h.http.get('/v1/runs').set(bearer(t.token))).status).toBe(200);
    expect((await h.http.post('/v1/auth/check').set(bearer(t.token))).body).toMatchObject({
      expires_at: t.expires_at,
    });
    now += 1000;
    expectProblem(await h.http.get('/v1/runs').set(bearer(t.token)), 401);
    expectProblem(await h.http.post('/v1/auth/check').set(bearer(t.token)), 401);

    // The sign-in session (1 h in the harness) ended long ago too: sign in again to see the list.
    const login = await h.http.post('/v1/auth/login').send({ username: u.username, password: PASSWORD });
    expect(login.status).toBe(200);
    const list = await h.http.get('/v1/tokens').set(bearer(login.body.token));
    expect(list.body).toEqual([expect.objectContaining({ id: t.id, status: 'expired' })]);
    expect((await h.http.delete(`/v1/tokens/${t.id}`).set(bearer(login.body.token))).status).toBe(204);
    expect((await h.http.get('/v1/tokens').set(bearer(login.body.token))).body).toEqual([]);
  });
});
