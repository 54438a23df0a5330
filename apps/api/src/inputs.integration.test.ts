// The inputs working together through the API: a credential used by a project, a project whose checkout
// feeds a script inventory source, and the references that keep each of them from being deleted.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import { bearer, createHarness, type Harness } from './testing/harness.js';

const CMDB_SCRIPT =
  '#!/bin/sh\necho \'{"web": {"hosts": ["web-2", "web-1"]}, "db": {"hosts": ["db-1"]}, "_meta": {"hostvars": {}}}\'\n';

describe.each(DIALECTS)('inputs together on %s', (dialect) => {
  let h: Harness;
  let root: string;
  let repo: ReturnType<typeof createRepo>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    h = await createHarness(dialect);
    root = tempDir('baton-inputs');
    repo = createRepo(root);
    fs.mkdirSync(path.join(repo.dir, 'inventory'));
    fs.writeFileSync(path.join(repo.dir, 'inventory', 'cmdb.sh'), CMDB_SCRIPT, { mode: 0o755 });
    repo.git('add', 'inventory/cmdb.sh');
    repo.git('-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-q', '-m', 'inventory script');
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const as = () => bearer(h.admin.token);

  it('creates a project with a token credential, resolving the branch head through git', async () => {
    const cred = await h.http
      .post('/v1/credentials')
      .set(as())
      .send({ name: 'git token', type: 'token', inputs: { token: 'tok-123456' } });
    expect(cred.status).toBe(201);
    ids.cred = cred.body.id;
    const project = await h.http
      .post('/v1/projects')
      .set(as())
      .send({ name: 'ops', git_url: repo.url, credential_id: ids.cred });
    expect(project.status).toBe(201);
    expect(project.body.last_commit).toBe(repo.head());
    ids.project = project.body.id;
  });

  it('refreshes a script source from a real checkout of the project into its inventory', async () => {
    const inv = await h.http.post('/v1/inventories').set(as()).send({ name: 'from cmdb', content: 'placeholder\n' });
    expect(inv.status).toBe(201);
    ids.inventory = inv.body.id;
    const src = await h.http.post('/v1/inventory-sources').set(as()).send({
      name: 'cmdb',
      kind: 'script',
      inventory_id: ids.inventory,
      project_id: ids.project,
      path: 'inventory/cmdb.sh',
    });
    expect(src.status).toBe(201);
    ids.source = src.body.id;

    const refreshed = await h.http.post(`/v1/inventory-sources/${ids.source}/refresh`).set(as());
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ host_count: 3, last_error: null });
    const hosts = await h.http.get(`/v1/inventories/${ids.inventory}/hosts`).set(as());
    expect(hosts.status).toBe(200);
    expect(hosts.body.map((x: { name: string }) => x.name).sort()).toEqual(['db-1', 'web-1', 'web-2']);
  });

  it('refuses to delete what is still referenced, naming the referrer', async () => {
    const cred = await h.http.delete(`/v1/credentials/${ids.cred}`).set(as());
    expect(cred.status).toBe(409);
    expect(cred.body.detail).toContain(ids.project);
    const project = await h.http.delete(`/v1/projects/${ids.project}`).set(as());
    expect(project.status).toBe(409);
    expect(project.body.detail).toContain(ids.source);
    expect((await h.http.delete(`/v1/inventories/${ids.inventory}`).set(as())).status).toBe(409);
  });

  it('deletes each once nothing references it any more', async () => {
    for (const url of [
      `/v1/inventory-sources/${ids.source}`,
      `/v1/projects/${ids.project}`,
      `/v1/credentials/${ids.cred}`,
      `/v1/inventories/${ids.inventory}`,
    ]) {
      expect({ url, status: (await h.http.delete(url).set(as())).status }).toEqual({ url, status: 204 });
    }
  });
});
