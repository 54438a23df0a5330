// SAML sign-in end to end, on both databases, against a real IdP (samlify, signed assertions) on loopback:
// the login redirect, the IdP's auto-posted form, the ACS and every refusal the issue names.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_THROTTLE, systemClock } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { DOMParser } from '@xmldom/xmldom';
import type { Express } from 'express';
import supertest from 'supertest';
import { createApp } from '../app.js';
import { loadSamlSettings, type SamlSettings } from '../config/saml-config.js';
import { createLogger } from '../logger.js';
import { databaseGauges } from '../system/metrics.js';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';
import { createServices, type Services } from '../wiring.js';
import { SAML_ACS_BODY_LIMIT } from './saml.routes.js';
import * as samlModule from './saml.js';
import { makeKeyPair, postedForm, type SamlTestUser, startTestIdp, type TestIdp } from '../testing/saml-idp.js';

const PUBLIC_URL = 'https://baton.test';
const SP_ENTITY_ID = 'https://baton.test/auth/saml/metadata';
const ACS_URL = `${PUBLIC_URL}/auth/saml/acs`;
const SSO = {
  roleMap: [
    { group: 'ops', role: 'operator' as const },
    { group: 'ops-admins', role: 'admin' as const },
  ],
  teamSync: false,
  codeTtlSeconds: 60,
};

/** Everything the app logged, to prove no SAML message reached a log line. */
function logCapture() {
  const chunks: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  return { stream, text: () => chunks.join('') };
}

/** A second replica: its own services and app over the same database. */
function replica(h: Harness, saml: SamlSettings | undefined, logStream?: NodeJS.WritableStream) {
  const services = createServices(h.tdb.db, {
    keyring: h.keyring,
    clock: systemClock,
    tokenTtlSeconds: 3600,
    throttle: { ...DEFAULT_THROTTLE, perAddress: 1000 },
    saml: saml && { settings: saml, module: samlModule },
    sso: SSO,
  });
  const { app } = createApp({
    services,
    ping: () => h.tdb.db.ping(),
    gauges: databaseGauges(h.tdb.db),
    logger: logStream ? createLogger('debug', { stream: logStream }) : createLogger('error', { silent: true }),
    bodyLimitBytes: 1024 * 1024,
    trustProxy: false,
  });
  return {
    http: supertest(app),
    app: app as Express,
    services: services as Services,
    close: () => services.closeRuns(),
  };
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

describe.each(DIALECTS)('SAML sign-in (%s)', (dialect) => {
  let idp: TestIdp;
  let h: Harness;
  let settings: SamlSettings;
  let b: ReturnType<typeof replica>;
  const logs = logCapture();
  /** every SAMLResponse this test posted */
  const posted: string[] = [];

  beforeAll(async () => {
    idp = await startTestIdp();
    settings = loadSamlSettings(
      {
        BATON_SAML_IDP_METADATA: idp.metadataFile,
        BATON_SAML_SP_ENTITY_ID: SP_ENTITY_ID,
        BATON_SSO_ROLE_CLAIM: 'groups',
      },
      PUBLIC_URL,
    )!;
    h = await createHarness(dialect, { saml: settings, sso: SSO, logStream: logs.stream });
    b = replica(h, settings, logs.stream);
    const metadata = await h.http.get('/auth/saml/metadata');
    idp.trust(metadata.text);
  });
  afterAll(async () => {
    await b?.close();
    await h?.close();
    await idp?.close();
  });

  type Http = ReturnType<typeof supertest>;
  /** GET /auth/saml/login: the IdP URL it redirects to. */
  async function startLogin(http: Http = h.http): Promise<string> {
    const res = await http.get('/auth/saml/login');
    expect(res.status).toBe(302);
    expect(res.headers['cache-control']).toBe('no-store');
    const location = res.headers.location as string;
    expect(location.startsWith(`${idp.ssoUrl}?SAMLRequest=`)).toBe(true);
    return location;
  }
  /** The browser at the IdP: the form it is handed (signed in as `user`). */
  async function atIdp(location: string, user: SamlTestUser) {
    idp.signInAs(user);
    const page = await fetch(location);
    expect(page.status).toBe(200);
    const form = postedForm(await page.text());
    expect(form.action).toBe(ACS_URL);
    return form;
  }
  function acs(fields: Record<string, string>, opts: { http?: Http; browser?: boolean } = {}) {
    if (fields.SAMLResponse) posted.push(fields.SAMLResponse);
    return (opts.http ?? h.http)
      .post('/auth/saml/acs')
      .set('Accept', opts.browser ? 'text/html' : 'application/json')
      .type('form')
      .send(fields);
  }
  /** A full SP-initiated sign-in through `http`, as an API client: the response. */
  async function signIn(user: SamlTestUser, http: Http = h.http) {
    const form = await atIdp(await startLogin(http), user);
    return acs({ SAMLResponse: form.SAMLResponse }, { http });
  }
  /** The id of the newest AuthnRequest the IdP saw, after a fresh login through `http`. */
  async function freshRequestId(http: Http = h.http): Promise<string> {
    const location = await startLogin(http);
    const page = await fetch(location);
    expect(page.status).toBe(200);
    return idp.requests.at(-1)!.id;
  }
  function expectRefused(res: supertest.Response, reason: string, detail?: RegExp) {
    expectProblem(res, 401);
    expect(res.body.type).toBe(`urn:baton:problem:sso-${reason.replace(/_/g, '-')}`);
    if (detail) expect(res.body.detail).toMatch(detail);
    expect(res.body.token).toBeUndefined();
  }

  it('signs in SP-initiated: login redirect → IdP → signed assertion posted to the ACS → a token for the user it creates', async () => {
    const res = await signIn({
      nameId: 'alice-id-1',
      attributes: { username: ['alice'], email: ['alice@example.com'], groups: ['staff'] },
    });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ token: expect.any(String), user: { username: 'alice', role: 'viewer' } });
    const check = await h.http.post('/v1/auth/check').set(bearer(res.body.token));
    expect(check.status).toBe(200);
    expect(check.body.user).toMatchObject({ username: 'alice', email: 'alice@example.com' });
    // The AuthnRequest the IdP read carried our ACS URL; unsigned (no SP key configured here).
    expect(idp.requests.at(-1)!.signed).toBe(false);
  });

  it('hands a browser a one-time code in the fragment, which POST /v1/auth/exchange turns into a token once', async () => {
    const form = await atIdp(await startLogin(), { nameId: 'bob-id', attributes: { uid: ['bob'] } });
    const res = await acs({ SAMLResponse: form.SAMLResponse, RelayState: 'ignored' }, { browser: true });
    expect(res.status).toBe(302);
    const match = /^\/ui\/#sso_code=([^&]+)$/.exec(res.headers.location as string);
    expect(match).not.toBeNull();
    const code = decodeURIComponent(match![1]!);
    const exchanged = await h.http.post('/v1/auth/exchange').send({ code });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.user).toMatchObject({ username: 'bob' });
    expectProblem(await h.http.post('/v1/auth/exchange').send({ code }), 401);
  });

  it('a browser whose assertion is refused lands on /ui/ with the reason in the fragment', async () => {
    const res = await acs(
      {
        SAMLResponse: await idp.respond(
          { nameId: 'x' },
          { inResponseTo: await freshRequestId(), rogueSignature: true },
        ),
      },
      { browser: true },
    );
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/ui/#sso_error=invalid_assertion');
  });

  it('takes the username from username/uid, else the e-mail, else the NameID', async () => {
    const byEmail = await signIn({ nameId: 'n-1', attributes: { mail: ['carol@example.com'] } });
    expect(byEmail.body.user).toMatchObject({ username: 'carol@example.com' });
    const byNameId = await signIn({ nameId: 'dave' });
    expect(byNameId.body.user).toMatchObject({ username: 'dave' });
    // Linked by IdP entity id + NameID: a changed username attribute signs in the same user.
    const again = await signIn({ nameId: 'dave', attributes: { username: ['someone-else'] } });
    expect(again.body.user.id).toBe(byNameId.body.user.id);
    // A local user of that name (the harness's admin "root") is not taken over by a new SAML identity.
    expectRefused(await signIn({ nameId: 'not-root', attributes: { username: ['root'] } }), 'username_taken');
  });

  it('maps groups to roles, and a change of groups changes the role at the next sign-in', async () => {
    const user = (groups: string[]) => ({ nameId: 'erin-id', attributes: { username: ['erin'], groups } });
    const first = await signIn(user(['ops']));
    expect(first.body.user.role).toBe('operator');
    const second = await signIn(user(['ops', 'ops-admins']));
    expect(second.body.user).toMatchObject({ id: first.body.user.id, role: 'admin' });
    const third = await signIn(user([]));
    expect(third.body.user).toMatchObject({ id: first.body.user.id, role: 'viewer' });
    // The earlier token now acts with the new role (an operator-only call is refused).
    const check = await h.http.post('/v1/auth/check').set(bearer(third.body.token));
    expect(check.body.role).toBe('viewer');
  });

  it('finishes on one replica a sign-in another one started (the request id is in the database)', async () => {
    const form = await atIdp(await startLogin(h.http), { nameId: 'frank', attributes: {} });
    const res = await acs({ SAMLResponse: form.SAMLResponse }, { http: b.http });
    expect(res.status).toBe(200);
    expect(res.body.user.username).toBe('frank');
  });

  it('refuses a replayed response, on the same replica and on another one', async () => {
    const form = await atIdp(await startLogin(), { nameId: 'grace' });
    expect((await acs({ SAMLResponse: form.SAMLResponse })).status).toBe(200);
    expectRefused(await acs({ SAMLResponse: form.SAMLResponse }), 'state_mismatch');
    expectRefused(await acs({ SAMLResponse: form.SAMLResponse }, { http: b.http }), 'state_mismatch');
  });

  it('answers each AuthnRequest once, also when the confirmation does not repeat its InResponseTo', async () => {
    const requestId = await freshRequestId();
    const first = await idp.respond({ nameId: 'quinn' }, { inResponseTo: requestId, subjectInResponseTo: null });
    expect((await acs({ SAMLResponse: first })).status).toBe(200);
    // Another assertion (a new id) for the same request, at the other replica: the request was used up.
    const second = await idp.respond({ nameId: 'quinn' }, { inResponseTo: requestId, subjectInResponseTo: null });
    expectRefused(await acs({ SAMLResponse: second }, { http: b.http }), 'state_mismatch');
  });

  it('refuses an assertion id used before, across replicas, even inside a new response to a new request', async () => {
    const assertionId = `_replay_${Date.now()}`;
    const first = await idp.respond({ nameId: 'heidi' }, { inResponseTo: await freshRequestId(h.http), assertionId });
    expect((await acs({ SAMLResponse: first })).status).toBe(200);
    // The same assertion id at replica B, answering a request B itself started: refused as a replay.
    const second = await idp.respond({ nameId: 'heidi' }, { inResponseTo: await freshRequestId(b.http), assertionId });
    expectRefused(await acs({ SAMLResponse: second }, { http: b.http }), 'invalid_assertion', /already used/);
    // Two replicas racing on one fresh assertion: exactly one wins.
    const racedId = `_race_${Date.now()}`;
    const [ra, rb] = [await freshRequestId(h.http), await freshRequestId(b.http)];
    const results = await Promise.all([
      acs({ SAMLResponse: await idp.respond({ nameId: 'heidi' }, { inResponseTo: ra, assertionId: racedId }) }),
      acs(
        { SAMLResponse: await idp.respond({ nameId: 'heidi' }, { inResponseTo: rb, assertionId: racedId }) },
        { http: b.http },
      ),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('refuses an assertion signed by another key, and a tampered one', async () => {
    expectRefused(
      await acs({
        SAMLResponse: await idp.respond(
          { nameId: 'ivan' },
          { inResponseTo: await freshRequestId(), rogueSignature: true },
        ),
      }),
      'invalid_assertion',
      /signed/,
    );
    // Each change to a genuine signed response (for a request of its own: a refused response uses its request up).
    const changes: Array<(xml: string) => string> = [
      (xml) => xml.replace('>judy<', '>root<'),
      (xml) => xml.replace('>staff<', '>ops-admins<'),
      (xml) =>
        xml.replace(/NotOnOrAfter="[^"]+"/g, `NotOnOrAfter="${new Date(Date.now() + 86_400_000).toISOString()}"`),
    ];
    for (const change of changes) {
      const genuine = unb64(
        await idp.respond(
          { nameId: 'judy', attributes: { groups: ['staff'] } },
          { inResponseTo: await freshRequestId() },
        ),
      );
      const tampered = change(genuine);
      expect(tampered).not.toBe(genuine);
      expectRefused(await acs({ SAMLResponse: b64(tampered) }), 'invalid_assertion', /signed/);
    }
  });

  it('refuses an assertion outside its validity window, beyond the 60 s of skew, and accepts one within it', async () => {
    const ago = (s: number) => new Date(Date.now() - s * 1000);
    const ahead = (s: number) => new Date(Date.now() + s * 1000);
    const respond = async (o: Parameters<TestIdp['respond']>[1]) =>
      acs({ SAMLResponse: await idp.respond({ nameId: 'ken' }, { inResponseTo: await freshRequestId(), ...o }) });
    expectRefused(
      await respond({ notBefore: ago(600), notOnOrAfter: ago(120) }),
      'invalid_assertion',
      /validity window/,
    );
    expectRefused(
      await respond({ notBefore: ahead(120), notOnOrAfter: ahead(600) }),
      'invalid_assertion',
      /validity window/,
    );
    // Conditions fine but the bearer confirmation expired.
    expectRefused(await respond({ subjectNotOnOrAfter: ago(120) }), 'invalid_assertion', /validity window/);
    expect((await respond({ notBefore: ago(600), notOnOrAfter: ago(30) })).status).toBe(200);
    expect((await respond({ notBefore: ahead(30), notOnOrAfter: ahead(600) })).status).toBe(200);
  });

  it('refuses a wrong audience, recipient, destination or issuer', async () => {
    const respond = async (o: Parameters<TestIdp['respond']>[1]) =>
      acs({ SAMLResponse: await idp.respond({ nameId: 'leo' }, { inResponseTo: await freshRequestId(), ...o }) });
    expectRefused(await respond({ audience: 'https://other.example/sp' }), 'invalid_assertion', /Audience/);
    expectRefused(await respond({ recipient: 'https://other.example/acs' }), 'invalid_assertion', /Recipient/);
    expectRefused(await respond({ destination: 'https://other.example/acs' }), 'invalid_assertion', /Destination/);
    expectRefused(await respond({ issuer: 'https://other-idp.example' }), 'invalid_assertion', /Issuer/);
    // No Destination at all is fine when the assertion names the ACS URL as its Recipient.
    expect((await respond({ destination: null })).status).toBe(200);
  });

  it('reports an IdP that answers with an error status as access_denied', async () => {
    const refusal =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_e1" Version="2.0" IssueInstant="${new Date().toISOString()}" InResponseTo="${await freshRequestId()}">` +
      `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"/></samlp:StatusCode></samlp:Status></samlp:Response>`;
    expectRefused(await acs({ SAMLResponse: b64(refusal) }), 'access_denied', /AuthnFailed/);
  });

  it('refuses a response to an unknown AuthnRequest and, by default, an unasked (IdP-initiated) one', async () => {
    expectRefused(
      await acs({ SAMLResponse: await idp.respond({ nameId: 'mia' }, { inResponseTo: '_never_sent_by_us' }) }),
      'state_mismatch',
      /InResponseTo/,
    );
    expectRefused(await acs({ SAMLResponse: await idp.respond({ nameId: 'mia' }) }), 'state_mismatch', /InResponseTo/);
  });

  it('with BATON_SAML_ALLOW_IDP_INITIATED, takes an unasked response, still refuses unknown InResponseTo and replays', async () => {
    const open = replica(h, { ...settings, allowIdpInitiated: true });
    try {
      const unasked = await idp.respond({ nameId: 'nina' });
      const res = await acs({ SAMLResponse: unasked }, { http: open.http });
      expect(res.status).toBe(200);
      expect(res.body.user.username).toBe('nina');
      expectRefused(await acs({ SAMLResponse: unasked }, { http: open.http }), 'invalid_assertion', /already used/);
      expectRefused(
        await acs(
          { SAMLResponse: await idp.respond({ nameId: 'nina' }, { inResponseTo: '_unknown' }) },
          { http: open.http },
        ),
        'state_mismatch',
      );
      // Unasked, yet its confirmation names a request: refused.
      expectRefused(
        await acs(
          { SAMLResponse: await idp.respond({ nameId: 'nina' }, { subjectInResponseTo: '_other' }) },
          { http: open.http },
        ),
        'invalid_assertion',
        /InResponseTo/,
      );
    } finally {
      await open.close();
    }
  });

  it('answers 401, never a 500, to a missing or malformed SAMLResponse; 415 to a body that is not a form', async () => {
    expectRefused(await acs({ RelayState: 'x' }), 'invalid_assertion', /no SAMLResponse/);
    expectRefused(await acs({ SAMLResponse: 'this is not base64!' }), 'invalid_assertion', /not base64/);
    expectRefused(await acs({ SAMLResponse: b64('plain text, not XML') }), 'invalid_assertion');
    expectRefused(await acs({ SAMLResponse: b64('<?xml version="1.0"?><a><b>not SAML</b></a>') }), 'invalid_assertion');
    expectRefused(
      await acs({ SAMLResponse: b64('<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"') }),
      'invalid_assertion',
    );
    expectRefused(
      await acs({ SAMLResponse: b64('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>') }),
      'invalid_assertion',
    );
    const json = await h.http.post('/auth/saml/acs').set('Accept', 'application/json').send({ SAMLResponse: 'x' });
    expectProblem(json, 415);
  });

  it('answers 413 to an ACS form over the limit', async () => {
    const res = await h.http
      .post('/auth/saml/acs')
      .set('Accept', 'application/json')
      .type('form')
      .send({ SAMLResponse: 'A'.repeat(SAML_ACS_BODY_LIMIT + 10) });
    expectProblem(res, 413);
  });

  it('serves the SP metadata: well-formed, with the entity id and the ACS URL (HTTP-POST)', async () => {
    const res = await h.http.get('/auth/saml/metadata');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    const errors: string[] = [];
    const doc = new DOMParser({
      errorHandler: {
        error: (m: unknown) => errors.push(String(m)),
        fatalError: (m: unknown) => errors.push(String(m)),
      },
    }).parseFromString(res.text, 'application/xml');
    expect(errors).toEqual([]);
    const md = 'urn:oasis:names:tc:SAML:2.0:metadata';
    expect(doc.documentElement.localName).toBe('EntityDescriptor');
    expect(doc.documentElement.getAttribute('entityID')).toBe(SP_ENTITY_ID);
    const acsElement = doc.getElementsByTagNameNS(md, 'AssertionConsumerService')[0]!;
    expect(acsElement.getAttribute('Location')).toBe(ACS_URL);
    expect(acsElement.getAttribute('Binding')).toBe('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
    expect(doc.getElementsByTagNameNS(md, 'SPSSODescriptor')[0]!.getAttribute('WantAssertionsSigned')).toBe('true');
    // No SP key configured: no certificate published.
    expect(doc.getElementsByTagNameNS(md, 'KeyDescriptor').length).toBe(0);
  });

  it('offers SAML in GET /v1/auth/methods', async () => {
    const res = await h.http.get('/v1/auth/methods');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ password: true, saml: true });
  });

  it('lists the SAML operations in /v1/openapi.json, unversioned', async () => {
    const res = await h.http.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/auth/saml/login', '/auth/saml/acs', '/auth/saml/metadata']),
    );
  });

  it('answers 404 on every SAML route when SAML is not configured', async () => {
    const off = replica(h, undefined);
    try {
      expectProblem(await off.http.get('/auth/saml/login'), 404);
      expectProblem(await off.http.get('/auth/saml/metadata'), 404);
      expectProblem(await off.http.post('/auth/saml/acs').type('form').send({ SAMLResponse: 'eA==' }), 404);
      expect((await off.http.get('/v1/auth/methods')).body).toMatchObject({ password: true, saml: false });
    } finally {
      await off.close();
    }
  });

  it('purges used assertion ids once they expired', async () => {
    const repo = h.tdb.db.repos.ssoAssertions;
    expect(await repo.claim('_old', new Date(Date.now() - 1000).toISOString())).toBe(true);
    expect(await repo.claim('_old', new Date(Date.now() - 1000).toISOString())).toBe(false);
    expect(await repo.deleteExpired(new Date().toISOString())).toBeGreaterThanOrEqual(1);
    expect(await repo.claim('_old', new Date(Date.now() + 60_000).toISOString())).toBe(true);
  });

  // Last: every response posted above went through the app; none of it may be in a log line.
  it('never logs a SAMLResponse or an assertion', () => {
    const text = logs.text();
    expect(text).toContain('/auth/saml/acs'); // the access log did see the posts
    expect(posted.length).toBeGreaterThan(10);
    for (const response of posted) {
      expect(text).not.toContain(response.slice(0, 40));
      const ids = /<saml:Assertion[^>]* ID="([^"]+)"/.exec(unb64(response));
      if (ids) expect(text).not.toContain(ids[1]);
    }
    expect(text).not.toMatch(/SAMLResponse|<saml|Assertion ID/);
  });
});

describe.each(DIALECTS)('SAML sign-in with an SP key pair (%s)', (dialect) => {
  let idp: TestIdp;
  let h: Harness;

  beforeAll(async () => {
    idp = await startTestIdp({ wantSignedRequests: true });
    const sp = makeKeyPair(idp.dir, 'sp');
    const settings = loadSamlSettings(
      {
        BATON_SAML_IDP_SSO_URL: idp.ssoUrl,
        BATON_SAML_IDP_CERT: idp.cert,
        BATON_SAML_IDP_ENTITY_ID: idp.entityId,
        BATON_SAML_SP_ENTITY_ID: SP_ENTITY_ID,
        BATON_SAML_SP_KEY_FILE: sp.keyFile,
        BATON_SAML_SP_CERT_FILE: sp.certFile,
      },
      PUBLIC_URL,
    )!;
    h = await createHarness(dialect, { saml: settings, sso: SSO });
    idp.trust((await h.http.get('/auth/saml/metadata')).text);
  });
  afterAll(async () => {
    await h?.close();
    await idp?.close();
  });

  it('signs its AuthnRequests (the IdP checks the signature) and publishes its certificate', async () => {
    const metadata = await h.http.get('/auth/saml/metadata');
    expect(metadata.text).toContain('AuthnRequestsSigned="true"');
    expect(metadata.text).toContain('use="signing"');
    expect(metadata.text).toContain('use="encryption"');
    const login = await h.http.get('/auth/saml/login');
    expect(login.headers.location).toContain('Signature=');
    idp.signInAs({ nameId: 'olga', attributes: { groups: ['ops-admins'] } });
    const page = await fetch(login.headers.location as string);
    expect(page.status).toBe(200);
    expect(idp.requests.at(-1)!.signed).toBe(true);
    const res = await h.http
      .post('/auth/saml/acs')
      .set('Accept', 'application/json')
      .type('form')
      .send({ SAMLResponse: postedForm(await page.text()).SAMLResponse });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ username: 'olga', role: 'admin' });
  });

  it('an AuthnRequest whose signature is broken is refused by the IdP', async () => {
    const login = await h.http.get('/auth/saml/login');
    const url = new URL(login.headers.location as string);
    url.searchParams.set('Signature', Buffer.alloc(256, 1).toString('base64'));
    expect((await fetch(url)).status).toBe(400);
  });

  it('decrypts an encrypted assertion', async () => {
    const login = await h.http.get('/auth/saml/login');
    await fetch(login.headers.location as string);
    const encrypted = await idp.respond({ nameId: 'pete' }, { inResponseTo: idp.requests.at(-1)!.id, encrypt: true });
    expect(Buffer.from(encrypted, 'base64').toString('utf8')).toContain('EncryptedAssertion');
    const res = await h.http
      .post('/auth/saml/acs')
      .set('Accept', 'application/json')
      .type('form')
      .send({ SAMLResponse: encrypted });
    expect(res.status).toBe(200);
    expect(res.body.user.username).toBe('pete');
  });
});
