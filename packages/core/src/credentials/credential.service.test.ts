import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CredentialType, Role } from '@baton/contracts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { systemClock } from '../common/clock.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { generateMasterKey, Keyring } from '../crypto/secret-box.js';
import { createCredentialService, type CredentialUse } from './credential.service.js';

const principal = (role: Role): Principal => ({
  id: newId('usr'),
  username: `${role}-${Math.random().toString(36).slice(2)}`,
  role,
});
let seq = 0;
const credName = () => `cred ${++seq} ${Date.now().toString(36)}`;

describe.each(DIALECTS)('credential service on %s', (dialect) => {
  let tdb: TestDatabase;
  // What the fake usedBy answers, per credential id.
  const uses = new Map<string, CredentialUse[]>();
  const keyring = new Keyring(generateMasterKey());
  const build = (authzOverride?: Partial<ReturnType<typeof createAuthorizer>>) => {
    const authz = { ...createAuthorizer({ grants: tdb.db.repos.grants, teams: tdb.db.repos.teams }), ...authzOverride };
    return createCredentialService({
      credentials: tdb.db.repos.credentials,
      transaction: tdb.db.transaction,
      authz,
      keyring,
      clock: systemClock,
      usedBy: async (id) => uses.get(id) ?? [],
    });
  };
  let service: ReturnType<typeof build>;
  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    service = build();
  });
  afterAll(() => tdb.drop());

  const createToken = (p: Principal, token = 'tok-secret') =>
    service.create(p, { name: credName(), type: 'token', inputs: { token } });
  const grant = (subject: Principal, object: string, level: 'use' | 'manage') =>
    tdb.db.repos.grants.insert({
      id: newId('grant'),
      subject_id: subject.id,
      object_id: object,
      level,
      created_at: new Date().toISOString(),
      created_by: 'test',
    });

  it('reveals every input in clear, and 404s an unknown id', async () => {
    const owner = principal('operator');
    const c = await service.create(owner, {
      name: credName(),
      type: 'become_password',
      inputs: { password: 'pw 1 ', method: 'sudo', user: 'root' },
    });
    expect(await service.reveal(c.id)).toEqual({
      id: c.id,
      name: c.name,
      type: 'become_password',
      inputs: { password: 'pw 1 ', method: 'sudo', user: 'root' },
    });
    await expect(service.reveal(newId('cred'))).rejects.toBeInstanceOf(NotFoundError);
  });

  it.each<[string, Role, 'use' | 'manage' | null | 'creator']>([
    ['its creator', 'operator', 'creator'],
    ['an admin without grants', 'admin', null],
    ['an operator holding use', 'operator', 'use'],
    ['a viewer holding use (using is not changing)', 'viewer', 'use'],
  ])('requireUsable lets %s use it and answers the revealed credential', async (_who, role, level) => {
    const owner = principal('operator');
    const caller = level === 'creator' ? owner : principal(role);
    const c = await createToken(owner, 'usable-secret');
    if (level === 'use' || level === 'manage') await grant(caller, c.id, level);
    const revealed = await service.requireUsable(caller, c.id, 'body.credential_id', ['token', 'ssh_key']);
    expect(revealed).toEqual({ id: c.id, name: c.name, type: 'token', inputs: { token: 'usable-secret' } });
  });

  it('requireUsable answers 404 alike for an unknown credential and one the caller holds no grant on', async () => {
    const c = await createToken(principal('operator'));
    const stranger = principal('operator');
    const errors = await Promise.all(
      [c.id, newId('cred')].map((id) =>
        service.requireUsable(stranger, id, 'body.credential_id', ['token']).catch((e: unknown) => e),
      ),
    );
    for (const err of errors) expect(err).toBeInstanceOf(NotFoundError);
    // The two messages differ only in the id, so they do not tell an existing credential from an unknown one.
    expect((errors[0] as Error).message).toBe(`credential ${c.id} not found`);
    expect((errors[1] as Error).message).toMatch(/^credential cred_\w+ not found$/);
  });

  it('requireUsable passes a 403 of the authorizer through (e.g. a grant level that does not allow use)', async () => {
    const c = await createToken(principal('operator'));
    const refusing = build({
      requireVisible: async () => {
        throw new ForbiddenError('no use grant');
      },
    });
    await expect(
      refusing.requireUsable(principal('operator'), c.id, 'body.credential_id', ['token']),
    ).rejects.toBeInstanceOf(ForbiddenError);
  });

  it.each<[CredentialType[], string]>([
    [['ssh_key'], 'must be a credential of type ssh_key'],
    [['vault_password', 'env'], 'must be a credential of type vault_password or env'],
  ])('requireUsable refuses a token credential where %j is allowed: 400 at the field', async (allowed, message) => {
    const owner = principal('operator');
    const c = await createToken(owner);
    const err = await service.requireUsable(owner, c.id, 'body.ssh_credential_id', allowed).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).errors).toEqual([{ path: 'body.ssh_credential_id', message }]);
  });

  it('refuses to remove a credential while usedBy names users of it (those the caller can see), and removes it once unused', async () => {
    const owner = principal('operator');
    const c = await createToken(owner);
    uses.set(c.id, [
      { kind: 'project', id: 'prj_1', name: 'site' },
      { kind: 'inventory source', id: 'src_2', name: 'aws' },
    ]);
    // The owner can see the project (a grant on it) but not the source: the source is only counted.
    await tdb.db.repos.grants.insert({
      id: `grant_${c.id}`,
      subject_id: owner.id,
      object_id: 'prj_1',
      level: 'use',
      created_at: new Date().toISOString(),
      created_by: owner.id,
    });
    const err = await service.remove(owner, c.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toBe('credential is used by project prj_1 (site), 1 more you cannot see');
    expect(await tdb.db.repos.credentials.findById(c.id)).toBeDefined();
    uses.delete(c.id);
    await service.remove(owner, c.id);
    expect(await tdb.db.repos.credentials.findById(c.id)).toBeUndefined();
    expect(await tdb.db.repos.grants.levelsOn([owner.id], c.id)).toEqual([]);
  });

  it('refuses an update whose stored secrets changed since it read them (409), leaving the other change in place', async () => {
    const owner = principal('operator');
    const c = await createToken(owner, 'first');
    const racing = build({
      // Another update lands between this update's read (the row handed to the check) and its write.
      requireVisible: async <T>(_p: Principal, _need: unknown, found: { row: T | null | undefined }) => {
        await tdb.db.repos.credentials.update(c.id, { secret_inputs_enc: 'v1.other.writer.was.here' });
        return found.row as T;
      },
    });
    await expect(racing.update(owner, c.id, { inputs: { token: 'second' } })).rejects.toBeInstanceOf(ConflictError);
    expect((await tdb.db.repos.credentials.findById(c.id))?.secret_inputs_enc).toBe('v1.other.writer.was.here');
  });
});
