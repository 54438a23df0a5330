import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openDatabase } from '@baton/db';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import supertest from 'supertest';
import { createApp } from '../app.js';
import { loadConfig } from '../config/config.js';
import { createLogger } from '../logger.js';
import { serve } from '../server.js';
import { databaseGauges } from '../system/metrics.js';
import type { OidcSettings } from '../config/sso-config.js';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';
import { createServices } from '../wiring.js';
import { claimAt, claimValues } from './oidc.js';
import {
  closeServer,
  listenOnLoopback,
  startTestIssuer,
  TestBrowser,
  type TestIssuer,
} from '../testing/oidc-issuer.js';

describe('the groups claim', () => {
  it('is read as a list of strings, from a top-level claim or a dotted path', () => {
    const claims = { groups: ['a', 1, 'b'], role: 'ops', 'x.y': ['flat'], realm_access: { roles: ['admin'] }, n: null };
    expect(claimValues(claimAt(claims, 'groups'))).toEqual(['a', 'b']);
    expect(claimValues(claimAt(claims, 'role'))).toEqual(['ops']);
    expect(claimValues(claimAt(claims, 'x.y'))).toEqual(['flat']);
    expect(claimValues(claimAt(claims, 'realm_access.roles'))).toEqual(['admin']);
    expect(claimValues(claimAt(claims, 'realm_access.missing'))).toEqual([]);
    expect(claimValues(claimAt(claims, 'n.x'))).toEqual([]);
    expect(claimValues(claimAt(claims, '__proto__.constructor'))).toEqual([]);
    expect(claimValues(claimAt(claims, 'absent'))).toEqual([]);
  });
});

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const JSON_ACCEPT = { accept: 'application/json' };

describe.each(DIALECTS)('OpenID Connect sign-in on %s', (dialect) => {
  let h: Harness;
  let idp: TestIssuer;
  let appServer: http.Server;
  let base: string;
  let redirectUri: string;
  let clockOffsetMs = 0;
  let oidcSettings: OidcSettings;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
  /** Every secret a flow handled (provider codes, states, one-time codes, tokens): none may reach the log. */
  const secrets: string[] = [];

  beforeAll(async () => {
    // The app listens first, so the provider can register its callback URL; the handler is the harness's app.
    let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
    appServer = http.createServer((req, res) => handler(req, res));
    const port = await listenOnLoopback(appServer);
    base = `http://127.0.0.1:${port}`;
    redirectUri = `${base}/auth/oidc/callback`;
    idp = await startTestIssuer(redirectUri);
    oidcSettings = {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      redirectUrl: redirectUri,
      scopes: ['openid', 'profile', 'email', 'groups'],
      roleClaim: 'groups',
    };
    h = await createHarness(dialect, {
      oidc: oidcSettings,
      sso: {
        roleMap: [
          { group: 'ops-admins', role: 'admin' },
          { group: 'ops', role: 'operator' },
        ],
        teamSync: true,
        codeTtlSeconds: 60,
      },
      clock: () => new Date(Date.now() + clockOffsetMs),
      logStream: logs,
    });
    handler = h.app;
  }, 60_000);
  afterAll(async () => {
    await closeServer(appServer);
    await idp.close();
    await h.close();
  });

  /** GET /auth/oidc/login on the real port: the provider's authorize URL. */
  const startLogin = async (browser: TestBrowser) => {
    const res = await browser.request(`${base}/auth/oidc/login`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${idp.issuer}/`)).toBe(true);
    const state = new URL(location).searchParams.get('state')!;
    secrets.push(state);
    return { location, state };
  };

  /** A browser that signs in at the provider as `sub`: the callback URL the provider sends it to. */
  const reachCallback = async (sub: string, browser = new TestBrowser()) => {
    const { location, state } = await startLogin(browser);
    const callback = await browser.signInAtProvider(location, sub, redirectUri);
    const code = new URL(callback).searchParams.get('code');
    expect(code).toBeTruthy();
    secrets.push(code!);
    return { callback, state, browser };
  };

  const callbackAs = async (browser: TestBrowser, callback: string, accept: 'browser' | 'api') =>
    browser.request(callback, accept === 'api' ? { headers: JSON_ACCEPT } : {});

  /** The code of a browser sign-in's landing URL (`/ui/#sso_code=…`). */
  const landingCode = (res: globalThis.Response) => {
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const m = /^\/ui\/#sso_code=([A-Za-z0-9_-]+)$/.exec(location);
    expect(m).not.toBeNull();
    secrets.push(m![1]!);
    return m![1]!;
  };
  const landingError = (res: globalThis.Response) => {
    expect(res.status).toBe(302);
    return /^\/ui\/#sso_error=([a-z_]+)$/.exec(res.headers.get('location')!)?.[1];
  };

  const exchange = (code: unknown) => h.http.post('/v1/auth/exchange').send({ code });

  /** A full browser sign-in: the exchanged token answer. */
  const browserSignIn = async (sub: string) => {
    const { callback, browser } = await reachCallback(sub);
    const code = landingCode(await callbackAs(browser, callback, 'browser'));
    const res = await exchange(code);
    expect(res.status).toBe(200);
    secrets.push(res.body.token);
    return res.body as { token: string; expires_at: string; user: { id: string; username: string; role: string } };
  };

  const auditActions = async (object: string) =>
    (
      await h.tdb.db.kysely
        .selectFrom('audit_entries')
        .selectAll()
        .where('object', '=', object)
        .orderBy('seq')
        .execute()
    ).map((e) => ({ action: e.action, summary: e.summary, actor: e.actor }));

  it('redirects to the provider with state, nonce and a PKCE S256 challenge kept server-side', async () => {
    const { location, state } = await startLogin(new TestBrowser());
    const q = new URL(location).searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(idp.clientId);
    expect(q.get('redirect_uri')).toBe(redirectUri);
    expect(q.get('scope')!.split(' ').sort()).toEqual(['email', 'groups', 'openid', 'profile']);
    expect(q.get('code_challenge_method')).toBe('S256');
    const challenge = q.get('code_challenge')!;
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const nonce = q.get('nonce')!;
    expect(nonce.length).toBeGreaterThanOrEqual(16);
    // The handshake sits in sso_states under the hash of the state, with the nonce and the verifier of the challenge.
    const row = await h.tdb.db.kysely
      .selectFrom('sso_states')
      .selectAll()
      .where('id', '=', sha256(state))
      .executeTakeFirstOrThrow();
    expect(row.provider).toBe('oidc');
    const data = JSON.parse(row.data) as { nonce: string; code_verifier: string };
    expect(data.nonce).toBe(nonce);
    expect(crypto.createHash('sha256').update(data.code_verifier).digest('base64url')).toBe(challenge);
    expect(row.data).not.toContain(state);
  });

  it('signs a browser in: a one-time code in the fragment, exchanged once for a working token', async () => {
    idp.accounts.set('sub-alice', { preferred_username: 'alice', email: 'alice@example.com', groups: ['ops'] });
    const { callback, browser, state } = await reachCallback('sub-alice');
    const res = await callbackAs(browser, callback, 'browser');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const code = landingCode(res);
    const first = await exchange(code);
    expect(first.status).toBe(200);
    expect(first.body.user).toMatchObject({ username: 'alice', role: 'operator', email: 'alice@example.com' });
    secrets.push(first.body.token);
    const check = await h.http.post('/v1/auth/check').set(bearer(first.body.token));
    expect(check.status).toBe(200);
    expect(check.body.user.username).toBe('alice');
    // Single use.
    expectProblem(await exchange(code), 401);
    // The handshake was spent by the callback.
    expect(
      await h.tdb.db.kysely.selectFrom('sso_states').select('id').where('id', '=', sha256(state)).executeTakeFirst(),
    ).toBeUndefined();
    // Linked by issuer + subject; audited: creation, the verified identity, the token.
    const link = await h.tdb.db.kysely
      .selectFrom('user_identities')
      .selectAll()
      .where('issuer', '=', idp.issuer)
      .where('subject', '=', 'sub-alice')
      .executeTakeFirstOrThrow();
    expect(link).toMatchObject({ provider: 'oidc', user_id: first.body.user.id });
    const actions = (await auditActions(first.body.user.id)).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['user.create', 'auth.sso', 'auth.login']));
    const login = (await auditActions(first.body.user.id)).find((a) => a.action === 'auth.login')!;
    expect(login.summary).toContain('signed in with oidc');
  });

  it('answers an API client (Accept: application/json) with the token itself', async () => {
    idp.accounts.set('sub-api', { preferred_username: 'api-bot', groups: [] });
    const { callback, browser } = await reachCallback('sub-api');
    const res = await callbackAs(browser, callback, 'api');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { token: string; expires_at: string; user: { username: string; role: string } };
    secrets.push(body.token);
    expect(body.user).toMatchObject({ username: 'api-bot', role: 'viewer' });
    expect((await h.http.post('/v1/auth/check').set(bearer(body.token))).status).toBe(200);
  });

  it('refuses an expired one-time code, and unknown or malformed ones', async () => {
    idp.accounts.set('sub-late', { preferred_username: 'late' });
    const { callback, browser } = await reachCallback('sub-late');
    const code = landingCode(await callbackAs(browser, callback, 'browser'));
    // The clock only moves forward (61 s, past the 60 s lifetime); later sign-ins are unaffected.
    clockOffsetMs += 61_000;
    expectProblem(await exchange(code), 401);
    expectProblem(await exchange('not-a-code'), 401);
    expectProblem(await exchange(42), 400, 'body.code');
    expectProblem(await h.http.post('/v1/auth/exchange').send({}), 400, 'body.code');
    expectProblem(await exchange(''), 400, 'body.code');
  });

  it('refuses a replayed callback (the state is single use)', async () => {
    idp.accounts.set('sub-replay', { preferred_username: 'replay' });
    const { callback, browser } = await reachCallback('sub-replay');
    landingCode(await callbackAs(browser, callback, 'browser'));
    expect(landingError(await callbackAs(browser, callback, 'browser'))).toBe('state_mismatch');
    const api = await callbackAs(browser, callback, 'api');
    expect(api.status).toBe(401);
    expect(api.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await api.json()) as { type: string }).type).toBe('urn:baton:problem:sso-state-mismatch');
  });

  it('refuses a callback whose state is missing or not the one sent', async () => {
    idp.accounts.set('sub-state', { preferred_username: 'state' });
    const { callback, browser } = await reachCallback('sub-state');
    const forged = new URL(callback);
    forged.searchParams.set('state', crypto.randomBytes(32).toString('base64url'));
    expect(landingError(await callbackAs(browser, forged.toString(), 'browser'))).toBe('state_mismatch');
    forged.searchParams.delete('state');
    const api = await callbackAs(browser, forged.toString(), 'api');
    expect(api.status).toBe(401);
    expect(((await api.json()) as { type: string }).type).toBe('urn:baton:problem:sso-state-mismatch');
    // Nobody was created.
    expect(
      await h.tdb.db.kysely.selectFrom('users').select('id').where('username', '=', 'state').executeTakeFirst(),
    ).toBeUndefined();
  });

  it('refuses an ID token whose nonce is not the one this sign-in stored', async () => {
    idp.accounts.set('sub-nonce', { preferred_username: 'nonce' });
    const { callback, browser, state } = await reachCallback('sub-nonce');
    const row = await h.tdb.db.kysely
      .selectFrom('sso_states')
      .selectAll()
      .where('id', '=', sha256(state))
      .executeTakeFirstOrThrow();
    const data = JSON.parse(row.data) as Record<string, unknown>;
    await h.tdb.db.kysely
      .updateTable('sso_states')
      .set({ data: JSON.stringify({ ...data, nonce: 'a-nonce-the-provider-never-saw' }) })
      .where('id', '=', row.id)
      .execute();
    const res = await callbackAs(browser, callback, 'api');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { type: string }).type).toBe('urn:baton:problem:sso-nonce-mismatch');
    expect(
      await h.tdb.db.kysely.selectFrom('users').select('id').where('username', '=', 'nonce').executeTakeFirst(),
    ).toBeUndefined();
  });

  it('refuses a code sent with another sign-in’s state: the PKCE verifier does not match it', async () => {
    idp.accounts.set('sub-pkce', { preferred_username: 'pkce' });
    const first = await reachCallback('sub-pkce');
    const other = await startLogin(first.browser);
    const swapped = new URL(first.callback);
    swapped.searchParams.set('state', other.state);
    const res = await callbackAs(first.browser, swapped.toString(), 'api');
    expect(res.status).toBe(401);
    const body = (await res.json()) as { type: string; detail: string };
    expect(body.type).toBe('urn:baton:problem:sso-provider-error');
    expect(body.detail).toContain('invalid_grant');
  });

  it('refuses a provider code that was already redeemed, even with a fresh state', async () => {
    idp.accounts.set('sub-redeemed', { preferred_username: 'redeemed' });
    const first = await reachCallback('sub-redeemed');
    landingCode(await callbackAs(first.browser, first.callback, 'browser'));
    const fresh = await startLogin(first.browser);
    const replayed = new URL(first.callback);
    replayed.searchParams.set('state', fresh.state);
    const res = await callbackAs(first.browser, replayed.toString(), 'api');
    expect(res.status).toBe(401);
    const body = (await res.json()) as { type: string; detail: string };
    expect(body.type).toBe('urn:baton:problem:sso-provider-error');
    expect(body.detail).toContain('invalid_grant');
  });

  it('ends a sign-in the person declined at the provider, spending its state', async () => {
    const browser = new TestBrowser();
    const { location, state } = await startLogin(browser);
    const callback = await browser.signInAtProvider(location, 'nobody', redirectUri, { abort: true });
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    expect(landingError(await callbackAs(browser, callback, 'browser'))).toBe('access_denied');
    expect(
      await h.tdb.db.kysely.selectFrom('sso_states').select('id').where('id', '=', sha256(state)).executeTakeFirst(),
    ).toBeUndefined();
    // Any other provider error, and a callback naming another issuer.
    const other = await startLogin(browser);
    const err = await callbackAs(browser, `${redirectUri}?error=server_error&state=${other.state}`, 'api');
    expect(err.status).toBe(401);
    expect(((await err.json()) as { type: string }).type).toBe('urn:baton:problem:sso-provider-error');
    const mixUp = await callbackAs(browser, `${redirectUri}?code=x&state=y&iss=https://evil.example`, 'browser');
    expect(landingError(mixUp)).toBe('provider_error');
    expect(landingError(await callbackAs(browser, `${redirectUri}`, 'browser'))).toBe('provider_error');
  });

  it('finishes on a second replica a sign-in the first one started, once', async () => {
    const db2 = openDatabase(h.tdb.url);
    const services2 = createServices(db2, {
      keyring: h.keyring,
      clock: () => new Date(Date.now() + clockOffsetMs),
      tokenTtlSeconds: 3600,
      oidc: oidcSettings,
    });
    const { app: app2 } = createApp({
      services: services2,
      ping: () => db2.ping(),
      gauges: databaseGauges(db2),
      logger: createLogger('error', { silent: true }),
      bodyLimitBytes: 1024 * 1024,
      trustProxy: false,
    });
    try {
      idp.accounts.set('sub-replica', { preferred_username: 'replica' });
      const { callback } = await reachCallback('sub-replica');
      const pathAndQuery = callback.slice(base.length);
      const res = await supertest(app2).get(pathAndQuery).set(JSON_ACCEPT);
      expect(res.status).toBe(200);
      expect(res.body.user.username).toBe('replica');
      secrets.push(res.body.token);
      // The first replica cannot finish it again.
      const replay = await h.http.get(pathAndQuery).set(JSON_ACCEPT);
      expectProblem(replay, 401);
      expect(replay.body.type).toBe('urn:baton:problem:sso-state-mismatch');
    } finally {
      await services2.closeRuns();
      await db2.close();
    }
  });

  it('maps groups to roles (strongest wins, unmapped is viewer) and re-evaluates them at every sign-in', async () => {
    idp.accounts.set('sub-ada', { preferred_username: 'ada', groups: ['ops', 'ops-admins', 'other'] });
    idp.accounts.set('sub-bob', { preferred_username: 'bob', groups: ['ops'] });
    idp.accounts.set('sub-cy', { preferred_username: 'cy', groups: ['unmapped'] });
    const ada = await browserSignIn('sub-ada');
    expect(ada.user.role).toBe('admin');
    expect((await browserSignIn('sub-bob')).user.role).toBe('operator');
    expect((await browserSignIn('sub-cy')).user.role).toBe('viewer');
    // The provider moves ada out of ops-admins: her next sign-in makes her an operator, and it is audited.
    idp.accounts.set('sub-ada', { preferred_username: 'ada', groups: ['ops'] });
    const again = await browserSignIn('sub-ada');
    expect(again.user.id).toBe(ada.user.id);
    expect(again.user.role).toBe('operator');
    const me = await h.http.get(`/v1/users/${ada.user.id}`).set(bearer(h.admin.token));
    expect(me.body.role).toBe('operator');
    const update = (await auditActions(ada.user.id)).find((a) => a.action === 'user.update');
    expect(update?.summary).toContain('role admin → operator');
    // Her token from before follows the demotion: it no longer reads the audit trail (an operator's is 403; a
    // session token may also stop working altogether when its role was lowered).
    const audit = await h.http.get('/v1/audit').set(bearer(ada.token));
    expect([401, 403]).toContain(audit.status);
  });

  it('finds a linked user by issuer + subject even when the provider renames them', async () => {
    idp.accounts.set('sub-rename', { preferred_username: 'before-rename' });
    const first = await browserSignIn('sub-rename');
    idp.accounts.set('sub-rename', { preferred_username: 'after-rename' });
    const second = await browserSignIn('sub-rename');
    expect(second.user.id).toBe(first.user.id);
    expect(second.user.username).toBe('before-rename');
  });

  it('mirrors mapped groups into teams of the same names, leaving other teams alone', async () => {
    const handmade = await h.http
      .post('/v1/teams')
      .set(bearer(h.admin.token))
      .send({ name: `handmade-${dialect}` });
    expect(handmade.status).toBe(201);
    idp.accounts.set('sub-tess', { preferred_username: 'tess', groups: ['ops', 'not-mapped'] });
    const tess = await browserSignIn('sub-tess');
    const add = await h.http
      .post(`/v1/teams/${handmade.body.id}/members`)
      .set(bearer(h.admin.token))
      .send({ user_id: tess.user.id });
    expect(add.status).toBe(201);
    const teamNamed = async (name: string) =>
      h.tdb.db.kysely.selectFrom('teams').selectAll().where('name', '=', name).executeTakeFirst();
    const memberOf = async (userId: string) =>
      (
        await h.tdb.db.kysely
          .selectFrom('team_members as m')
          .innerJoin('teams as t', 't.id', 'm.team_id')
          .select('t.name')
          .where('m.user_id', '=', userId)
          .execute()
      )
        .map((r) => r.name)
        .sort();
    expect(await teamNamed('not-mapped')).toBeUndefined();
    expect(await memberOf(tess.user.id)).toEqual([`handmade-${dialect}`, 'ops'].sort());
    // Moved from ops to ops-admins at the provider: the memberships follow at the next sign-in.
    idp.accounts.set('sub-tess', { preferred_username: 'tess', groups: ['ops-admins'] });
    await browserSignIn('sub-tess');
    expect(await memberOf(tess.user.id)).toEqual([`handmade-${dialect}`, 'ops-admins'].sort());
    const ops = await teamNamed('ops');
    expect(ops?.created_by).toBe('sso');
    const teamAudit = (await auditActions(ops!.id)).map((a) => a.action);
    expect(teamAudit).toEqual(expect.arrayContaining(['team.member_add', 'team.member_remove']));
  });

  it('refuses (does not merge) an identity whose username belongs to a local user, and audits it', async () => {
    const local = await h.user('viewer', `carol-${dialect}`);
    idp.accounts.set('sub-carol', { preferred_username: `carol-${dialect}`, groups: ['ops-admins'] });
    const { callback, browser } = await reachCallback('sub-carol');
    expect(landingError(await callbackAs(browser, callback, 'browser'))).toBe('username_taken');
    const again = await reachCallback('sub-carol');
    const api = await callbackAs(again.browser, again.callback, 'api');
    expect(api.status).toBe(401);
    const body = (await api.json()) as { type: string; detail: string };
    expect(body.type).toBe('urn:baton:problem:sso-username-taken');
    expect(body.detail).toContain(`carol-${dialect}`);
    // The local user is untouched and nothing is linked.
    const row = await h.tdb.db.kysely
      .selectFrom('users')
      .selectAll()
      .where('id', '=', local.id)
      .executeTakeFirstOrThrow();
    expect(row.role).toBe('viewer');
    expect(
      await h.tdb.db.kysely
        .selectFrom('user_identities')
        .select('user_id')
        .where('subject', '=', 'sub-carol')
        .executeTakeFirst(),
    ).toBeUndefined();
    const refused = (await auditActions(local.id)).filter((a) => a.action === 'auth.sso_refused');
    expect(refused).toHaveLength(2);
    expect(refused[0]!.summary).toContain('sub-carol');
  });

  it('takes the e-mail or the subject when preferred_username does not fit, and refuses when nothing does', async () => {
    idp.accounts.set('sub-umlaut', { preferred_username: 'jöhn doe', email: 'john@example.com' });
    expect((await browserSignIn('sub-umlaut')).user.username).toBe('john@example.com');
    idp.accounts.set('-no usable name-', { preferred_username: 'spaces are not allowed' });
    const { callback, browser } = await reachCallback('-no usable name-');
    expect(landingError(await callbackAs(browser, callback, 'browser'))).toBe('invalid_username');
  });

  it('answers a hostile callback query with a 4xx problem, never a 500', async () => {
    expectProblem(await h.http.get('/auth/oidc/callback?code=a&code=b&state=s'), 400, 'query.code');
    expectProblem(await h.http.get('/auth/oidc/callback?code=a&state=%00'), 400, 'query.state');
    expectProblem(await h.http.get(`/auth/oidc/callback?code=${'c'.repeat(5000)}&state=s`), 400, 'query.code');
    expectProblem(await h.http.get('/auth/oidc/callback?code=a&state=%E0%A4%A'), 400);
    const odd = await h.http.get('/auth/oidc/callback?code=a&state=%F0%9F%92%A9%20%22%3C').set(JSON_ACCEPT);
    expectProblem(odd, 401);
    expect(odd.body.type).toBe('urn:baton:problem:sso-state-mismatch');
    const error = await h.http.get(`/auth/oidc/callback?error=${encodeURIComponent('<script>')}`).set(JSON_ACCEPT);
    expectProblem(error, 401);
    expect(error.body.detail).not.toContain('<script>');
  });

  it('lists OIDC among the sign-in methods and its routes in the OpenAPI document', async () => {
    const methods = await h.http.get('/v1/auth/methods');
    expect(methods.status).toBe(200);
    expect(methods.body).toEqual({ password: true, oidc: true, saml: false });
    const doc = (await h.http.get('/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/auth/oidc/login', '/auth/oidc/callback', '/v1/auth/exchange', '/v1/auth/methods']),
    );
  });

  // Last: every flow above has run and put its secrets in `secrets`.
  it('never writes a code, a state or a token to the log', async () => {
    expect(secrets.length).toBeGreaterThan(20);
    expect(logText).toContain('/auth/oidc/callback');
    for (const secret of secrets) expect(logText).not.toContain(secret);
    expect(logText).not.toContain('sso_code');
  });
});

describe.each(DIALECTS)('OpenID Connect not configured or unreachable on %s', (dialect) => {
  let plain: Harness;
  let unreachable: Harness;
  beforeAll(async () => {
    plain = await createHarness(dialect);
    // A port nothing listens on: discovery fails, the app still answers.
    const probe = http.createServer();
    const deadPort = await listenOnLoopback(probe);
    await closeServer(probe);
    unreachable = await createHarness(dialect, {
      oidc: {
        issuer: `http://127.0.0.1:${deadPort}`,
        clientId: 'c',
        clientSecret: 's',
        redirectUrl: 'http://127.0.0.1:1/auth/oidc/callback',
        scopes: ['openid'],
        roleClaim: 'groups',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await plain.close();
    await unreachable.close();
  });

  it('answers 404 on the OIDC routes and lists only password sign-in', async () => {
    expectProblem(await plain.http.get('/auth/oidc/login'), 404);
    expectProblem(await plain.http.get('/auth/oidc/callback?code=x&state=y'), 404);
    expect((await plain.http.get('/v1/auth/methods')).body).toEqual({ password: true, oidc: false, saml: false });
    // The exchange exists either way; no code was ever issued.
    expectProblem(await plain.http.post('/v1/auth/exchange').send({ code: 'x' }), 401);
  });

  it('answers 503 on login while the issuer is unreachable, and keeps answering everything else', async () => {
    const res = await unreachable.http.get('/auth/oidc/login');
    expectProblem(res, 503);
    expect(res.body.detail).toContain('does not answer');
    expectProblem(await unreachable.http.get('/auth/oidc/login'), 503);
    expect((await unreachable.http.get('/healthz')).status).toBe(200);
    expect((await unreachable.http.get('/v1/auth/methods')).body.oidc).toBe(true);
    // A callback while the provider is down: 503 for an API client, a redirect for a browser.
    expectProblem(await unreachable.http.get('/auth/oidc/callback?code=x&state=y').set(JSON_ACCEPT), 503);
    const browser = await unreachable.http.get('/auth/oidc/callback?code=x&state=y');
    expect(browser.status).toBe(302);
    expect(browser.headers.location).toBe('/ui/#sso_error=unavailable');
  });
});

describe.each(DIALECTS)('baton serve with an unreachable OIDC issuer on %s', (dialect) => {
  let tdb: TestDatabase;
  let dataDir: string;
  let running: Awaited<ReturnType<typeof serve>> | undefined;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-oidc-serve-'));
  });
  afterAll(async () => {
    await running?.stop();
    await tdb.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, and answers 503 on OIDC login until the issuer answers, then redirects to it', async () => {
    const probe = http.createServer();
    const deadPort = await listenOnLoopback(probe);
    await closeServer(probe);
    const config = loadConfig({
      BATON_DATA_DIR: dataDir,
      BATON_DATABASE_URL: tdb.url,
      BATON_HOST: '127.0.0.1',
      BATON_PORT: '0',
      BATON_EXECUTORS: '0',
      BATON_SANDBOX: 'off',
      BATON_LOG_LEVEL: 'error',
      BATON_OIDC_ISSUER: `http://127.0.0.1:${deadPort}`,
      BATON_OIDC_CLIENT_ID: 'baton',
      BATON_OIDC_CLIENT_SECRET: 'secret',
    });
    running = await serve(config, { print: () => {} });
    const port = (running.server.address() as net.AddressInfo).port;
    const login = await fetch(`http://127.0.0.1:${port}/auth/oidc/login`, { redirect: 'manual' });
    expect(login.status).toBe(503);
    expect(login.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const methods = (await (await fetch(`http://127.0.0.1:${port}/v1/auth/methods`)).json()) as { oidc: boolean };
    expect(methods.oidc).toBe(true);
    // The issuer comes up on that address: the next sign-in discovers it, no restart needed.
    const idp = await startTestIssuer(`http://127.0.0.1:${port}/auth/oidc/callback`, deadPort);
    try {
      const retried = await fetch(`http://127.0.0.1:${port}/auth/oidc/login`, { redirect: 'manual' });
      expect(retried.status).toBe(302);
      expect(retried.headers.get('location')).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${deadPort}/`));
    } finally {
      await idp.close();
    }
  });
});
