import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createAuthService } from '../auth/auth.service.js';
import type { LoginThrottle } from '../auth/login-throttle.js';
import { UnauthenticatedError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { sha256Hex } from '../crypto/tokens.js';
import { SsoError } from './sso.errors.js';
import {
  createSsoService,
  type ExternalIdentity,
  roleFromGroups,
  type SsoSettings,
  usernameFor,
} from './sso.service.js';

// Sign-in through a provider never consults the password throttle; the auth service only needs one to exist.
const unusedThrottle: LoginThrottle = {
  begin: async () => ({ retryAfter: 0, attempt: 'unused' }),
  recordSuccess: async () => {},
};
const ROLE_MAP: SsoSettings['roleMap'] = [
  { group: 'admins', role: 'admin' },
  { group: 'ops', role: 'operator' },
  { group: 'readers', role: 'viewer' },
];

describe('role and username rules', () => {
  it('takes the strongest mapped role, viewer when nothing is mapped', () => {
    expect(roleFromGroups(['ops', 'admins'], ROLE_MAP)).toBe('admin');
    expect(roleFromGroups(['readers', 'ops'], ROLE_MAP)).toBe('operator');
    expect(roleFromGroups(['readers'], ROLE_MAP)).toBe('viewer');
    expect(roleFromGroups(['Admins', 'other'], ROLE_MAP)).toBe('viewer');
    expect(roleFromGroups([], [])).toBe('viewer');
  });

  it('takes preferred_username, else email, else subject: the first that fits as it is', () => {
    const id = (over: Partial<ExternalIdentity>): ExternalIdentity => ({
      provider: 'oidc',
      issuer: 'https://idp',
      subject: 'sub-1',
      groups: [],
      ...over,
    });
    expect(usernameFor(id({ preferredUsername: 'ann', email: 'ann@x.org' }))).toBe('ann');
    expect(usernameFor(id({ preferredUsername: 'Ann Smith', email: 'ann@x.org' }))).toBe('ann@x.org');
    expect(usernameFor(id({ preferredUsername: 'Ann Smith' }))).toBe('sub-1');
    expect(usernameFor(id({ subject: '-x' }))).toBeUndefined();
    expect(usernameFor(id({ subject: 'a'.repeat(65) }))).toBeUndefined();
  });
});

describe.each(DIALECTS)('single sign-on service on %s', (dialect) => {
  let tdb: TestDatabase;
  let now = Date.parse('2026-11-26T10:00:00.000Z');
  const clock = () => new Date(now);
  const build = (settings: Partial<SsoSettings> = {}) => {
    const auth = createAuthService({
      users: tdb.db.repos.users,
      tokens: tdb.db.repos.tokens,
      transaction: tdb.db.transaction,
      throttle: unusedThrottle,
      clock,
      tokenTtlSeconds: 3600,
    });
    return {
      auth,
      sso: createSsoService({
        users: tdb.db.repos.users,
        transaction: tdb.db.transaction,
        auth,
        settings: { roleMap: ROLE_MAP, teamSync: false, codeTtlSeconds: 60, ...settings },
        clock,
      }),
    };
  };
  let sso: ReturnType<typeof build>['sso'];
  let auth: ReturnType<typeof build>['auth'];
  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    ({ sso, auth } = build());
  });
  afterAll(() => tdb.drop());

  let n = 0;
  const identity = (over: Partial<ExternalIdentity> = {}): ExternalIdentity => ({
    provider: 'oidc',
    issuer: 'https://idp.example.com',
    subject: `subject-${++n}`,
    preferredUsername: `person${n}-${dialect}`,
    groups: [],
    ...over,
  });
  const audit = async (object: string) =>
    tdb.db.kysely.selectFrom('audit_entries').selectAll().where('object', '=', object).orderBy('seq').execute();

  it('creates the user at the first sign-in, linked by issuer + subject, and finds it afterwards', async () => {
    const who = identity({ email: 'someone@example.com', groups: ['ops'] });
    const user = await sso.signIn(who, '192.0.2.1');
    expect(user).toMatchObject({ username: who.preferredUsername, role: 'operator', email: 'someone@example.com' });
    const again = await sso.signIn({ ...who, preferredUsername: 'renamed' }, '192.0.2.1');
    expect(again.id).toBe(user.id);
    expect(again.username).toBe(who.preferredUsername);
    const link = await tdb.db.repos.userIdentities.find(who.issuer, who.subject);
    expect(link).toMatchObject({ provider: 'oidc', user_id: user.id });
    // The same subject at another issuer is another person.
    const elsewhere = await sso.signIn(
      { ...who, issuer: 'https://other-idp.example.com', preferredUsername: `other-${n}` },
      'x',
    );
    expect(elsewhere.id).not.toBe(user.id);
    // The password is random and unknown: password sign-in fails for it.
    const row = await tdb.db.repos.users.findById(user.id);
    expect(row?.password_hash).toMatch(/^scrypt\$/);
    const entries = await audit(user.id);
    expect(entries.map((e) => e.action)).toEqual(['user.create', 'auth.sso', 'auth.sso']);
    expect(entries[1]!.summary).toContain('192.0.2.1');
  });

  it('keeps the e-mail only when it is an address, and follows the provider’s changes', async () => {
    const who = identity({ email: 'not an address' });
    const user = await sso.signIn(who, 'x');
    expect(user.email).toBeNull();
    expect((await sso.signIn({ ...who, email: 'now@example.com' }, 'x')).email).toBe('now@example.com');
  });

  it('signs one identity in twice at once as one user', async () => {
    const who = identity({ groups: ['admins'] });
    const [a, b] = await Promise.all([sso.signIn(who, 'x'), sso.signIn(who, 'x')]);
    expect(a.id).toBe(b.id);
    const users = await tdb.db.kysely
      .selectFrom('users')
      .select('id')
      .where('username', '=', who.preferredUsername!)
      .execute();
    expect(users).toHaveLength(1);
  });

  it('refuses an identity it cannot name, or whose name a local user has, and audits the refusal', async () => {
    await expect(sso.signIn(identity({ preferredUsername: 'no spaces', subject: '-bad' }), 'x')).rejects.toMatchObject({
      reason: 'invalid_username',
    });
    const local = { id: newId('usr'), username: `local-${dialect}`, email: null, role: 'viewer' };
    await tdb.db.repos.users.insert({
      ...local,
      password_hash: 'x',
      created_at: clock().toISOString(),
      updated_at: clock().toISOString(),
    });
    const err = await sso
      .signIn(identity({ preferredUsername: local.username, groups: ['admins'] }), '198.51.100.7')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SsoError);
    expect(err).toBeInstanceOf(UnauthenticatedError);
    expect((err as SsoError).reason).toBe('username_taken');
    expect((await tdb.db.repos.users.findById(local.id))?.role).toBe('viewer');
    const refused = (await audit(local.id)).filter((e) => e.action === 'auth.sso_refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.actor).toBe('anonymous');
    expect(refused[0]!.summary).toContain('198.51.100.7');
    await expect(sso.signIn(identity({ subject: '' }), 'x')).rejects.toMatchObject({ reason: 'provider_error' });
    await expect(sso.signIn(identity({ subject: 's'.repeat(1025) }), 'x')).rejects.toMatchObject({
      reason: 'provider_error',
    });
  });

  it('moves the role with the groups at every sign-in, but never demotes the last admin', async () => {
    const fresh = await createTestDatabase(dialect);
    try {
      const a = createSsoService({
        users: fresh.db.repos.users,
        transaction: fresh.db.transaction,
        auth,
        settings: { roleMap: ROLE_MAP, teamSync: false, codeTtlSeconds: 60 },
        clock,
      });
      const who = identity({ groups: ['admins'] });
      const user = await a.signIn(who, 'x');
      expect(user.role).toBe('admin');
      // The only admin: the groups no longer say admin, yet the role stays (and the audit says why).
      expect((await a.signIn({ ...who, groups: ['ops'] }, 'x')).role).toBe('admin');
      const kept = (
        await fresh.db.kysely.selectFrom('audit_entries').selectAll().where('action', '=', 'user.update').execute()
      )[0];
      expect(kept?.summary).toContain('kept role admin');
      // Another admin exists now: the next sign-in demotes.
      await a.signIn(identity({ groups: ['admins'] }), 'x');
      expect((await a.signIn({ ...who, groups: ['ops'] }, 'x')).role).toBe('operator');
      expect((await a.signIn({ ...who, groups: [] }, 'x')).role).toBe('viewer');
    } finally {
      await fresh.drop();
    }
  });

  it('mirrors mapped groups into teams only when team sync is on', async () => {
    const who = identity({ groups: ['readers'] });
    await sso.signIn(who, 'x');
    expect(await tdb.db.repos.ssoTeams.findByNames(['readers'])).toEqual([]);
    const synced = build({ teamSync: true }).sso;
    const user = await synced.signIn(who, 'x');
    const [team] = await tdb.db.repos.ssoTeams.findByNames(['readers']);
    expect(team?.created_by).toBe('sso');
    expect(await tdb.db.repos.teams.teamIdsOf(user.id)).toEqual([team!.id]);
    await synced.signIn({ ...who, groups: ['ops'] }, 'x');
    const ops = (await tdb.db.repos.ssoTeams.findByNames(['ops']))[0]!;
    expect(await tdb.db.repos.teams.teamIdsOf(user.id)).toEqual([ops.id]);
    // Unmapped groups make no team.
    await synced.signIn({ ...who, groups: ['ops', 'stray'] }, 'x');
    expect(await tdb.db.repos.ssoTeams.findByNames(['stray'])).toEqual([]);
  });

  it('hands out one-time codes: stored hashed, single use, at most 60 s', async () => {
    const user = await sso.signIn(identity(), 'x');
    const code = await sso.createCode(user.id, 'saml');
    expect(await tdb.db.repos.ssoCodes.find(code)).toBeUndefined();
    expect(await tdb.db.repos.ssoCodes.find(sha256Hex(code))).toMatchObject({ user_id: user.id, method: 'saml' });
    const signedIn = await sso.exchange(code, '203.0.113.9');
    expect(signedIn.user.id).toBe(user.id);
    expect((await auth.authenticate(signedIn.token)).user.id).toBe(user.id);
    const login = (await audit(user.id)).find((e) => e.action === 'auth.login');
    expect(login?.summary).toContain('saml');
    await expect(sso.exchange(code, 'x')).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(sso.exchange('unknown', 'x')).rejects.toBeInstanceOf(UnauthenticatedError);

    // A lifetime over 60 s is cut to 60 s.
    const long = build({ codeTtlSeconds: 3600 }).sso;
    const late = await long.createCode(user.id, 'oidc');
    now += 60_000;
    await expect(long.exchange(late, 'x')).rejects.toBeInstanceOf(UnauthenticatedError);
    // A code whose user is gone does not work either.
    const gone = await sso.signIn(identity(), 'x');
    const orphan = await sso.createCode(gone.id, 'oidc');
    await tdb.db.repos.users.delete(gone.id);
    await expect(sso.exchange(orphan, 'x')).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('keeps handshake state by the hash of its handle, for one take, until it expires', async () => {
    const handle = await sso.saveState('oidc', { nonce: 'n1', code_verifier: 'v1' });
    expect(await tdb.db.repos.ssoStates.find(handle)).toBeUndefined();
    expect(await tdb.db.repos.ssoStates.find(sha256Hex(handle))).toBeDefined();
    expect(await sso.takeState('saml', handle)).toBeUndefined();
    expect(await sso.takeState('oidc', handle)).toEqual({ nonce: 'n1', code_verifier: 'v1' });
    expect(await sso.takeState('oidc', handle)).toBeUndefined();

    const stale = await sso.saveState('oidc', { nonce: 'n2' }, 30);
    now += 31_000;
    expect(await sso.takeState('oidc', stale)).toBeUndefined();
    // Saving clears expired handshakes.
    const old = await sso.saveState('saml', { request_id: 'r' }, 1);
    now += 2_000;
    await sso.saveState('saml', {});
    expect(await tdb.db.repos.ssoStates.find(sha256Hex(old))).toBeUndefined();
  });
});
