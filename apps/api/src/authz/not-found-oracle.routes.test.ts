// Issue 10 item 8: a 404 must not tell an unknown id from an object the caller may not see. For every object kind
// and every operation that takes an id (in the path, the query or the body), the whole answer to "unknown id" and to
// "exists, but invisible to this caller" must be the same, apart from the id itself and the request id.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newId } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import fs from 'node:fs';
import type { Response } from 'supertest';
import { bearer, createHarness, expectProblem, type Harness } from '../testing/harness.js';

const PLAYBOOK = '- hosts: all\n  gather_facts: false\n  tasks: []\n';
const INI = '[web]\nweb1\n';
let seq = 0;
const unique = (stem: string) => `${stem} ${++seq} ${Date.now().toString(36)}`;

type Kind = 'inv' | 'prj' | 'cred' | 'src' | 'run' | 'grant';
type Caller = 'operator' | 'viewer';
/** What the caller's own objects are (for operations that reference the object under test from the body). */
interface Own {
  inv: string;
  prj: string;
}
/** One operation: sends the request with `id` where the object under test goes. */
type Operation = [
  name: string,
  kind: Kind,
  send: (h: Harness, token: string, id: string, own: Own) => Promise<Response>,
];

const OPERATIONS: Operation[] = [
  ['GET /inventories/{id}', 'inv', (h, t, id) => h.http.get(`/v1/inventories/${id}`).set(bearer(t))],
  ['GET /inventories/{id}/hosts', 'inv', (h, t, id) => h.http.get(`/v1/inventories/${id}/hosts`).set(bearer(t))],
  [
    'PUT /inventories/{id}',
    'inv',
    (h, t, id) =>
      h.http
        .put(`/v1/inventories/${id}`)
        .set(bearer(t))
        .send({ name: unique('inv'), content: INI }),
  ],
  ['DELETE /inventories/{id}', 'inv', (h, t, id) => h.http.delete(`/v1/inventories/${id}`).set(bearer(t))],
  [
    'POST /runs inventory_id',
    'inv',
    (h, t, id) => h.http.post('/v1/runs').set(bearer(t)).send({ playbook: PLAYBOOK, inventory_id: id }),
  ],
  [
    'POST /inventory-sources inventory_id',
    'inv',
    (h, t, id, own) =>
      h.http
        .post('/v1/inventory-sources')
        .set(bearer(t))
        .send({ name: unique('src'), kind: 'script', inventory_id: id, project_id: own.prj, path: 'inv.py' }),
  ],
  ['GET /runs?inventory=', 'inv', (h, t, id) => h.http.get(`/v1/runs?inventory=${id}`).set(bearer(t))],

  ['GET /projects/{id}', 'prj', (h, t, id) => h.http.get(`/v1/projects/${id}`).set(bearer(t))],
  [
    'PUT /projects/{id}',
    'prj',
    (h, t, id) =>
      h.http
        .put(`/v1/projects/${id}`)
        .set(bearer(t))
        .send({ name: unique('prj') }),
  ],
  ['DELETE /projects/{id}', 'prj', (h, t, id) => h.http.delete(`/v1/projects/${id}`).set(bearer(t))],
  ['POST /projects/{id}/sync', 'prj', (h, t, id) => h.http.post(`/v1/projects/${id}/sync`).set(bearer(t))],
  [
    'POST /runs project_id',
    'prj',
    (h, t, id) => h.http.post('/v1/runs').set(bearer(t)).send({ playbook: 'site.yml', project_id: id, inventory: INI }),
  ],
  [
    'POST /inventory-sources project_id',
    'prj',
    (h, t, id, own) =>
      h.http
        .post('/v1/inventory-sources')
        .set(bearer(t))
        .send({ name: unique('src'), kind: 'script', inventory_id: own.inv, project_id: id, path: 'inv.py' }),
  ],
  ['GET /runs?project=', 'prj', (h, t, id) => h.http.get(`/v1/runs?project=${id}`).set(bearer(t))],

  ['GET /credentials/{id}', 'cred', (h, t, id) => h.http.get(`/v1/credentials/${id}`).set(bearer(t))],
  [
    'PUT /credentials/{id}',
    'cred',
    (h, t, id) =>
      h.http
        .put(`/v1/credentials/${id}`)
        .set(bearer(t))
        .send({ name: unique('cred') }),
  ],
  ['DELETE /credentials/{id}', 'cred', (h, t, id) => h.http.delete(`/v1/credentials/${id}`).set(bearer(t))],
  [
    'POST /runs credential_ids',
    'cred',
    (h, t, id) =>
      h.http
        .post('/v1/runs')
        .set(bearer(t))
        .send({ playbook: PLAYBOOK, inventory: INI, credential_ids: [id] }),
  ],
  [
    'POST /projects credential_id',
    'cred',
    (h, t, id) =>
      h.http
        .post('/v1/projects')
        .set(bearer(t))
        .send({ name: unique('prj'), git_url: 'file:///nonexistent/repo', credential_id: id }),
  ],
  [
    'PUT /projects/{own} credential_id',
    'cred',
    (h, t, id, own) => h.http.put(`/v1/projects/${own.prj}`).set(bearer(t)).send({ credential_id: id }),
  ],
  [
    'POST /inventory-sources credential_id',
    'cred',
    (h, t, id, own) =>
      h.http
        .post('/v1/inventory-sources')
        .set(bearer(t))
        .send({
          name: unique('src'),
          kind: 'url',
          inventory_id: own.inv,
          url: 'https://cmdb.example.com/inventory',
          credential_id: id,
        }),
  ],

  ['GET /inventory-sources/{id}', 'src', (h, t, id) => h.http.get(`/v1/inventory-sources/${id}`).set(bearer(t))],
  [
    'PUT /inventory-sources/{id}',
    'src',
    (h, t, id, own) =>
      h.http
        .put(`/v1/inventory-sources/${id}`)
        .set(bearer(t))
        .send({ name: unique('src'), kind: 'script', inventory_id: own.inv, project_id: own.prj, path: 'inv.py' }),
  ],
  ['DELETE /inventory-sources/{id}', 'src', (h, t, id) => h.http.delete(`/v1/inventory-sources/${id}`).set(bearer(t))],
  [
    'POST /inventory-sources/{id}/refresh',
    'src',
    (h, t, id) => h.http.post(`/v1/inventory-sources/${id}/refresh`).set(bearer(t)),
  ],

  ['GET /runs/{id}', 'run', (h, t, id) => h.http.get(`/v1/runs/${id}`).set(bearer(t))],
  ['GET /runs/{id}/shards', 'run', (h, t, id) => h.http.get(`/v1/runs/${id}/shards`).set(bearer(t))],
  ['GET /runs/{id}/steps', 'run', (h, t, id) => h.http.get(`/v1/runs/${id}/steps`).set(bearer(t))],
  ['GET /runs/{id}/events', 'run', (h, t, id) => h.http.get(`/v1/runs/${id}/events`).set(bearer(t))],
  ['GET /runs/{id}/logs', 'run', (h, t, id) => h.http.get(`/v1/runs/${id}/logs`).set(bearer(t))],
  [
    'GET /runs/{id}/logs by lines',
    'run',
    (h, t, id) => h.http.get(`/v1/runs/${id}/logs?offset=0&limit=5`).set(bearer(t)),
  ],
  [
    'GET /runs/{id}/logs with Range',
    'run',
    (h, t, id) => h.http.get(`/v1/runs/${id}/logs`).set(bearer(t)).set('Range', 'bytes=0-9'),
  ],
  // The owner's run is finished, so even a stream that wrongly opened would end at once instead of hanging.
  ['GET /runs/{id}/stream', 'run', (h, t, id) => h.http.get(`/v1/runs/${id}/stream`).set(bearer(t))],
  ['POST /runs/{id}/cancel', 'run', (h, t, id) => h.http.post(`/v1/runs/${id}/cancel`).set(bearer(t))],
  ['POST /runs/{id}/retry', 'run', (h, t, id) => h.http.post(`/v1/runs/${id}/retry`).set(bearer(t))],

  ['GET /grants/{id}', 'grant', (h, t, id) => h.http.get(`/v1/grants/${id}`).set(bearer(t))],
  ['DELETE /grants/{id}', 'grant', (h, t, id) => h.http.delete(`/v1/grants/${id}`).set(bearer(t))],
];

/** POST /v1/grants and the grant list name an object of any grantable kind. */
const GRANTED_KINDS: Array<Exclude<Kind, 'run' | 'grant'>> = ['inv', 'prj', 'cred', 'src'];
for (const kind of GRANTED_KINDS) {
  OPERATIONS.push(
    [
      `POST /grants object ${kind}_…`,
      kind,
      (h, t, id) => h.http.post('/v1/grants').set(bearer(t)).send({ subject: h.admin.id, object: id, level: 'use' }),
    ],
    [`GET /grants?object=${kind}_…`, kind, (h, t, id) => h.http.get(`/v1/grants?object=${id}`).set(bearer(t))],
  );
}

/** The whole answer with the id and the request id taken out: what a prober could compare. */
function observed(res: Response, id: string) {
  const { request_id: _requestId, ...body } = (res.body ?? {}) as Record<string, unknown>;
  const text = JSON.stringify({
    status: res.status,
    type: res.headers['content-type'],
    body,
    text: res.body && Object.keys(res.body).length ? '' : res.text,
  });
  return JSON.parse(text.replaceAll(id, '<id>')) as unknown;
}

describe.each(DIALECTS)('unknown and invisible objects answer alike on %s', (dialect) => {
  let h: Harness;
  const root = tempDir(`baton-oracle-${dialect}`);
  const repo = createRepo(root);
  /** Objects of another operator, which the callers hold no grant on; `grant` is that operator's grant on `inv`. */
  const hidden = {} as Record<Kind, string>;
  const callers = {} as Record<Caller, { token: string; own: Own }>;

  const ok = async (res: Promise<Response>, status = 201): Promise<Response> => {
    const r = await res;
    expect(r.status).toBe(status);
    return r;
  };
  const createInventory = async (token: string) =>
    (
      await ok(
        h.http
          .post('/v1/inventories')
          .set(bearer(token))
          .send({ name: unique('inv'), content: INI }),
      )
    ).body.id as string;
  const createProject = async (token: string) =>
    (
      await ok(
        h.http
          .post('/v1/projects')
          .set(bearer(token))
          .send({ name: unique('prj'), git_url: repo.url }),
      )
    ).body.id as string;

  beforeAll(async () => {
    h = await createHarness(dialect);
    const owner = await h.user('operator');
    hidden.inv = await createInventory(owner.token);
    hidden.prj = await createProject(owner.token);
    hidden.cred = (
      await ok(
        h.http
          .post('/v1/credentials')
          .set(bearer(owner.token))
          .send({ name: unique('cred'), type: 'token', inputs: { token: 'hidden-token' } }),
      )
    ).body.id;
    hidden.src = (
      await ok(
        h.http
          .post('/v1/inventory-sources')
          .set(bearer(owner.token))
          .send({
            name: unique('src'),
            kind: 'script',
            inventory_id: hidden.inv,
            project_id: hidden.prj,
            path: 'inv.py',
          }),
      )
    ).body.id;
    hidden.run = (
      await ok(h.http.post('/v1/runs').set(bearer(owner.token)).send({ playbook: PLAYBOOK, inventory_id: hidden.inv }))
    ).body.id;
    // Finished (no executor runs here), so a stream, cancel or retry that wrongly went ahead would answer at once.
    expect(
      await h.tdb.db.repos.runs.transition(hidden.run, ['pending'], {
        status: 'finished',
        conclusion: 'succeeded',
        finished_at: new Date().toISOString(),
      }),
    ).toBe(true);
    hidden.grant = (await ok(h.http.get(`/v1/grants?object=${hidden.inv}`).set(bearer(owner.token)), 200)).body[0].id;

    // Each caller may use an inventory and a project of their own, made by an admin, so body references get that far.
    for (const role of ['operator', 'viewer'] as const) {
      const caller = await h.user(role);
      const own = { inv: await createInventory(h.admin.token), prj: await createProject(h.admin.token) };
      for (const object of Object.values(own))
        await ok(
          h.http.post('/v1/grants').set(bearer(h.admin.token)).send({ subject: caller.id, object, level: 'manage' }),
        );
      callers[role] = { token: caller.token, own };
    }
  });
  afterAll(async () => {
    await h.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe.each<Caller>(['operator', 'viewer'])('to an %s without grants', (who) => {
    it.each(OPERATIONS)('%s', async (name, kind, send) => {
      const { token, own } = callers[who];
      const unknownId = newId(kind);
      const unknown = await send(h, token, unknownId, own);
      const invisible = await send(h, token, hidden[kind], own);
      expect(observed(invisible, hidden[kind])).toEqual(observed(unknown, unknownId));
      // A refusal (a list: an empty one), never a 5xx.
      if (name.includes('?')) expect([unknown.status, unknown.body]).toEqual([200, []]);
      else expect(unknown.status).toBeGreaterThanOrEqual(400);
      expect(unknown.status).toBeLessThan(500);
    });
  });

  it('a 404 names the kind asked for and the id, in the same words whether the object exists or not', async () => {
    const { token } = callers.operator;
    for (const [path, kind, words] of [
      ['inventories', 'inv', 'inventory'],
      ['inventory-sources', 'src', 'inventory source'],
      ['projects', 'prj', 'project'],
      ['credentials', 'cred', 'credential'],
      ['runs', 'run', 'run'],
      ['grants', 'grant', 'grant'],
    ] as const) {
      const res = await h.http.get(`/v1/${path}/${hidden[kind]}`).set(bearer(token));
      expectProblem(res, 404);
      expect(res.body.detail).toBe(`${words} ${hidden[kind]} not found`);
    }
  });

  it('an object the caller sees but may not change answers 403, not 404', async () => {
    const reader = await h.user('operator');
    for (const kind of GRANTED_KINDS)
      await ok(
        h.http
          .post('/v1/grants')
          .set(bearer(h.admin.token))
          .send({ subject: reader.id, object: hidden[kind], level: 'use' }),
      );
    const changes = OPERATIONS.filter(
      ([name, kind]) =>
        (name.startsWith('PUT /') || name.startsWith('DELETE /')) &&
        GRANTED_KINDS.includes(kind as (typeof GRANTED_KINDS)[number]) &&
        !name.includes('{own}'),
    );
    expect(changes.length).toBe(8);
    for (const [name, kind, send] of changes) {
      const res = await send(h, reader.token, hidden[kind], callers.operator.own);
      expect([name, res.status]).toEqual([name, 403]);
    }
    // A grant is visible to its subject, who may still not revoke it without managing its object.
    const held = (
      await ok(h.http.get(`/v1/grants?subject=${reader.id}&object=${hidden.inv}`).set(bearer(reader.token)), 200)
    ).body[0].id as string;
    expectProblem(await h.http.delete(`/v1/grants/${held}`).set(bearer(reader.token)), 403);
  });
});
