import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const UNKNOWN = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const unknownId = (prefix: string) => `${prefix}_${UNKNOWN}`;
const INI = 'web1 ansible_connection=local\n';
const INLINE = '- hosts: all\n  gather_facts: false\n  tasks: []\n';
let seq = 0;
const unique = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;

describe.each(DIALECTS)('approval policies on %s', (dialect) => {
  let h: Harness;
  let admin: Record<string, string>;
  let operator: Awaited<ReturnType<Harness['user']>>;
  let viewer: Awaited<ReturnType<Harness['user']>>;
  /** Existing objects a policy may name. */
  const ids: Record<'prj' | 'tpl' | 'inv' | 'usr' | 'team', string> = { prj: '', tpl: '', inv: '', usr: '', team: '' };

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = bearer(h.admin.token);
    operator = await h.user('operator');
    viewer = await h.user('viewer');
    const made = async (path: string, body: object) => {
      const res = await h.http.post(path).set(admin).send(body);
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    ids.inv = await made('/v1/inventories', { name: unique('inv'), content: INI });
    ids.tpl = await made('/v1/templates', {
      name: unique('tpl'),
      kind: 'run',
      spec: { playbook: INLINE, inventory_id: ids.inv },
    });
    ids.team = await made('/v1/teams', { name: unique('team') });
    ids.usr = operator.id;
    // A project row without git: the policy only needs the id to exist.
    const at = new Date().toISOString();
    ids.prj = `prj_${UNKNOWN.slice(0, 25)}P`;
    await h.tdb.db.repos.projects.insert({
      id: ids.prj,
      name: unique('prj'),
      git_url: 'https://git.example.invalid/ops/site.git',
      branch: 'main',
      credential_id: null,
      last_commit: null,
      synced_at: null,
      created_by: h.admin.id,
      created_at: at,
      updated_at: at,
    });
  });
  afterAll(() => h.close());

  const create = (body: object, as = admin) => h.http.post('/v1/policies').set(as).send(body);
  const created = async (body: object = {}) => {
    const res = await create({ name: unique('pol'), ...body });
    expect(res.status).toBe(201);
    return res.body as Record<string, unknown> & { id: string; name: string };
  };
  const auditOf = async (object: string) =>
    (await h.http.get(`/v1/audit?object=${object}`).set(admin)).body as Array<Record<string, string>>;

  it('creates, reads, lists, changes and deletes a policy (admin), each answer exactly what was stored', async () => {
    const body = {
      name: unique('prod gate ü'),
      description: 'production deploys need a second pair of eyes 👀',
      enabled: true,
      match: {
        projects: [ids.prj],
        templates: [ids.tpl],
        inventories: [ids.inv],
        playbooks: ['deploy/**', 'site-*.yml', '(inline)'],
        hosts: ['web-??.example.com', '[2001:db8::*]', 'bücher.*'],
        check: false,
        origins: ['api', 'schedule', 'trigger'],
        submitted_by_roles: ['operator', 'admin'],
        labels: ['eu', 'gpu'],
      },
      approvers: { roles: ['admin'], users: [ids.usr], teams: [ids.team] },
      min_approvals: 2,
      expires_after_s: 3600,
    };
    const res = await create(body);
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    expect(id).toMatch(/^pol_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.headers.location).toBe(`/v1/policies/${id}`);
    const expected = {
      ...body,
      id,
      created_by: h.admin.id,
      created_at: expect.any(String),
      updated_at: res.body.created_at,
    };
    expect(res.body).toEqual(expected);

    const got = await h.http.get(res.headers.location as string).set(admin);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const listed = await h.http.get('/v1/policies?limit=500').set(admin);
    expect(listed.body.find((p: { id: string }) => p.id === id)).toEqual(res.body);

    const put = await h.http
      .put(`/v1/policies/${id}`)
      .set(admin)
      .send({ enabled: false, match: { check: true }, min_approvals: 1 });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      ...res.body,
      enabled: false,
      match: { check: true },
      min_approvals: 1,
      updated_at: expect.any(String),
    });
    expect((await h.http.get(`/v1/policies/${id}`).set(admin)).body).toEqual(put.body);

    const del = await h.http.delete(`/v1/policies/${id}`).set(admin);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await h.http.get(`/v1/policies/${id}`).set(admin), 404);
    expectProblem(await h.http.delete(`/v1/policies/${id}`).set(admin), 404);
    expect(await h.tdb.db.repos.policies.findById(id)).toBeUndefined();
  });

  it('fills the defaults: enabled, empty match and approvers, one approval, no expiry, no description', async () => {
    const p = await created();
    expect(p).toMatchObject({
      enabled: true,
      match: {},
      approvers: {},
      min_approvals: 1,
      expires_after_s: null,
      description: null,
    });
    expect(await h.tdb.db.repos.policies.listEnabled()).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: p.id, enabled: 1 })]),
    );
  });

  it('PUT with null removes the expiry and the description; other fields stay', async () => {
    const p = await created({ description: 'd', expires_after_s: 600, min_approvals: 3 });
    const res = await h.http.put(`/v1/policies/${p.id}`).set(admin).send({ expires_after_s: null, description: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expires_after_s: null, description: null, min_approvals: 3, name: p.name });
    expect(await h.tdb.db.repos.policies.findById(p.id)).toMatchObject({ expires_after_s: null, description: null });
  });

  it('lets operators read every policy, and refuses them every change (403)', async () => {
    const p = await created();
    const as = bearer(operator.token);
    expect((await h.http.get(`/v1/policies/${p.id}`).set(as)).body).toEqual(p);
    const list = await h.http.get('/v1/policies?limit=500').set(as);
    expect(list.status).toBe(200);
    expect(list.body.map((x: { id: string }) => x.id)).toContain(p.id);
    expectProblem(await create({ name: unique('op') }, as), 403);
    expectProblem(await h.http.put(`/v1/policies/${p.id}`).set(as).send({ enabled: false }), 403);
    expectProblem(await h.http.delete(`/v1/policies/${p.id}`).set(as), 403);
    expect((await h.http.get(`/v1/policies/${p.id}`).set(admin)).body).toEqual(p);
  });

  it('refuses viewers everything (403) and callers without a token (401)', async () => {
    const p = await created();
    const as = bearer(viewer.token);
    expectProblem(await h.http.get('/v1/policies').set(as), 403);
    expectProblem(await h.http.get(`/v1/policies/${p.id}`).set(as), 403);
    expectProblem(await h.http.get(`/v1/policies/${unknownId('pol')}`).set(as), 403);
    expectProblem(await create({ name: unique('v') }, as), 403);
    expectProblem(await h.http.put(`/v1/policies/${p.id}`).set(as).send({ enabled: false }), 403);
    expectProblem(await h.http.delete(`/v1/policies/${p.id}`).set(as), 403);
    expectProblem(await h.http.get('/v1/policies'), 401);
    expectProblem(await h.http.post('/v1/policies').send({ name: unique('anon') }), 401);
    expect((await h.http.get(`/v1/policies/${p.id}`).set(admin)).body).toEqual(p);
  });

  it('answers 404 for an unknown policy on read, change and delete', async () => {
    const id = unknownId('pol');
    expectProblem(await h.http.get(`/v1/policies/${id}`).set(admin), 404);
    expectProblem(await h.http.get(`/v1/policies/${id}`).set(bearer(operator.token)), 404);
    expectProblem(await h.http.put(`/v1/policies/${id}`).set(admin).send({ enabled: false }), 404);
    expectProblem(await h.http.delete(`/v1/policies/${id}`).set(admin), 404);
    // Not a policy id at all: 400 at the path parameter.
    expectProblem(await h.http.get(`/v1/policies/${unknownId('tpl')}`).set(admin), 400, 'path.id');
  });

  it('answers 409 for a duplicate name (also after trimming and on rename) and keeps the first', async () => {
    const p = await created();
    const dup = await create({ name: p.name });
    expectProblem(dup, 409);
    expect(dup.body.detail).toContain(p.name);
    expectProblem(await create({ name: `  ${p.name} ` }), 409);
    const other = await created();
    expectProblem(await h.http.put(`/v1/policies/${other.id}`).set(admin).send({ name: p.name }), 409);
    expect((await h.http.get(`/v1/policies/${other.id}`).set(admin)).body).toEqual(other);
    const same = (await h.http.get('/v1/policies?limit=500').set(admin)).body.filter(
      (x: { name: string }) => x.name === p.name,
    );
    expect(same).toEqual([expect.objectContaining({ id: p.id })]);
  });

  it('lists newest first and pages with ?limit and the Link header', async () => {
    const older = await created();
    const newer = await created();
    const first = await h.http.get('/v1/policies?limit=1').set(admin);
    expect(first.body.map((x: { id: string }) => x.id)).toEqual([newer.id]);
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string);
    expect(link).not.toBeNull();
    const second = await h.http.get(`${link![1]!}`).set(admin);
    expect(second.body.map((x: { id: string }) => x.id)).toEqual([older.id]);
    expectProblem(await h.http.get('/v1/policies?cursor=%25%25').set(admin), 400);
    expectProblem(await h.http.get('/v1/policies?limit=0').set(admin), 400, 'query.limit');
  });

  it('is served without /v1 too, as an earlier edition (deprecated)', async () => {
    const p = await created();
    const res = await h.http.get(`/policies/${p.id}`).set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(p);
    expect(res.headers.deprecation).toBeDefined();
  });

  it.each<[string, object, string]>([
    ['no name', { name: undefined }, 'body.name'],
    ['a blank name', { name: '   ' }, 'body.name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'body.name'],
    ['a numeric name', { name: 7 }, 'body.name'],
    ['a name with a control character', { name: 'a\u0007b' }, 'body.name'],
    ['a description of 2001 characters', { description: 'd'.repeat(2001) }, 'body.description'],
    ['enabled as a string', { enabled: 'yes' }, 'body.enabled'],
    ['min_approvals 0', { min_approvals: 0 }, 'body.min_approvals'],
    ['min_approvals 11', { min_approvals: 11 }, 'body.min_approvals'],
    ['min_approvals 1.5', { min_approvals: 1.5 }, 'body.min_approvals'],
    ['min_approvals as a string', { min_approvals: '2' }, 'body.min_approvals'],
    ['expires_after_s 59', { expires_after_s: 59 }, 'body.expires_after_s'],
    ['expires_after_s 2592001', { expires_after_s: 2592001 }, 'body.expires_after_s'],
    ['expires_after_s null on create', { expires_after_s: null }, 'body.expires_after_s'],
    ['match as a list', { match: [] }, 'body.match'],
    ['an unknown match key', { match: { branches: ['main'] } }, 'body.match'],
    ['an unknown approvers key', { approvers: { groups: ['ops'] } }, 'body.approvers'],
    ['an unknown top-level key', { owner: 'me' }, 'body'],
    ['an empty project list', { match: { projects: [] } }, 'body.match.projects'],
    ['an empty host glob list', { match: { hosts: [] } }, 'body.match.hosts'],
    ['an empty approver user list', { approvers: { users: [] } }, 'body.approvers.users'],
    ['an empty glob', { match: { playbooks: [''] } }, 'body.match.playbooks.0'],
    ['a glob with a newline', { match: { hosts: ['web\n*'] } }, 'body.match.hosts.0'],
    ['a glob of 513 characters', { match: { hosts: ['h'.repeat(513)] } }, 'body.match.hosts.0'],
    ['101 globs', { match: { hosts: Array.from({ length: 101 }, (_, i) => `h${i}`) } }, 'body.match.hosts'],
    ['a project id of another kind', { match: { projects: [unknownId('inv')] } }, 'body.match.projects.0'],
    ['a malformed user id', { approvers: { users: ['alice'] } }, 'body.approvers.users.0'],
    ['an unknown origin', { match: { origins: ['cron'] } }, 'body.match.origins.0'],
    ['an unknown role', { approvers: { roles: ['root'] } }, 'body.approvers.roles.0'],
    ['an unknown submitter role', { match: { submitted_by_roles: ['owner'] } }, 'body.match.submitted_by_roles.0'],
    ['check as a string', { match: { check: 'true' } }, 'body.match.check'],
    ['a bad worker label', { match: { labels: ['-x'] } }, 'body.match.labels.0'],
  ])('refuses creating a policy with %s: 400 at the field', async (_what, body, path) => {
    const name = unique('bad');
    const res = await create({ name, ...body });
    expectProblem(res, 400, path);
    const all = (await h.http.get('/v1/policies?limit=500').set(admin)).body as Array<{ name: string }>;
    expect(all.map((p) => p.name)).not.toContain(name);
  });

  it('refuses bad changes with a 400 at the field and changes nothing', async () => {
    const p = await created();
    const put = (body: object) => h.http.put(`/v1/policies/${p.id}`).set(admin).send(body);
    expectProblem(await put({}), 400, 'body');
    expectProblem(await put({ min_approvals: 0 }), 400, 'body.min_approvals');
    expectProblem(await put({ expires_after_s: 2592001 }), 400, 'body.expires_after_s');
    expectProblem(await put({ name: null }), 400, 'body.name');
    expectProblem(await put({ enabled: null }), 400, 'body.enabled');
    expectProblem(await put({ match: { hosts: [] } }), 400, 'body.match.hosts');
    expectProblem(await put({ created_by: h.admin.id }), 400, 'body');
    expect((await h.http.get(`/v1/policies/${p.id}`).set(admin)).body).toEqual(p);
  });

  it('refuses text that is not well-formed Unicode: 400, nothing stored', async () => {
    const raw = (method: 'post' | 'put', url: string, text: string) =>
      h.http[method](url)
        .set(admin)
        .set('Content-Type', 'application/json')
        .serialize((b: unknown) => b as string)
        .send(text);
    expectProblem(await raw('post', '/v1/policies', '{"name":"a\\ud800"}'), 400, 'body.name');
    expectProblem(
      await raw('post', '/v1/policies', '{"name":"ok","match":{"hosts":["web\\udc00"]}}'),
      400,
      'body.match.hosts.0',
    );
    const p = await created();
    expectProblem(
      await raw('put', `/v1/policies/${p.id}`, '{"description":"\\udfff\\ud800"}'),
      400,
      'body.description',
    );
    expect((await h.http.get(`/v1/policies/${p.id}`).set(admin)).body).toEqual(p);
    expect((await h.http.get('/v1/audit/verify').set(admin)).body).toMatchObject({ ok: true });
  });

  it('answers 422 naming each referenced id that does not exist, at its exact place', async () => {
    const body = {
      name: unique('refs'),
      match: {
        projects: [ids.prj, unknownId('prj')],
        templates: [unknownId('tpl')],
        inventories: [ids.inv, ids.inv, unknownId('inv')],
      },
      approvers: { users: [ids.usr, unknownId('usr')], teams: [unknownId('team'), ids.team] },
    };
    const res = await create(body);
    expectProblem(res, 422);
    expect(res.body.errors).toEqual([
      { path: 'body.match.projects.1', message: `no project ${unknownId('prj')}` },
      { path: 'body.match.templates.0', message: `no template ${unknownId('tpl')}` },
      { path: 'body.match.inventories.2', message: `no inventory ${unknownId('inv')}` },
      { path: 'body.approvers.users.1', message: `no user ${unknownId('usr')}` },
      { path: 'body.approvers.teams.0', message: `no team ${unknownId('team')}` },
    ]);
    const all = (await h.http.get('/v1/policies?limit=500').set(admin)).body as Array<{ name: string }>;
    expect(all.map((p) => p.name)).not.toContain(body.name);

    const p = await created();
    const put = await h.http
      .put(`/v1/policies/${p.id}`)
      .set(admin)
      .send({ approvers: { users: [unknownId('usr')] } });
    expectProblem(put, 422, 'body.approvers.users.0');
    expect((await h.http.get(`/v1/policies/${p.id}`).set(admin)).body).toEqual(p);
  });

  it('audits each change, naming the policy, and the chain still verifies', async () => {
    const p = await created();
    const renamed = unique('renamed');
    expect((await h.http.put(`/v1/policies/${p.id}`).set(admin).send({ name: renamed, min_approvals: 2 })).status).toBe(
      200,
    );
    expect((await h.http.delete(`/v1/policies/${p.id}`).set(admin)).status).toBe(204);
    const entries = await auditOf(p.id);
    expect(entries.map((e) => e.action)).toEqual(['policy.delete', 'policy.update', 'policy.create']);
    for (const e of entries) expect(e.actor).toBe(h.admin.id);
    const [deleted, updated, made] = entries as [
      Record<string, string>,
      Record<string, string>,
      Record<string, string>,
    ];
    expect(made.summary).toContain(p.name);
    expect(updated.summary).toContain(renamed);
    expect(updated.summary).toContain(p.name);
    expect(updated.summary).toContain('min_approvals');
    expect(deleted.summary).toContain(renamed);
    expect((await h.http.get('/v1/audit/verify').set(admin)).body).toMatchObject({ ok: true });
  });

  it('refused changes leave no audit entry', async () => {
    const p = await created();
    await h.http.put(`/v1/policies/${p.id}`).set(bearer(operator.token)).send({ enabled: false });
    await h.http
      .put(`/v1/policies/${p.id}`)
      .set(admin)
      .send({ match: { projects: [unknownId('prj')] } });
    await h.http.delete(`/v1/policies/${p.id}`).set(bearer(viewer.token));
    expect((await auditOf(p.id)).map((e) => e.action)).toEqual(['policy.create']);
  });
});
