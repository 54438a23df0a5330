// The access log carries no query string and no body: an OIDC callback's code and state, a SAML response posted to
// the ACS and a webhook's token never reach a log line, whatever those routes answer.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness } from '../testing/harness.js';
import { requestPath } from './middleware.js';

describe.each(DIALECTS)('access log on %s', (dialect) => {
  let h: Harness;
  let logText = '';
  beforeAll(async () => {
    const logs = new PassThrough();
    logs.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
    h = await createHarness(dialect, { logStream: logs });
  });
  afterAll(() => h.close());

  /** The request log lines written since `mark`, parsed. */
  const linesSince = (mark: number) =>
    logText
      .slice(mark)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('logs /auth/oidc/callback without its query: no code, no state', async () => {
    const mark = logText.length;
    const code = 'oidc-code-Zq8xL2pN4vR7sT1w';
    const state = 'oidc-state-Hk3mB9cD5fG6jK0e';
    const res = await h.http.get(`/auth/oidc/callback?code=${code}&state=${state}&iss=https%3A%2F%2Fidp.example`);
    expect(res.status).toBeGreaterThanOrEqual(200);
    const written = logText.slice(mark);
    expect(written).not.toContain(code);
    expect(written).not.toContain(state);
    expect(written).not.toContain('idp.example');
    const request = linesSince(mark).find((l) => l.message === 'request');
    expect(request).toMatchObject({ method: 'GET', path: '/auth/oidc/callback', status: res.status });
  });

  it('logs a POST to /auth/saml/acs without its body', async () => {
    const mark = logText.length;
    const assertion = Buffer.from('<samlp:Response ID="_secret-assertion-7f3a">…</samlp:Response>').toString('base64');
    const res = await h.http
      .post('/auth/saml/acs')
      .type('form')
      .send({ SAMLResponse: assertion, RelayState: 'relay-state-Qw5eR8tY' });
    expect(res.status).toBeGreaterThanOrEqual(200);
    const written = logText.slice(mark);
    expect(written).not.toContain(assertion);
    expect(written).not.toContain(assertion.slice(0, 24));
    expect(written).not.toContain('relay-state-Qw5eR8tY');
    expect(linesSince(mark).find((l) => l.message === 'request')).toMatchObject({
      method: 'POST',
      path: '/auth/saml/acs',
      status: res.status,
    });
  });

  it('never logs a query string, a bearer token or a webhook token', async () => {
    const mark = logText.length;
    await h.http.get('/v1/audit?cursor=Y3Vyc29yLXNlY3JldA&actor=usr_query_secret').set(bearer(h.admin.token));
    await h.http.post('/hooks/hook-token-secret-Pz9?x=1').send({});
    const written = logText.slice(mark);
    for (const secret of ['Y3Vyc29yLXNlY3JldA', 'usr_query_secret', h.admin.token, 'hook-token-secret-Pz9'])
      expect(written).not.toContain(secret);
    expect(linesSince(mark).map((l) => l.path)).toEqual(['/v1/audit', '/hooks/<redacted>']);
  });
});

describe('requestPath', () => {
  it('keeps the path and drops the query and fragment', () => {
    expect(requestPath('/auth/oidc/callback?code=a&state=b')).toBe('/auth/oidc/callback');
    expect(requestPath('/auth/oidc/callback#code=a')).toBe('/auth/oidc/callback');
    expect(requestPath('/v1/runs')).toBe('/v1/runs');
    expect(requestPath('/?')).toBe('/');
  });
});
