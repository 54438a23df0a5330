// Script and plugin sources run inside a project checkout. Checkouts come from the projects domain; here a
// stub "checks out" a fixture directory, and the real ansible-inventory runs the script or plugin config.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Principal, InventoryRefreshError, newId, type InventorySourceRunners } from '@baton/core';
import { DIALECTS, type TestDatabase } from '@baton/db/testing';
import { createInventoryServices } from '../inventories/inventory.wiring.js';
import { createHarness, type Harness } from '../testing/harness.js';

const fixture = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-project-fixture-'));
beforeAll(() => {
  fs.mkdirSync(path.join(fixture, 'inventory'));
  fs.writeFileSync(
    path.join(fixture, 'inventory', 'cmdb.sh'),
    '#!/bin/sh\necho \'{"app": {"hosts": ["a1", "a2"]}, "_meta": {"hostvars": {}}}\'\n',
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(fixture, 'inventory', 'hosts.generator.yml'),
    'plugin: ansible.builtin.generator\nhosts:\n  name: "{{ role }}-1"\nlayers:\n  role: [api, web, db]\n',
  );
  fs.writeFileSync(path.join(fixture, 'inventory', 'broken.sh'), '#!/bin/sh\necho "no cmdb today" >&2\nexit 1\n', {
    mode: 0o755,
  });
  fs.symlinkSync('/etc', path.join(fixture, 'escape'));
});
afterAll(() => fs.rmSync(fixture, { recursive: true, force: true }));

const copyFixture: InventorySourceRunners['checkout'] = async (_p, _projectId, dir) => {
  fs.cpSync(fixture, dir, { recursive: true, verbatimSymlinks: true });
};

describe.each(DIALECTS)('script and plugin inventory sources on %s', (dialect) => {
  let h: Harness;
  let tdb: TestDatabase;
  let services: ReturnType<typeof createInventoryServices>;
  let admin: Principal;
  const projectId = newId('prj');

  beforeAll(async () => {
    h = await createHarness(dialect);
    tdb = h.tdb;
    admin = { id: h.admin.id, username: 'root', role: 'admin' };
    services = createInventoryServices(tdb.db, {
      authz: h.services.authz,
      clock: () => new Date(),
      credentials: h.services.credentials,
      checkout: copyFixture,
    });
    const at = new Date().toISOString();
    await tdb.db.kysely
      .insertInto('projects')
      .values({
        id: projectId,
        name: `fixture ${projectId}`,
        git_url: 'https://example.invalid/repo.git',
        branch: 'main',
        credential_id: null,
        last_commit: null,
        synced_at: null,
        created_by: admin.id,
        created_at: at,
        updated_at: at,
      })
      .execute();
  });
  afterAll(() => h.close());

  const sourceFor = async (kind: 'script' | 'plugin', sourcePath: string) => {
    const inv = await services.inventories.create(admin, { name: `target ${newId('inv')}`, content: '[old]\nold1\n' });
    const src = await services.inventorySources.create(admin, {
      name: `src ${newId('src')}`,
      kind,
      inventory_id: inv.id,
      project_id: projectId,
      path: sourcePath,
    });
    return { inv, src };
  };

  it('refreshes from an executable script in the project', async () => {
    const { inv, src } = await sourceFor('script', 'inventory/cmdb.sh');
    const refreshed = await services.inventorySources.refresh(admin, src.id);
    expect(refreshed).toMatchObject({ host_count: 2, last_error: null });
    const hosts = await services.inventories.listHosts(admin, inv.id, { limit: 10 });
    expect(hosts.items).toEqual([
      { name: 'a1', groups: ['app'] },
      { name: 'a2', groups: ['app'] },
    ]);
  });

  it('refreshes from a plugin config file in the project', async () => {
    const { inv, src } = await sourceFor('plugin', 'inventory/hosts.generator.yml');
    expect(await services.inventorySources.refresh(admin, src.id)).toMatchObject({ host_count: 3 });
    expect((await services.inventories.get(admin, inv.id)).host_count).toBe(3);
  });

  it.each([
    ['a failing script', 'inventory/broken.sh', 'no cmdb today'],
    ['a path missing from the project', 'inventory/nope.sh', 'does not exist'],
    ['a symlink out of the checkout', 'escape/passwd', 'leads out of the project'],
  ])('records %s as last_error and leaves the inventory alone', async (_what, sourcePath, words) => {
    const { inv, src } = await sourceFor('script', sourcePath);
    const err = await services.inventorySources.refresh(admin, src.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InventoryRefreshError);
    expect((err as Error).message).toContain(words);
    expect((await services.inventorySources.get(admin, src.id)).last_error).toContain(words);
    expect((await services.inventories.get(admin, inv.id)).content).toBe('[old]\nold1\n');
  });
});
