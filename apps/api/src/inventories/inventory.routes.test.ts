import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const UNKNOWN_INVENTORY = 'inv_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const INI = '[web]\nweb1 ansible_host=10.0.0.1\nweb2\n\n[db]\ndb1\n';
const YAML = 'all:\n  children:\n    web:\n      hosts:\n        web1:\n        web2:\n        web3:\n';
let seq = 0;
const invName = (stem = 'inv') => `${stem} ${++seq} ${Date.now().toString(36)}`;

describe.each(DIALECTS)('inventories on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(() => h.close());

  const create = async (token: string, content = INI, name = invName()) => {
    const res = await h.http.post('/v1/inventories').set(bearer(token)).send({ name, content });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, name, res };
  };

  it('stores an INI inventory parsed by ansible-inventory, with its groups, host count and a manage grant', async () => {
    const op = await h.user('operator');
    const inv = await create(op.token);
    expect(inv.res.headers.location).toBe(`/v1/inventories/${inv.id}`);
    expect(inv.id).toMatch(/^inv_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(inv.res.body).toMatchObject({
      name: inv.name,
      format: 'ini',
      host_count: 3,
      created_by: op.id,
      content: INI,
    });
    expect(inv.res.body.groups).toEqual(
      expect.arrayContaining([
        { name: 'web', hosts: ['web1', 'web2'], children: [] },
        { name: 'db', hosts: ['db1'], children: [] },
      ]),
    );
    const grants = await h.http.get(`/v1/grants?object=${inv.id}`).set(bearer(op.token));
    expect(grants.body).toEqual([expect.objectContaining({ subject: op.id, level: 'manage' })]);
    const got = await h.http.get(`/v1/inventories/${inv.id}`).set(bearer(op.token));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(inv.res.body);
  });

  it('lists hosts with their groups in name order, paged, and lists inventories without content', async () => {
    const op = await h.user('operator');
    const inv = await create(op.token);
    const hosts = await h.http.get(`/v1/inventories/${inv.id}/hosts`).set(bearer(op.token));
    expect(hosts.status).toBe(200);
    expect(hosts.body).toEqual([
      { name: 'db1', groups: ['db'] },
      { name: 'web1', groups: ['web'] },
      { name: 'web2', groups: ['web'] },
    ]);
    const first = await h.http.get(`/v1/inventories/${inv.id}/hosts?limit=2`).set(bearer(op.token));
    expect(first.body.map((x: { name: string }) => x.name)).toEqual(['db1', 'web1']);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string);
    expect(next).not.toBeNull();
    expect((await h.http.get(next![1]!).set(bearer(op.token))).body).toEqual([{ name: 'web2', groups: ['web'] }]);
    const list = await h.http.get('/v1/inventories').set(bearer(op.token));
    expect(list.status).toBe(200);
    expect(list.body.map((x: { id: string }) => x.id)).toEqual([
      inv.id,
      ...list.body.slice(1).map((x: { id: string }) => x.id),
    ]);
    expect(list.body[0]).not.toHaveProperty('content');
    expect(list.body[0]).toMatchObject({ id: inv.id, host_count: 3, format: 'ini' });
  });

  it('pages hosts past long and non-ASCII names by following the Link the server issued', async () => {
    const op = await h.user('operator');
    // Each name makes a cursor of about 4 000 base64url characters: a server-issued cursor must never be refused.
    const names = ['a', 'b', 'c'].map((c) => `${c}${'h'.repeat(2990)}é.example`).sort();
    const inv = await create(op.token, `${names.join('\n')}\n`);
    const seen: string[] = [];
    let next: string | undefined = `/v1/inventories/${inv.id}/hosts?limit=1`;
    while (next) {
      const res: { status: number; body: unknown; headers: Record<string, string> } = await h.http
        .get(next)
        .set(bearer(op.token));
      expect(res.status).toBe(200);
      seen.push(...(res.body as Array<{ name: string }>).map((x) => x.name));
      next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
    }
    expect(seen).toEqual(names);
  });

  it('shows each operator only the inventories they hold a grant on', async () => {
    const [a, b] = [await h.user('operator'), await h.user('operator')];
    const mine = await create(a.token);
    const theirs = await create(b.token);
    const ids = (await h.http.get('/v1/inventories?limit=500').set(bearer(a.token))).body.map(
      (x: { id: string }) => x.id,
    );
    expect(ids).toContain(mine.id);
    expect(ids).not.toContain(theirs.id);
    // Not visible: 404 on every route, exactly like an unknown id.
    expectProblem(await h.http.get(`/v1/inventories/${theirs.id}`).set(bearer(a.token)), 404);
    expectProblem(await h.http.get(`/v1/inventories/${theirs.id}/hosts`).set(bearer(a.token)), 404);
    expectProblem(
      await h.http.put(`/v1/inventories/${theirs.id}`).set(bearer(a.token)).send({ name: invName(), content: INI }),
      404,
    );
    expectProblem(await h.http.delete(`/v1/inventories/${theirs.id}`).set(bearer(a.token)), 404);
    // A use grant lets them read but not change it.
    expect(
      (await h.http.post('/v1/grants').set(bearer(b.token)).send({ subject: a.id, object: theirs.id, level: 'use' }))
        .status,
    ).toBe(201);
    expect((await h.http.get(`/v1/inventories/${theirs.id}`).set(bearer(a.token))).status).toBe(200);
    expectProblem(
      await h.http.put(`/v1/inventories/${theirs.id}`).set(bearer(a.token)).send({ name: invName(), content: INI }),
      403,
    );
    expectProblem(await h.http.delete(`/v1/inventories/${theirs.id}`).set(bearer(a.token)), 403);
  });

  it('refuses a viewer creating an inventory (403) and anyone without a token (401)', async () => {
    const viewer = await h.user('viewer');
    expectProblem(
      await h.http.post('/v1/inventories').set(bearer(viewer.token)).send({ name: invName(), content: INI }),
      403,
    );
    expectProblem(await h.http.post('/v1/inventories').send({ name: invName(), content: INI }), 401);
  });

  it('answers 400 with ansible’s message for content it cannot parse, and stores nothing', async () => {
    const name = invName('broken');
    const res = await h.http.post('/v1/inventories').set(bearer(h.admin.token)).send({ name, content: '[web\nweb1\n' });
    expectProblem(res, 400, 'body.content');
    expect(res.body.detail).toContain('Failed to parse inventory.ini with ini plugin');
    const yaml = await h.http
      .post('/v1/inventories')
      .set(bearer(h.admin.token))
      .send({ name, content: 'all:\n  hosts: [a, b\n' });
    expectProblem(yaml, 400, 'body.content');
    expect(yaml.body.detail).toContain('yaml plugin');
    const all = (await h.http.get('/v1/inventories?limit=500').set(bearer(h.admin.token))).body.map(
      (x: { name: string }) => x.name,
    );
    expect(all).not.toContain(name);
  });

  it.each<[string, unknown, string]>([
    ['no name', { content: INI }, 'body.name'],
    ['a blank name', { name: '  ', content: INI }, 'body.name'],
    ['no content', { name: 'x' }, 'body.content'],
    ['numeric content', { name: 'x', content: 5 }, 'body.content'],
    ['an unknown field', { name: 'x', content: INI, hosts: [] }, 'body'],
  ])('rejects an inventory with %s: 400', async (_what, body, path) => {
    expectProblem(
      await h.http
        .post('/v1/inventories')
        .set(bearer(h.admin.token))
        .send(body as object),
      400,
      path,
    );
  });

  it('updates name and content, replacing the stored hosts; a bad update keeps the old content', async () => {
    const op = await h.user('operator');
    const inv = await create(op.token);
    const renamed = invName('renamed');
    const res = await h.http
      .put(`/v1/inventories/${inv.id}`)
      .set(bearer(op.token))
      .send({ name: renamed, content: YAML });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: inv.id, name: renamed, format: 'yaml', host_count: 3, content: YAML });
    const hosts = await h.http.get(`/v1/inventories/${inv.id}/hosts`).set(bearer(op.token));
    expect(hosts.body.map((x: { name: string }) => x.name)).toEqual(['web1', 'web2', 'web3']);
    const bad = await h.http
      .put(`/v1/inventories/${inv.id}`)
      .set(bearer(op.token))
      .send({ name: renamed, content: '[oops\n' });
    expectProblem(bad, 400, 'body.content');
    expect((await h.http.get(`/v1/inventories/${inv.id}`).set(bearer(op.token))).body).toMatchObject({
      content: YAML,
      host_count: 3,
    });
  });

  it('answers 409 for a duplicate name on create and on rename', async () => {
    const a = await create(h.admin.token);
    const b = await create(h.admin.token);
    expectProblem(
      await h.http.post('/v1/inventories').set(bearer(h.admin.token)).send({ name: a.name, content: INI }),
      409,
    );
    expectProblem(
      await h.http.put(`/v1/inventories/${b.id}`).set(bearer(h.admin.token)).send({ name: a.name, content: INI }),
      409,
    );
  });

  it('answers 404 for unknown ids and 400 for malformed ones on every route', async () => {
    const admin = bearer(h.admin.token);
    expectProblem(await h.http.get(`/v1/inventories/${UNKNOWN_INVENTORY}`).set(admin), 404);
    expectProblem(await h.http.get(`/v1/inventories/${UNKNOWN_INVENTORY}/hosts`).set(admin), 404);
    expectProblem(
      await h.http.put(`/v1/inventories/${UNKNOWN_INVENTORY}`).set(admin).send({ name: invName(), content: INI }),
      404,
    );
    expectProblem(await h.http.delete(`/v1/inventories/${UNKNOWN_INVENTORY}`).set(admin), 404);
    for (const bad of ['nope', 'team_01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      expectProblem(await h.http.get(`/v1/inventories/${bad}`).set(admin), 400, 'path.id');
      expectProblem(await h.http.delete(`/v1/inventories/${bad}`).set(admin), 400, 'path.id');
    }
  });

  it('deletes an inventory with its hosts and grants, and audits every change', async () => {
    const op = await h.user('operator');
    const inv = await create(op.token);
    expect(
      (await h.http.put(`/v1/inventories/${inv.id}`).set(bearer(op.token)).send({ name: inv.name, content: YAML }))
        .status,
    ).toBe(200);
    expect((await h.http.delete(`/v1/inventories/${inv.id}`).set(bearer(op.token))).status).toBe(204);
    expectProblem(await h.http.get(`/v1/inventories/${inv.id}`).set(bearer(op.token)), 404);
    expect(await h.tdb.db.repos.inventories.listHosts(inv.id, { limit: 10 })).toEqual([]);
    expect((await h.http.get(`/v1/grants?object=${inv.id}`).set(bearer(h.admin.token))).body).toEqual([]);
    const audit = await h.http.get(`/v1/audit?object=${inv.id}`).set(bearer(h.admin.token));
    expect(audit.body.map((e: { action: string }) => e.action)).toEqual([
      'inventory.delete',
      'inventory.update',
      'inventory.create',
    ]);
    for (const e of audit.body) expect(e.actor).toBe(op.id);
  });
});
