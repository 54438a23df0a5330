// The audit service decides who may read the trail (admins only), so no route can forget to ask.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createAuthorizer, type Principal } from '../authz/authorize.js';
import { systemClock } from '../common/clock.js';
import { ForbiddenError } from '../common/errors.js';
import { generateMasterKey, Keyring } from '../crypto/secret-box.js';
import { createSigningKeyStore } from '../keys/signing-key.js';
import { recordAudit } from './audit.chain.js';
import { collectAuditExport, createAuditService } from './audit.service.js';

const principal = (role: Principal['role']): Principal => ({
  id: `usr_01ARZ3NDEKTSV4RRFFQ69G5F${role.slice(0, 2).toUpperCase()}`,
  username: role,
  role,
});

describe.each(DIALECTS)('audit service on %s', (dialect) => {
  let tdb: TestDatabase;
  let audit: ReturnType<typeof createAuditService>;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    const { repos } = tdb.db;
    const signingKeys = createSigningKeyStore({
      serverKeys: repos.serverKeys,
      keyring: new Keyring(generateMasterKey()),
      clock: systemClock,
    });
    audit = createAuditService({
      audit: repos.audit,
      signingKeys,
      clock: systemClock,
      authz: createAuthorizer({ grants: repos.grants, teams: repos.teams }),
    });
    await tdb.db.transaction((r) =>
      recordAudit(
        r.audit,
        { actor: 'usr_1', action: 'team.create', object: 'team_1', summary: 'created team a' },
        systemClock,
      ),
    );
  });
  afterAll(() => tdb.drop());

  it.each(['operator', 'viewer'] as const)(
    'refuses an %s every read of the trail with ForbiddenError',
    async (role) => {
      const p = principal(role);
      for (const read of [() => audit.list(p, {}, { limit: 10 }), () => audit.verify(p), () => audit.export(p)]) {
        const err = await read().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ForbiddenError);
        expect((err as Error).message).toBe('this needs the admin role');
      }
    },
  );

  it('lets an admin list, verify and export it', async () => {
    const admin = principal('admin');
    expect((await audit.list(admin, {}, { limit: 10 })).items).toEqual([
      expect.objectContaining({ seq: 1, action: 'team.create' }),
    ]);
    expect(await audit.verify(admin)).toMatchObject({ ok: true, entries: 1 });
    expect((await collectAuditExport(await audit.export(admin))).entries).toHaveLength(1);
  });
});
