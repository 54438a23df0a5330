import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

/** The message of the ConfigError loadConfig throws for this environment (fails the test when it does not throw). */
function refusal(env: Record<string, string>): string {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return (caught as ConfigError).message;
}

const ISSUER = 'https://login.example.com/realms/ops';
const MINIMAL = { BATON_OIDC_ISSUER: ISSUER, BATON_OIDC_CLIENT_ID: 'baton', BATON_OIDC_CLIENT_SECRET: 's3cret' };

describe('single sign-on configuration', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-sso-config-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('has no OIDC and an empty role map by default', () => {
    const c = loadConfig({});
    expect(c.oidc).toBeUndefined();
    expect(c.sso).toEqual({ roleClaim: 'groups', roleMap: [], teamSync: false, codeTtlSeconds: 60 });
  });

  it('reads a complete OIDC client with its defaults', () => {
    const c = loadConfig({ ...MINIMAL, BATON_PUBLIC_URL: 'https://baton.example.com/' });
    expect(c.oidc).toEqual({
      issuer: ISSUER,
      clientId: 'baton',
      clientSecret: 's3cret',
      redirectUrl: 'https://baton.example.com/auth/oidc/callback',
      scopes: ['openid', 'profile', 'email', 'groups'],
      roleClaim: 'groups',
    });
  });

  it('takes the redirect URL, the scopes and the role claim when given', () => {
    const c = loadConfig({
      ...MINIMAL,
      BATON_OIDC_REDIRECT_URL: 'https://sso.example.com/baton/auth/oidc/callback',
      BATON_OIDC_SCOPES: 'profile, roles',
      BATON_SSO_ROLE_CLAIM: 'realm_roles',
    });
    expect(c.oidc?.redirectUrl).toBe('https://sso.example.com/baton/auth/oidc/callback');
    expect(c.oidc?.scopes).toEqual(['openid', 'profile', 'roles']);
    expect(c.oidc?.roleClaim).toBe('realm_roles');
    expect(c.sso.roleClaim).toBe('realm_roles');
  });

  it('reads the client secret from a file, without its final newline', () => {
    const file = path.join(dir, 'secret');
    fs.writeFileSync(file, 'from-a-file\n');
    const { BATON_OIDC_CLIENT_SECRET: _inline, ...rest } = MINIMAL;
    expect(loadConfig({ ...rest, BATON_OIDC_CLIENT_SECRET_FILE: file }).oidc?.clientSecret).toBe('from-a-file');
    expect(refusal({ ...rest, BATON_OIDC_CLIENT_SECRET_FILE: path.join(dir, 'missing') })).toMatch(
      /BATON_OIDC_CLIENT_SECRET_FILE: cannot read .*ENOENT/,
    );
    expect(refusal({ ...MINIMAL, BATON_OIDC_CLIENT_SECRET_FILE: file })).toContain('BATON_OIDC_CLIENT_SECRET_FILE');
  });

  it('stops the start on a partial OIDC configuration, naming the missing variable', () => {
    expect(refusal({ BATON_OIDC_ISSUER: ISSUER })).toContain('BATON_OIDC_CLIENT_ID');
    expect(refusal({ BATON_OIDC_CLIENT_ID: 'baton', BATON_OIDC_CLIENT_SECRET: 'x' })).toContain('BATON_OIDC_ISSUER');
    expect(refusal({ BATON_OIDC_ISSUER: ISSUER, BATON_OIDC_CLIENT_ID: 'baton' })).toContain('BATON_OIDC_CLIENT_SECRET');
    expect(refusal({ BATON_OIDC_SCOPES: 'openid' })).toContain('BATON_OIDC_ISSUER');
  });

  it('refuses bad URLs and scopes', () => {
    expect(refusal({ ...MINIMAL, BATON_OIDC_ISSUER: 'not a url' })).toContain('BATON_OIDC_ISSUER');
    expect(refusal({ ...MINIMAL, BATON_OIDC_ISSUER: 'http://login.example.com' })).toMatch(
      /BATON_OIDC_ISSUER: must be an https/,
    );
    expect(refusal({ ...MINIMAL, BATON_OIDC_ISSUER: 'ftp://login.example.com' })).toContain('BATON_OIDC_ISSUER');
    expect(refusal({ ...MINIMAL, BATON_OIDC_ISSUER: `${ISSUER}?x=1` })).toContain(
      'BATON_OIDC_ISSUER: must not carry a query',
    );
    expect(refusal({ ...MINIMAL, BATON_OIDC_REDIRECT_URL: 'https://b.example.com/cb#x' })).toContain(
      'BATON_OIDC_REDIRECT_URL',
    );
    expect(refusal({ ...MINIMAL, BATON_OIDC_SCOPES: 'openid "quoted"' })).toContain('BATON_OIDC_SCOPES');
    // Plain http is fine on this host (a provider on loopback).
    expect(loadConfig({ ...MINIMAL, BATON_OIDC_ISSUER: 'http://127.0.0.1:9000' }).oidc?.issuer).toBe(
      'http://127.0.0.1:9000',
    );
  });

  it('reads the role map as group=role pairs or as JSON', () => {
    expect(loadConfig({ BATON_SSO_ROLE_MAP: 'ops-admins=admin, ops=operator' }).sso.roleMap).toEqual([
      { group: 'ops-admins', role: 'admin' },
      { group: 'ops', role: 'operator' },
    ]);
    // A group with = in it: split at the last one; commas need the JSON form.
    expect(loadConfig({ BATON_SSO_ROLE_MAP: 'cn=ops=operator' }).sso.roleMap).toEqual([
      { group: 'cn=ops', role: 'operator' },
    ]);
    expect(loadConfig({ BATON_SSO_ROLE_MAP: '{"cn=admins,ou=groups,dc=example": "admin"}' }).sso.roleMap).toEqual([
      { group: 'cn=admins,ou=groups,dc=example', role: 'admin' },
    ]);
    expect(refusal({ BATON_SSO_ROLE_MAP: 'ops=root' })).toContain('BATON_SSO_ROLE_MAP');
    expect(refusal({ BATON_SSO_ROLE_MAP: 'ops' })).toContain('BATON_SSO_ROLE_MAP');
    expect(refusal({ BATON_SSO_ROLE_MAP: '=admin' })).toContain('BATON_SSO_ROLE_MAP');
    expect(refusal({ BATON_SSO_ROLE_MAP: 'ops=admin,ops=viewer' })).toContain('mapped twice');
    expect(refusal({ BATON_SSO_ROLE_MAP: '{"ops": 1}' })).toContain('BATON_SSO_ROLE_MAP');
    expect(refusal({ BATON_SSO_ROLE_MAP: '{not json' })).toContain('BATON_SSO_ROLE_MAP');
  });

  it('reads team sync, and then needs every mapped group to be a team name', () => {
    expect(loadConfig({ BATON_SSO_TEAM_SYNC: 'true', BATON_SSO_ROLE_MAP: 'ops=operator' }).sso.teamSync).toBe(true);
    expect(refusal({ BATON_SSO_TEAM_SYNC: 'yes' })).toContain('BATON_SSO_TEAM_SYNC');
    expect(
      refusal({ BATON_SSO_TEAM_SYNC: 'true', BATON_SSO_ROLE_MAP: JSON.stringify({ ['x'.repeat(101)]: 'viewer' }) }),
    ).toContain('BATON_SSO_TEAM_SYNC');
  });
});
