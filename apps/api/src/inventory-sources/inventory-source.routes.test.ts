import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { startHttpsServer, type TestHttpsServer } from '@baton/executor/testing';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const UNKNOWN = {
  inv: 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  src: 'src_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  prj: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  cred: 'cred_01ARZ3NDEKTSV4RRFFQ69G5FAV',
};
const INI = '[old]\nold1\nold2\n';
const CMDB = {
  web: { hosts: ['w1', 'w2', 'w3'] },
  db: { hosts: ['d1'] },
  _meta: { hostvars: { w1: { ansible_host: '10.9.0.1' } } },
};
let seq = 0;
const uniq = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;

let server: TestHttpsServer;
beforeAll(async () => {
  server = await startHttpsServer();
  server.routes.set('/cmdb', { body: JSON.stringify(CMDB) });
  server.routes.set('/down', { status: 503, body: '{}' });
  server.routes.set('/garbage', { body: '{"web": 42}' });
});
afterAll(() => server.close());

describe.each(DIALECTS)('inventory sources on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { inventoryUrlCa: server.ca });
  });
  afterAll(() => h.close());

  const inventory = async (token: string) => {
    const res = await h.http
      .post('/v1/inventories')
      .set(bearer(token))
      .send({ name: uniq('target'), content: INI });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const credential = async (token: string, type: 'token' | 'vault_password') => {
    const inputs = type === 'token' ? { token: 'cmdb-secret-token' } : { password: 'vault-secret' };
    const res = await h.http
      .post('/v1/credentials')
      .set(bearer(token))
      .send({ name: uniq(type), type, inputs });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const createSource = async (token: string, body: Record<string, unknown>) => {
    const res = await h.http
      .post('/v1/inventory-sources')
      .set(bearer(token))
      .send({ name: uniq('source'), kind: 'url', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; name: string; inventory_id: string };
  };

  it('creates, lists, gets, updates and deletes a url source, with a manage grant and audit entries', async () => {
    const op = await h.user('operator');
    const inv = await inventory(op.token);
    const cred = await credential(op.token, 'token');
    const res = await h.http
      .post('/v1/inventory-sources')
      .set(bearer(op.token))
      .send({
        name: uniq('cmdb'),
        kind: 'url',
        inventory_id: inv,
        url: `${server.origin}/cmdb`,
        credential_id: cred,
        refresh_interval_s: 300,
      });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v1/inventory-sources/${res.body.id}`);
    expect(res.body).toMatchObject({
      kind: 'url',
      inventory_id: inv,
      project_id: null,
      path: null,
      url: `${server.origin}/cmdb`,
      credential_id: cred,
      refresh_interval_s: 300,
      refreshed_at: null,
      host_count: null,
      last_error: null,
      created_by: op.id,
    });
    const id = res.body.id as string;
    expect((await h.http.get(`/v1/grants?object=${id}`).set(bearer(op.token))).body).toEqual([
      expect.objectContaining({ subject: op.id, level: 'manage' }),
    ]);
    expect((await h.http.get(`/v1/inventory-sources/${id}`).set(bearer(op.token))).body).toEqual(res.body);
    expect(
      (await h.http.get('/v1/inventory-sources').set(bearer(op.token))).body.map((s: { id: string }) => s.id),
    ).toEqual([id]);
    const other = await h.user('operator');
    expect((await h.http.get('/v1/inventory-sources').set(bearer(other.token))).body).toEqual([]);

    const renamed = uniq('renamed');
    const put = await h.http
      .put(`/v1/inventory-sources/${id}`)
      .set(bearer(op.token))
      .send({ name: renamed, kind: 'url', inventory_id: inv, url: `${server.origin}/cmdb` });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, name: renamed, credential_id: null, refresh_interval_s: null });
    expect((await h.http.delete(`/v1/inventory-sources/${id}`).set(bearer(op.token))).status).toBe(204);
    expectProblem(await h.http.get(`/v1/inventory-sources/${id}`).set(bearer(op.token)), 404);
    const audit = await h.http.get(`/v1/audit?object=${id}`).set(bearer(h.admin.token));
    expect(audit.body.map((e: { action: string }) => e.action)).toEqual([
      'inventory_source.delete',
      'inventory_source.update',
      'inventory_source.create',
    ]);
  });

  it('refreshes a url source from a local HTTPS server into its inventory, sending the token', async () => {
    const op = await h.user('operator');
    const inv = await inventory(op.token);
    const src = await createSource(op.token, {
      inventory_id: inv,
      url: `${server.origin}/cmdb`,
      credential_id: await credential(op.token, 'token'),
    });
    const res = await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(op.token));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: src.id, host_count: 4, last_error: null, refreshed_at: expect.any(String) });
    expect(server.authorizations.at(-1)).toBe('Bearer cmdb-secret-token');
    const stored = await h.http.get(`/v1/inventories/${inv}`).set(bearer(op.token));
    expect(stored.body).toMatchObject({ format: 'json', host_count: 4 });
    const hosts = await h.http.get(`/v1/inventories/${inv}/hosts`).set(bearer(op.token));
    expect(hosts.body).toEqual([
      { name: 'd1', groups: ['db'] },
      { name: 'w1', groups: ['web'] },
      { name: 'w2', groups: ['web'] },
      { name: 'w3', groups: ['web'] },
    ]);
    // What was stored reads back through the stored-inventory path.
    const reread = await h.http
      .put(`/v1/inventories/${inv}`)
      .set(bearer(op.token))
      .send({ name: stored.body.name, content: stored.body.content });
    expect(reread.body).toMatchObject({ host_count: 4, format: 'json' });
    const audit = await h.http.get(`/v1/audit?object=${src.id}`).set(bearer(h.admin.token));
    expect(audit.body[0]).toMatchObject({ action: 'inventory_source.refresh', actor: op.id });
  });

  it.each([
    ['an HTTP error', '/down', 'HTTP 503'],
    ['JSON that is not an inventory script', '/garbage', 'not inventory-script JSON'],
  ])('answers 422 for %s, records last_error and keeps the last good content', async (_what, route, words) => {
    const inv = await inventory(h.admin.token);
    const src = await createSource(h.admin.token, { inventory_id: inv, url: `${server.origin}${route}` });
    const res = await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(h.admin.token));
    expectProblem(res, 422);
    expect(res.body.type).toBe('urn:baton:problem:inventory-refresh-failed');
    expect(res.body.detail).toContain(words);
    const after = await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(h.admin.token));
    expect(after.body.last_error).toContain(words);
    expect(after.body.refreshed_at).toBeNull();
    expect((await h.http.get(`/v1/inventories/${inv}`).set(bearer(h.admin.token))).body).toMatchObject({
      content: INI,
      host_count: 2,
    });
    const audit = await h.http.get(`/v1/audit?object=${src.id}`).set(bearer(h.admin.token));
    expect(audit.body[0]).toMatchObject({ action: 'inventory_source.refresh_failed' });
  });

  it('keeps the good content from an earlier refresh when a later one fails', async () => {
    const inv = await inventory(h.admin.token);
    const src = await createSource(h.admin.token, { inventory_id: inv, url: `${server.origin}/cmdb` });
    expect((await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(h.admin.token))).status).toBe(200);
    const good = (await h.http.get(`/v1/inventories/${inv}`).set(bearer(h.admin.token))).body;
    const first = (await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(h.admin.token))).body;
    expect(
      (
        await h.http
          .put(`/v1/inventory-sources/${src.id}`)
          .set(bearer(h.admin.token))
          .send({ name: src.name, kind: 'url', inventory_id: inv, url: `${server.origin}/down` })
      ).status,
    ).toBe(200);
    expectProblem(await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(h.admin.token)), 422);
    expect((await h.http.get(`/v1/inventories/${inv}`).set(bearer(h.admin.token))).body).toEqual(good);
    const after = (await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(h.admin.token))).body;
    expect(after).toMatchObject({
      refreshed_at: first.refreshed_at,
      host_count: 4,
      last_error: expect.stringContaining('HTTP 503'),
    });
  });

  it('answers 409 when deleting an inventory a source targets, and allows it once the source is gone', async () => {
    const inv = await inventory(h.admin.token);
    const src = await createSource(h.admin.token, { inventory_id: inv, url: `${server.origin}/cmdb` });
    const res = await h.http.delete(`/v1/inventories/${inv}`).set(bearer(h.admin.token));
    expectProblem(res, 409);
    expect(res.body.detail).toContain(src.id);
    expect((await h.http.delete(`/v1/inventory-sources/${src.id}`).set(bearer(h.admin.token))).status).toBe(204);
    expect((await h.http.delete(`/v1/inventories/${inv}`).set(bearer(h.admin.token))).status).toBe(204);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['plain http', { url: 'http://127.0.0.1/cmdb' }, 'body.url'],
    ['the cloud metadata address', { url: 'https://169.254.169.254/latest/' }, 'body.url'],
    ['a link-local IPv6 address', { url: 'https://[fe80::1]/' }, 'body.url'],
    ['the GCP metadata host', { url: 'https://metadata.google.internal/' }, 'body.url'],
    ['no url', {}, 'body.url'],
    ['a project on a url source', { url: 'https://127.0.0.1/x', project_id: UNKNOWN.prj }, 'body.project_id'],
    ['a script without project and path', { kind: 'script' }, 'body.project_id'],
    ['an absolute path', { kind: 'plugin', project_id: UNKNOWN.prj, path: '/etc/passwd' }, 'body.path'],
    ['a path with ..', { kind: 'script', project_id: UNKNOWN.prj, path: 'inv/../../x' }, 'body.path'],
    ['an unknown kind', { kind: 'cloud' }, 'body.kind'],
    [
      'a refresh interval under 60 s',
      { url: 'https://127.0.0.1/x', refresh_interval_s: 59 },
      'body.refresh_interval_s',
    ],
    ['a malformed credential id', { url: 'https://127.0.0.1/x', credential_id: 'token' }, 'body.credential_id'],
    ['an unknown field', { url: 'https://127.0.0.1/x', schedule: 'hourly' }, 'body'],
  ])('rejects a source with %s: 400', async (_what, body, path) => {
    const inv = await inventory(h.admin.token);
    const res = await h.http
      .post('/v1/inventory-sources')
      .set(bearer(h.admin.token))
      .send({ name: uniq('bad'), kind: 'url', inventory_id: inv, ...body });
    expectProblem(res, 400, path);
  });

  // A URL that does not parse once made a refinement throw (a 500); IPv6 forms of the metadata address were saved.
  const BAD_URLS: Array<[string, string, string]> = [
    ['x', 'x', 'https'],
    ['not a url', 'not a url', 'spaces'],
    ['1 MB of A', 'A'.repeat(1_000_000), 'characters'],
    ['https:// without a host', 'https://', 'https'],
    ['the IPv4-mapped metadata address', 'https://[::ffff:169.254.169.254]/', 'IPv4-mapped'],
    ['the IPv4-mapped metadata address in hex', 'https://[::ffff:a9fe:a9fe]/', 'IPv4-mapped'],
    ['the IPv4-compatible metadata address', 'https://[::169.254.169.254]/', 'IPv4-compatible'],
    ['the NAT64 metadata address', 'https://[64:ff9b::a9fe:a9fe]/', 'NAT64'],
    ['a local-use NAT64 metadata address', 'https://[64:ff9b:1::a9fe:a9fe]/', 'NAT64'],
    ['a 6to4 metadata address', 'https://[2002:a9fe:a9fe::1]/', '6to4'],
    ['the metadata address as one hex number', 'https://0xa9fea9fe/', 'link-local'],
    ['the EC2 metadata host name', 'https://instance-data/', 'metadata'],
  ];
  describe.each(['/v1', ''])('url checks on %s/inventory-sources', (prefix) => {
    it.each(BAD_URLS)('POST and PUT refuse %s: 400 at body.url, never a 500', async (_what, url, words) => {
      const inv = await inventory(h.admin.token);
      const body = { name: uniq('bad url'), kind: 'url', inventory_id: inv, url };
      const created = await h.http.post(`${prefix}/inventory-sources`).set(bearer(h.admin.token)).send(body);
      expectProblem(created, 400, 'body.url');
      expect(created.body.errors.find((e: { path: string }) => e.path === 'body.url').message).toContain(words);
      const src = await createSource(h.admin.token, { inventory_id: inv, url: `${server.origin}/cmdb` });
      const replaced = await h.http.put(`${prefix}/inventory-sources/${src.id}`).set(bearer(h.admin.token)).send(body);
      expectProblem(replaced, 400, 'body.url');
      expect((await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(h.admin.token))).body.url).toBe(
        `${server.origin}/cmdb`,
      );
    });
  });

  it('rejects a credential that is not a token (400) and unknown referenced ids (404)', async () => {
    const inv = await inventory(h.admin.token);
    const base = { name: uniq('refs'), kind: 'url', inventory_id: inv, url: `${server.origin}/cmdb` };
    const vault = await credential(h.admin.token, 'vault_password');
    expectProblem(
      await h.http
        .post('/v1/inventory-sources')
        .set(bearer(h.admin.token))
        .send({ ...base, credential_id: vault }),
      400,
      'body.credential_id',
    );
    expectProblem(
      await h.http
        .post('/v1/inventory-sources')
        .set(bearer(h.admin.token))
        .send({ ...base, credential_id: UNKNOWN.cred }),
      404,
    );
    expectProblem(
      await h.http
        .post('/v1/inventory-sources')
        .set(bearer(h.admin.token))
        .send({ ...base, inventory_id: UNKNOWN.inv }),
      404,
    );
    expectProblem(
      await h.http
        .post('/v1/inventory-sources')
        .set(bearer(h.admin.token))
        .send({ ...base, kind: 'script', url: undefined, project_id: UNKNOWN.prj, path: 'inv.sh' }),
      404,
    );
    expect(
      (await h.http.get('/v1/inventory-sources?limit=500').set(bearer(h.admin.token))).body.map(
        (s: { name: string }) => s.name,
      ),
    ).not.toContain(base.name);
  });

  it('answers 404 for unknown sources on every route', async () => {
    const admin = bearer(h.admin.token);
    const inv = await inventory(h.admin.token);
    expectProblem(await h.http.get(`/v1/inventory-sources/${UNKNOWN.src}`).set(admin), 404);
    expectProblem(
      await h.http
        .put(`/v1/inventory-sources/${UNKNOWN.src}`)
        .set(admin)
        .send({ name: uniq('x'), kind: 'url', inventory_id: inv, url: 'https://127.0.0.1/x' }),
      404,
    );
    expectProblem(await h.http.delete(`/v1/inventory-sources/${UNKNOWN.src}`).set(admin), 404);
    expectProblem(await h.http.post(`/v1/inventory-sources/${UNKNOWN.src}/refresh`).set(admin), 404);
    expectProblem(await h.http.get('/v1/inventory-sources/nope').set(admin), 400, 'path.id');
  });

  it('applies grants: viewers never create, strangers get 404, use may refresh but not change, the target inventory needs manage', async () => {
    const owner = await h.user('operator');
    const inv = await inventory(owner.token);
    const src = await createSource(owner.token, { inventory_id: inv, url: `${server.origin}/cmdb` });
    const viewer = await h.user('viewer');
    expectProblem(
      await h.http
        .post('/v1/inventory-sources')
        .set(bearer(viewer.token))
        .send({ name: uniq('v'), kind: 'url', inventory_id: inv, url: 'https://127.0.0.1/x' }),
      403,
    );
    const stranger = await h.user('operator');
    expectProblem(await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(stranger.token)), 404);
    expectProblem(await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(stranger.token)), 404);
    // Pointing a new source at someone else's inventory: invisible, so 404.
    expectProblem(
      await h.http
        .post('/v1/inventory-sources')
        .set(bearer(stranger.token))
        .send({ name: uniq('s'), kind: 'url', inventory_id: inv, url: 'https://127.0.0.1/x' }),
      404,
    );
    expect(
      (
        await h.http
          .post('/v1/grants')
          .set(bearer(owner.token))
          .send({ subject: stranger.id, object: src.id, level: 'use' })
      ).status,
    ).toBe(201);
    expect((await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(stranger.token))).status).toBe(200);
    expectProblem(await h.http.delete(`/v1/inventory-sources/${src.id}`).set(bearer(stranger.token)), 403);
    // A viewer holding use still cannot refresh: a refresh runs code and rewrites an inventory.
    expect(
      (
        await h.http
          .post('/v1/grants')
          .set(bearer(owner.token))
          .send({ subject: viewer.id, object: src.id, level: 'use' })
      ).status,
    ).toBe(201);
    expect((await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(viewer.token))).status).toBe(200);
    expectProblem(await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(viewer.token)), 403);
  });

  it('answers 422 when the project cannot be checked out, records the error and keeps the inventory', async () => {
    // A project whose repository has gone: the checkout of its last commit fails inside the refresh.
    await h.tdb.db.kysely
      .insertInto('projects')
      .values({
        id: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAW',
        name: uniq('project'),
        git_url: 'file:///nonexistent/baton/repo',
        branch: 'main',
        credential_id: null,
        last_commit: 'a'.repeat(40),
        synced_at: null,
        created_by: h.admin.id,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
    const inv = await inventory(h.admin.token);
    const src = await createSource(h.admin.token, {
      kind: 'script',
      inventory_id: inv,
      project_id: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAW',
      path: 'inventory.sh',
    });
    const res = await h.http.post(`/v1/inventory-sources/${src.id}/refresh`).set(bearer(h.admin.token));
    expectProblem(res, 422);
    const after = await h.http.get(`/v1/inventory-sources/${src.id}`).set(bearer(h.admin.token));
    expect(after.body.last_error).toEqual(expect.stringContaining('repo'));
    expect(after.body.refreshed_at).toBeNull();
    expect((await h.http.get(`/v1/inventories/${inv}`).set(bearer(h.admin.token))).body.content).toBe(INI);
  });
});
